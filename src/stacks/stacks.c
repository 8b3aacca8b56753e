/* stacks.c - perf events of the uprobe PMU on the rare probe sites, with
 * user registers and stack copies, read beside the tracer (stacks.h).
 *
 * Each site gets one event per CPU (perf_event_open(2): type from
 * /sys/bus/event_source/devices/uprobe/type, config1 the libc's path,
 * config2 the site's offset in the file, pid -1).  The events of a CPU
 * share one ring (PERF_EVENT_IOC_SET_OUTPUT onto the first); a sample
 * (sample_type IDENTIFIER TID TIME REGS_USER STACK_USER) is laid out as
 *
 *	u64 id; u32 pid, tid; u64 time;
 *	u64 abi; u64 regs[17];			(MW_UNWIND_REGMASK's bits)
 *	u64 size; char stack[size]; u64 dyn_size;
 *
 * and the site is found by id (PERF_EVENT_IOC_ID); the rings are read in
 * stacks_ring.c.  A site's file offset
 * is its link-time address in the PT_LOAD segment that holds it, less
 * the segment's p_vaddr, plus its p_offset.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "clock.h"
#include "probetab.h"
#include "sdtnote.h"
#include "stacks_int.h"
#include "xalloc.h"

/* The reader is woken every WAKEUP_EVENTS samples (or READ_MS): a
 * wake-up per sample cost the traced program ~15 us a stacked hit here
 * (bench/stacks.sh); the side-band records keep each sample's module map
 * however late it is read. */
#define WAKEUP_EVENTS 16
#define READ_MS 50

int mw_stacks_probe_stacked(int id)
{
	const struct mw_probe_info *pi = mw_probe_info(id);

	if (!pi || strcmp(pi->provider, "libc") != 0)
		return 0;
	if (id == MW_P_memory_sbrk_more)
		return 1;
	return pi->mode == MW_MODE_STREAM && pi->family != MW_FAM_TUNABLE;
}

/* memory_heap_more's sample period: MW_STACKS_HEAP_PERIOD in the
 * environment, else MW_STACKS_HEAP_PERIOD_DEFAULT (stacks.h). */
static unsigned long mw_stacks_heap_period(void)
{
	const char *v = getenv("MW_STACKS_HEAP_PERIOD");
	char *end;
	unsigned long p;

	if (!v || !*v)
		return MW_STACKS_HEAP_PERIOD_DEFAULT;
	p = strtoul(v, &end, 10);
	return *end || v[0] == '-' || p > 1000000 ? MW_STACKS_HEAP_PERIOD_DEFAULT : p;
}

/* Is id a probe --stacks takes stacks of: a rare one, or memory_heap_more
 * (sampled) when its period is not 0?  1 or 0. */
static int mw_stacks_probe_taken(int id)
{
	return mw_stacks_probe_stacked(id) ||
	       (id == MW_P_memory_heap_more && mw_stacks_heap_period() > 0);
}

static int uprobe_type(char *err, size_t errlen)
{
	const char *path = "/sys/bus/event_source/devices/uprobe/type";
	FILE *f = fopen(path, "re");
	int type = -1;

	if (!f || fscanf(f, "%d", &type) != 1)
		snprintf(err, errlen, "the kernel has no uprobe PMU ('%s' unreadable)", path);
	if (f)
		fclose(f);
	return type;
}

/* The file offset of link-time address pc (a PT_LOAD of elf), or -1. */
static int64_t file_offset(Elf *elf, uint64_t pc)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    pc >= ph.p_vaddr && pc - ph.p_vaddr < ph.p_filesz)
			return (int64_t)(pc - ph.p_vaddr + ph.p_offset);
	return -1;
}

/* The end of elf's last PT_LOAD (p_vaddr + p_memsz). */
static uint64_t load_span(Elf *elf)
{
	size_t n;
	GElf_Phdr ph;
	uint64_t end = 0;

	if (elf_getphdrnum(elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_vaddr + ph.p_memsz > end)
			end = ph.p_vaddr + ph.p_memsz;
	return end;
}

/* The rare sites of libc_path into s->sites.  0, or -1 with err. */
static int read_sites(struct mw_stacks *s, const char *libc_path, char *err, size_t errlen)
{
	struct mw_elf *e = mw_elf_open(libc_path, err, errlen);
	char why[128];
	Elf *elf = NULL;
	int fd = -1, rc = -1;

	if (!e)
		return -1;
	elf_version(EV_CURRENT);
	if ((fd = open(libc_path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    !(elf = elf_begin(fd, ELF_C_READ, NULL))) {
		snprintf(err, errlen, "cannot read '%s'", libc_path);
		goto out;
	}
	for (size_t i = 0; i < mw_elf_nsites(e); i++) {
		const struct mw_sdt_site *site = mw_elf_site(e, i);
		int id = mw_probe_lookup(site->name);
		int64_t off;
		struct stk_site *t;

		if (strcmp(site->provider, "libc") != 0 || !mw_stacks_probe_taken(id) ||
		    (off = file_offset(elf, site->pc)) < 0)
			continue;
		XGROW(s->sites, s->nsites + 1, s->csites);
		t = &s->sites[s->nsites++];
		memset(t, 0, sizeof(*t));
		t->probe = id;
		t->offset = (uint64_t)off;
		t->pc = site->pc;
		t->period = mw_stacks_probe_stacked(id) ? 1 : mw_stacks_heap_period();
		t->nargs = mw_sdt_args_parse(site->args, t->args, 3, why, sizeof(why));
		if (t->nargs < 0)
			t->nargs = 0;	/* the stack alone */
	}
	s->st.heap_period = mw_stacks_heap_period();
	s->libc_span = load_span(elf);
	if (s->nsites == 0)
		snprintf(err, errlen, "'%s' has no probe site to take stacks at", libc_path);
	else
		rc = 0;
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	mw_elf_close(e);
	return rc;
}

/* One site's event on cpu (a sample every site->period hits: the kernel
 * only counts the others); lead: the first of its ring, which also
 * carries the side-band records of the processes' maps (stacks_live.c;
 * -1 EINVAL from a kernel without build-ids in them: then without). */
static int open_event(struct mw_stacks *s, int type, const char *path,
		      const struct stk_site *site, int cpu, int lead)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = (uint32_t)type,
		.config1 = (uint64_t)(uintptr_t)path, .config2 = site->offset,
		.sample_period = site->period, .wakeup_events = WAKEUP_EVENTS,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = MW_UNWIND_REGMASK,
		.sample_stack_user = MW_STACK_COPY,
		.use_clockid = 1, .clockid = CLOCK_MONOTONIC,
	};
	int fd;

	if (lead && s->sideband) {
		a.mmap = a.mmap2 = a.build_id = a.comm = a.comm_exec = a.sample_id_all = 1;
		fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0 || errno != EINVAL)
			return fd;
		s->sideband = 0;
		a.mmap = a.mmap2 = a.build_id = a.comm = a.comm_exec = a.sample_id_all = 0;
	}
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Every site's event on every CPU, one ring per CPU.  0, or -1 with err. */
static int open_events(struct mw_stacks *s, const char *path, char *err, size_t errlen)
{
	long pg = sysconf(_SC_PAGESIZE);
	int type = uprobe_type(err, errlen);

	if (type < 0)
		return -1;
	s->fds = xmalloc(s->nsites * (size_t)s->ncpus * sizeof(int));
	s->ids = xcalloc(s->nsites * (size_t)s->ncpus, sizeof(uint64_t));
	memset(s->fds, -1, s->nsites * (size_t)s->ncpus * sizeof(int));
	for (int c = 0; c < s->ncpus; c++) {
		int lead = -1;

		for (size_t i = 0; i < s->nsites; i++) {
			int fd = open_event(s, type, path, &s->sites[i], c, lead < 0);

			s->fds[(size_t)c * s->nsites + i] = fd;
			if (fd < 0 && errno == ENODEV)
				break;	/* an offline CPU */
			if (fd < 0) {
				snprintf(err, errlen, "cannot open a uprobe perf event on '%s': %s",
					 path, strerror(errno));
				return -1;
			}
			ioctl(fd, PERF_EVENT_IOC_ID, &s->ids[(size_t)c * s->nsites + i]);
			if (lead < 0) {
				lead = fd;
				s->rings[c] = mmap(NULL, (size_t)pg * (RING_PAGES + 1),
						   PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
				if (s->rings[c] == MAP_FAILED) {
					s->rings[c] = NULL;
					snprintf(err, errlen, "cannot map a perf ring: %s",
						 strerror(errno));
					return -1;
				}
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, lead) != 0) {
				snprintf(err, errlen, "cannot share a perf ring: %s",
					 strerror(errno));
				return -1;
			}
		}
		if (lead >= 0)
			s->st.cpus++;
	}
	s->st.sites = s->nsites;
	return 0;
}

/* The reader: wakes every WAKEUP_EVENTS samples or READ_MS. */
static void *reader(void *arg)
{
	struct mw_stacks *s = arg;
	struct pollfd *p = xcalloc((size_t)s->ncpus + 1, sizeof(*p));
	int n = 0;

	for (int c = 0; c < s->ncpus; c++)
		if (s->rings[c])
			p[n++] = (struct pollfd){ .fd = s->fds[(size_t)c * s->nsites],
						  .events = POLLIN };
	p[n] = (struct pollfd){ .fd = s->stop_pipe[0], .events = POLLIN };
	for (;;) {
		int r = poll(p, (nfds_t)n + 1, READ_MS);

		stk_drain(s, 0);
		if (r > 0 && p[n].revents)
			break;
	}
	free(p);
	return NULL;
}

struct mw_stacks *mw_stacks_start(const char *libc_path, char *err, size_t errlen)
{
	struct mw_stacks *s = xcalloc(1, sizeof(*s));
	sigset_t all, old;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	s->ncpus = ncpu > 0 ? (int)ncpu : 1;
	s->rings = xcalloc((size_t)s->ncpus, sizeof(void *));
	s->sideband = 1;
	s->stop_pipe[0] = s->stop_pipe[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	s->libc_path = xstrdup(libc_path);
	if (read_sites(s, libc_path, err, errlen) < 0 ||
	    open_events(s, libc_path, err, errlen) < 0)
		goto fail;
	s->rec = xmalloc(65536);
	if (pipe2(s->stop_pipe, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	/* the reader takes no signal: mallocwatch's handlers run in main's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->running = pthread_create(&s->reader, NULL, reader, s) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->running) {
		snprintf(err, errlen, "cannot start the stack reader");
		goto fail;
	}
	return s;
fail:
	mw_stacks_free(s);
	return NULL;
}

void mw_stacks_watch(struct mw_stacks *s, pid_t pid)
{
	pthread_mutex_lock(&s->lock);
	XGROW(s->watch, s->nwatch + 1, s->cwatch);
	s->watch[s->nwatch++] = pid;
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			s->procs[i].watched = 1;
	if (!s->saved)
		stk_proc_prime(s, pid);
	pthread_mutex_unlock(&s->lock);
}

void mw_stacks_sync(struct mw_stacks *s)
{
	if (s && s->running)
		stk_drain(s, 0);
}

void mw_stacks_stop(struct mw_stacks *s)
{
	if (!s)
		return;
	if (s->running) {
		(void)!write(s->stop_pipe[1], "", 1);
		pthread_join(s->reader, NULL);
		s->running = 0;
	}
	for (size_t i = 0; s->fds && i < s->nsites * (size_t)s->ncpus; i++)
		if (s->fds[i] >= 0)
			ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	stk_drain(s, 1);
}

/* Was e read after its process exec'd (no image, or the libc alone)? */
static int stale(struct mw_stacks *s, const struct mw_stack_event *e)
{
	struct stk_proc *p = stk_proc_find(s, e->pid);

	return e->image < 0 || !p || (size_t)e->image >= p->nimg ||
	       p->img[e->image].libc_only;
}

void mw_stacks_only(struct mw_stacks *s, pid_t pid)
{
	mw_stacks_only_set(s, &pid, 1);
}

static int in_set(pid_t pid, const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

void mw_stacks_only_set(struct mw_stacks *s, const pid_t *pids, size_t np)
{
	size_t n = 0;

	s->st.unwound = s->st.stale = 0;
	for (size_t i = 0; i < s->nev; i++)
		if (in_set(s->ev[i].pid, pids, np)) {
			s->st.unwound += s->ev[i].npcs > 1;
			s->st.stale += stale(s, &s->ev[i]);
			s->ev[n++] = s->ev[i];
		} else
			s->st.foreign++;
	s->st.samples -= s->nev - n;
	s->nev = n;
}

size_t mw_stacks_count(const struct mw_stacks *s)
{
	return s->nev;
}

const struct mw_stack_event *mw_stacks_event(const struct mw_stacks *s, size_t i)
{
	return &s->ev[i];
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* What the module map alone says of f->pc: the file mapping that holds
 * it, its build-id and the pc's offset in the file. */
static void from_map(struct stk_image *im, struct mw_frame *f)
{
	uint64_t at = f->pc;

	stk_image_map(im);
	for (size_t i = 0; i < im->nmap; i++) {
		const struct stk_map *m = &im->map[i];

		if (at < m->start || at >= m->end)
			continue;
		if (!f->module[0])
			snprintf(f->module, sizeof(f->module), "%s", base_name(m->path));
		if (!f->build_id[0])
			snprintf(f->build_id, sizeof(f->build_id), "%s", m->build_id);
		if (!f->function[0])
			f->offset = at - m->start + m->offset;
		return;
	}
}

void mw_stacks_frame(struct mw_stacks *s, const struct mw_stack_event *e, int i,
		     struct mw_frame *f)
{
	struct stk_proc *p = stk_proc_find(s, e->pid);
	struct stk_image *im = p && e->image >= 0 && (size_t)e->image < p->nimg ?
			       &p->img[e->image] : NULL;

	memset(f, 0, sizeof(*f));
	f->pc = e->pcs[i];
	if (!im)
		return;	/* no module map is known for it */
	if (s->saved)
		stk_image_load(p, im, s->search_dir);
	if (im->u)
		mw_unwind_symbolize(im->u, e->pcs[i], i == 0, f);
	if (!f->function[0] || !f->build_id[0])
		from_map(im, f);
}

void mw_stacks_get_stats(const struct mw_stacks *s, struct mw_stacks_stats *st)
{
	*st = s->st;
	st->unwind_us = s->st.samples ? s->unwind_us_sum / (double)s->st.samples : 0;
}

void mw_stacks_get_stats_of(struct mw_stacks *s, pid_t pid, struct mw_stacks_stats *st)
{
	mw_stacks_get_stats(s, st);
	if (!pid)
		return;
	st->samples = st->unwound = st->stale = 0;
	for (size_t i = 0; i < s->nev; i++)
		if (s->ev[i].pid == pid) {
			st->samples++;
			st->unwound += s->ev[i].npcs > 1;
			st->stale += stale(s, &s->ev[i]);
		}
}

/* Closing a uprobe perf event waits for the kernel to remove its uprobe:
 * about 0.2 s each here (60 events: 13 s, measured with strace -T).  A
 * grandchild, orphaned at once, holds the events, closes every other
 * descriptor (a pipe on our stdout must not wait for it) and exits: the
 * removals go on there while the report is written.  Our copies then
 * close at once.  Without a fork the closes happen here. */
static void close_behind(struct mw_stacks *s)
{
	size_t n = s->nsites * (size_t)s->ncpus;
	pid_t child = fork();

	if (child == 0) {
		if (fork() == 0) {
			DIR *d = opendir("/proc/self/fd");
			struct dirent *de;
			int keep;

			setsid();
			while (d && (de = readdir(d))) {
				int fd = atoi(de->d_name);

				keep = de->d_name[0] < '0' || de->d_name[0] > '9' ||
				       fd == dirfd(d);
				for (size_t i = 0; i < n && !keep; i++)
					keep = s->fds[i] == fd;
				if (!keep)
					close(fd);
			}
			_exit(0);	/* the events close here */
		}
		_exit(0);
	}
	if (child > 0)
		waitpid(child, NULL, 0);
}

void mw_stacks_free(struct mw_stacks *s)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (!s)
		return;
	if (s->running)
		mw_stacks_stop(s);
	if (s->fds)
		close_behind(s);
	for (int c = 0; c < s->ncpus; c++)
		if (s->rings[c])
			munmap(s->rings[c], (size_t)pg * (RING_PAGES + 1));
	for (size_t i = 0; s->fds && i < s->nsites * (size_t)s->ncpus; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	for (int i = 0; i < 2; i++)
		if (s->stop_pipe[i] >= 0)
			close(s->stop_pipe[i]);
	stk_procs_free(s);
	pthread_mutex_destroy(&s->lock);
	free(s->fds);
	free(s->ids);
	free(s->rings);
	free(s->sites);
	free(s->rec);
	free(s->pbuf);
	free(s->pend);
	free(s->ev);
	free(s->watch);
	free(s->search_dir);
	free(s->libc_path);
	free(s);
}
