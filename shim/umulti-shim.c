/* umulti-shim.c - stapbpf's uprobes as one uprobe_multi link.
 *
 * stapbpf (SystemTap 4.8, stapbpf.cxx register_uprobes) arms each uprobe
 * site as a trace event of its own: it writes "p:stapprobe_PID_I
 * PATH:0xOFFSET" to tracefs' uprobe_events, reads the event's id from
 * events/uprobes/stapprobe_PID_I/id, opens a perf event of that id
 * (perf_event_open, PERF_TYPE_TRACEPOINT) and gives it the site's program
 * (ioctl PERF_EVENT_IOC_SET_BPF).  At exit it closes each perf event and
 * writes "-:stapprobe_PID_I".  Closing such an event holds the kernel's
 * event_mutex through an RCU grace period (tracepoint_synchronize_unregister):
 * 0.08 to 0.12 s a site, one site at a time machine-wide, so a run's 44
 * sites take 3.5 to 5 s to go and the next run's arming queues behind
 * them (docs/performance.md, "Runs that follow each other"; bench/uprobes.sh).
 *
 * Linux 6.6 added BPF_TRACE_UPROBE_MULTI links (BPF_LINK_CREATE with a
 * path and an array of offsets, each with a cookie), and since 6.12 one
 * link's uprobes are unregistered together behind a single grace period
 * (bpf_uprobe_unregister: uprobe_unregister_nosync for each, then one
 * uprobe_unregister_sync).  No trace event exists, no event_mutex is
 * taken.  This shim, LD_PRELOADed into stapbpf alone (never the traced
 * program) when mallocwatch found the kernel able (runtime.c,
 * mw_runtime_uprobe_multi), keeps stapbpf's own sequence and answers it
 * without tracefs:
 *
 *   - open(uprobe_events, O_WRONLY) gets /dev/null; the "p:" lines written
 *     to it are parsed into the site table (path, offset), "-:" lines are
 *     accepted and dropped;
 *   - open(events/uprobes/stapprobe_PID_I/id) gets a memfd holding
 *     MW_FAKE_ID + I, so the perf_event_open of that id is recognised;
 *   - that perf_event_open returns a /dev/null descriptor standing in for
 *     the event; PERF_EVENT_IOC_SET_BPF on it records the site's program;
 *   - BPF_PROG_LOAD of a kprobe-type program (stapbpf loads its uprobe
 *     handlers as BPF_PROG_TYPE_KPROBE) gets expected_attach_type
 *     BPF_TRACE_UPROBE_MULTI, which a uprobe_multi link requires;
 *   - once every site has its program, the sites are armed: a dispatcher
 *     program tail-calls, through a BPF_MAP_TYPE_PROG_ARRAY, the program
 *     at the hit site's cookie (its index), and one uprobe_multi link per
 *     file (and pid) carries the sites' offsets and cookies;
 *   - closing any stand-in closes the links (every site goes at once), and
 *     a killed stapbpf's links go with its descriptors;
 *   - with MW_UMULTI_SITES naming the file of the script's sites that
 *     mallocwatch wrote (gen.h, sites_out), the links are made by a
 *     thread while stapbpf loads its programs, their program slots empty,
 *     and used at the last SET_BPF when stapbpf's sites are those: a
 *     link's creation waits for an RCU grace period, 8 to 20 ms of each
 *     run's start otherwise (see pre below); unless MW_UMULTI_NO_PREARM
 *     is set.  MW_UMULTI_LOG=FILE (the tests') gets a line saying whether
 *     they were used, and why not;
 *   - stapbpf's hash maps of more than MW_UMULTI_PREALLOC_MAX entries
 *     (uprobe_multi.h) are made with BPF_F_NO_PREALLOC: their elements come
 *     from the kernel's BPF memory allocator as keys arrive, where filling
 *     the preallocated maps (one of 65536 entries and five of 16384,
 *     gen.h) took 4 ms of each run's start (kprobe-type programs may use
 *     them since Linux 6.1, below the 6.6 this shim needs).  A new key's
 *     element costs about 250 ns more that way than from a preallocated
 *     map's free list, nothing where the key is there; so the one map
 *     whose hits are nearly all new keys, mw_wait[tid, arena] (a thread
 *     waits for an arena's lock at its first allocation), is sized to stay
 *     preallocated (0.25 ms).  MW_UMULTI_PREALLOC moves the bound:
 *     "all", "none", or a number of entries;
 *   - a program identical to one loaded before (the same instructions,
 *     maps and attributes: stapbpf loads one per site, and sites of a
 *     probe whose arguments sit in the same registers get the same one)
 *     is that one again, a new descriptor of it, not a second load and
 *     verification (12 of the 44 programs of mallocwatch's whole script
 *     on the probe-enabled glibc); unless MW_UMULTI_NO_SHARE is set;
 *   - in those programs, stapbpf's `m[k] = v` (and `m[k]++`) on a key a
 *     lookup found, and its updates of arrays, store the value through
 *     the element's address instead of a second hashing and a map update
 *     (inplace.c); unless MW_UMULTI_NO_INPLACE is set (the tests compare
 *     both).
 *
 * Only kprobe-type programs are changed, so the script must have no
 * kprobes (mallocwatch's have none: gen.c).  A program loaded with that
 * attach type still takes PERF_EVENT_IOC_SET_BPF on a uprobe perf event
 * (seen on 6.18), so a stapbpf that attached some other way than the
 * sequence above (read in SystemTap 4.8's stapbpf.cxx) would run as
 * before, without the link.  Return probes ("r:") are
 * refused (EINVAL on the write: stapbpf reports "Error creating probe").
 * A failure to arm fails the ioctl with the kernel's errno, which stapbpf
 * reports before it exits.  Every descriptor made here is close-on-exec.
 *
 * Formats: the uprobe_events lines are the kernel's
 * Documentation/trace/uprobetracer.rst; the link attributes are
 * include/uapi/linux/bpf.h's link_create.uprobe_multi (Linux 6.6).
 *
 * This file is the calls interposed, the sites they record and the
 * programs loaded; the arming (the program array, the dispatcher, the
 * links, early or at the last SET_BPF) is umulti_arm.c's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "inplace.h"
#include "umulti_int.h"
#include "uprobe_multi.h"	/* the definitions alone: its calls are uprobe_multi_link.h's */

#define UE_PATH "/sys/kernel/debug/tracing/uprobe_events"
#define ID_FMT "/sys/kernel/debug/tracing/events/uprobes/stapprobe_%d_%u/id"
/* ids handed out for our sites: above any tracepoint id the kernel gives */
#define MW_FAKE_ID 0x40000000u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ue_fds[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };	/* uprobe_events stand-ins */

#define RESOLVED(fn) ((fn) || (resolve(), (fn)))

/* mw_inplace_map_fn: the map's type and sizes, from the kernel */
static int map_info(int fd, struct mw_inplace_map *m)
{
	struct bpf_map_info mi;
	union bpf_attr a;

	memset(&mi, 0, sizeof(mi));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(mi);
	a.info.info = (uintptr_t)&mi;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0)
		return -1;
	m->type = mi.type;
	m->key_size = mi.key_size;
	m->value_size = mi.value_size;
	m->id = mi.id;
	return 0;
}


/* MW_UMULTI_INPLACE_LOG=FILE (the tests'): a line per rewritten program,
 * "inplace INSNS stores N arrays N loaded|refused ERRNO"; a refused one's
 * verifier log follows, its last 4 KiB, loaded again to get it. */
static void inplace_log(const union bpf_attr *f, long fd, const struct mw_inplace_stats *st)
{
	int err = errno, lf = log_open("MW_UMULTI_INPLACE_LOG");
	char line[128];

	if (lf < 0) {
		errno = err;
		return;
	}
	snprintf(line, sizeof(line), "inplace %u stores %u arrays %u %s %d\n",
		 f->insn_cnt, st->stores, st->arrays, fd >= 0 ? "loaded" : "refused",
		 fd >= 0 ? 0 : err);
	real_write(lf, line, strlen(line));
	if (fd < 0) {
		static char vlog[1 << 20];
		union bpf_attr g = *f;
		size_t len;

		g.log_level = 1;
		g.log_buf = (uintptr_t)vlog;
		g.log_size = sizeof(vlog);
		vlog[0] = 0;
		if ((fd = real_syscall(__NR_bpf, BPF_PROG_LOAD, &g, sizeof(g))) >= 0)
			real_close((int)fd);
		len = strnlen(vlog, sizeof(vlog));
		real_write(lf, vlog + (len > 4096 ? len - 4096 : 0), len > 4096 ? 4096 : len);
	}
	real_close(lf);
	errno = err;
}

/* The most entries a hash map may have and stay preallocated:
 * MW_UMULTI_PREALLOC "all", "none" or a decimal count;
 * MW_UMULTI_PREALLOC_MAX when unset or not one of those. */
static unsigned prealloc_max(void)
{
	const char *v = getenv("MW_UMULTI_PREALLOC");
	int e = errno, bad;
	unsigned long n;
	char *end;

	if (!v)
		return MW_UMULTI_PREALLOC_MAX;
	if (strcmp(v, "all") == 0)
		return UINT_MAX;
	if (strcmp(v, "none") == 0)
		return 0;
	errno = 0;
	n = strtoul(v, &end, 10);
	bad = errno || end == v || *end || v[0] == '-' || n > UINT_MAX;
	errno = e;
	return bad ? MW_UMULTI_PREALLOC_MAX : (unsigned)n;
}

/* Programs loaded (shared_load): their instructions (owned), license and
 * the attributes that make two loads the same program, and a descriptor
 * of ours. */
#define MAX_SHARED 256
static struct shared {
	struct bpf_insn *insns;
	uint32_t cnt, type, expected, flags, kver;
	char license[32];
	int fd;
} shared[MAX_SHARED];
static unsigned nshared;

/* Only plain programs are shared: no BTF, no func or line info, no fd
 * array, no attach target (stapbpf's have none); a license that fits. */
static int shareable(const union bpf_attr *f, char *license)
{
	const char *l = (const char *)(uintptr_t)f->license;

	if (getenv("MW_UMULTI_NO_SHARE") || !f->insns || !f->insn_cnt || f->prog_btf_fd ||
	    f->func_info_cnt || f->line_info_cnt || f->attach_btf_id || f->attach_prog_fd ||
	    f->fd_array || !l || strnlen(l, 32) == 32)
		return 0;
	strcpy(license, l);
	return 1;
}

/* BPF_PROG_LOAD of f (size bytes of it): a new descriptor of the same
 * program when one identical was loaded before, else the load (kept for
 * the next when it succeeded). */
static long shared_load(const union bpf_attr *f, long size)
{
	const struct bpf_insn *insns = (const struct bpf_insn *)(uintptr_t)f->insns;
	char license[32];
	long fd;

	if (!shareable(f, license))
		return real_syscall(__NR_bpf, BPF_PROG_LOAD, f, size);
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nshared; i++) {
		const struct shared *s = &shared[i];

		if (s->cnt == f->insn_cnt && s->type == f->prog_type &&
		    s->expected == f->expected_attach_type && s->flags == f->prog_flags &&
		    s->kver == f->kern_version && strcmp(s->license, license) == 0 &&
		    memcmp(s->insns, insns, f->insn_cnt * sizeof(*insns)) == 0) {
			fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 3);
			pthread_mutex_unlock(&lock);
			return fd;
		}
	}
	pthread_mutex_unlock(&lock);
	fd = real_syscall(__NR_bpf, BPF_PROG_LOAD, f, size);
	if (fd < 0)
		return fd;
	pthread_mutex_lock(&lock);
	if (nshared < MAX_SHARED) {
		struct shared *s = &shared[nshared];

		if ((s->insns = malloc(f->insn_cnt * sizeof(*insns))) &&
		    (s->fd = fcntl((int)fd, F_DUPFD_CLOEXEC, 3)) >= 0) {
			memcpy(s->insns, insns, f->insn_cnt * sizeof(*insns));
			s->cnt = f->insn_cnt;
			s->type = f->prog_type;
			s->expected = f->expected_attach_type;
			s->flags = f->prog_flags;
			s->kver = f->kern_version;
			strcpy(s->license, license);
			nshared++;
		} else {
			free(s->insns);
		}
	}
	pthread_mutex_unlock(&lock);
	return fd;
}

static int is_ue_fd(int fd)
{
	for (unsigned i = 0; i < sizeof(ue_fds) / sizeof(ue_fds[0]); i++)
		if (fd >= 0 && ue_fds[i] == fd)
			return 1;
	return 0;
}

static struct site *site_of_stand_in(int fd)
{
	for (unsigned i = 0; i < nsites; i++)
		if (fd >= 0 && sites[i].stand_in == fd)
			return &sites[i];
	return NULL;
}

/* One "p:stapprobe_PID_I PATH:0xOFFSET" line: site I, which must be the
 * next one.  0, or -1 with errno. */
static int add_site(const char *buf, size_t n)
{
	char line[PATH_MAX + 128], *sp, *colon, *end;
	unsigned idx;
	int pid;
	uint64_t off;

	if (n >= sizeof(line) || nsites >= MAX_SITES) {
		errno = E2BIG;
		return -1;
	}
	memcpy(line, buf, n);
	line[n] = '\0';
	if (n && line[n - 1] == '\n')
		line[n - 1] = '\0';
	if (sscanf(line, "p:stapprobe_%d_%u ", &pid, &idx) != 2 || pid != getpid() ||
	    idx != nsites || !(sp = strchr(line, ' ')) || !(colon = strrchr(sp, ':')) ||
	    colon == sp + 1 || strncmp(colon + 1, "0x", 2) != 0) {
		errno = EINVAL;
		return -1;
	}
	*colon = '\0';
	errno = 0;
	off = strtoull(colon + 3, &end, 16);
	if (errno || *end || end == colon + 3) {
		errno = EINVAL;
		return -1;
	}
	if (!(sites[nsites].path = strdup(sp + 1)))
		return -1;
	sites[nsites].off = off;
	sites[nsites].stand_in = -1;
	sites[nsites].prog = -1;
	sites[nsites].pid = -1;
	nsites++;
	return 0;
}

/* Resolve what is interposed; start the early arming when mallocwatch
 * wrote the sites. */
__attribute__((constructor)) static void init(void)
{
	const char *file = getenv("MW_UMULTI_SITES");

	resolve();
	if (file && !getenv("MW_UMULTI_NO_PREARM") && real_open && real_close && real_syscall)
		prearm_start(file);
}

int open(const char *path, int flags, ...)
{
	char want[sizeof(ID_FMT) + 32];
	mode_t mode = 0;
	int pid, fd;
	unsigned idx;

	if (!RESOLVED(real_open) || !RESOLVED(real_write) || !RESOLVED(real_close)) {
		errno = ENOSYS;
		return -1;
	}
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (strcmp(path, UE_PATH) == 0 && (flags & O_ACCMODE) == O_WRONLY) {
		pthread_mutex_lock(&lock);
		fd = real_open("/dev/null", O_WRONLY | O_CLOEXEC);
		for (unsigned i = 0; fd >= 0 && i < sizeof(ue_fds) / sizeof(ue_fds[0]); i++)
			if (ue_fds[i] < 0) {
				ue_fds[i] = fd;
				break;
			}
		pthread_mutex_unlock(&lock);
		return fd;
	}
	if (sscanf(path, ID_FMT, &pid, &idx) == 2 && pid == getpid() &&
	    snprintf(want, sizeof(want), ID_FMT, pid, idx) > 0 && strcmp(path, want) == 0) {
		char text[32];
		int len;

		pthread_mutex_lock(&lock);
		if (idx >= nsites) {
			pthread_mutex_unlock(&lock);
			errno = ENOENT;
			return -1;
		}
		pthread_mutex_unlock(&lock);
		len = snprintf(text, sizeof(text), "%u\n", MW_FAKE_ID + idx);
		if ((fd = memfd_create("mw-umulti-id", MFD_CLOEXEC)) < 0)
			return -1;
		if (real_write(fd, text, (size_t)len) != len || lseek(fd, 0, SEEK_SET) != 0) {
			real_close(fd);
			errno = EIO;
			return -1;
		}
		return fd;
	}
	return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

ssize_t write(int fd, const void *buf, size_t n)
{
	int r = 0;

	if (!RESOLVED(real_write)) {
		errno = ENOSYS;
		return -1;
	}
	if (fd < 0)
		return real_write(fd, buf, n);
	pthread_mutex_lock(&lock);
	if (!is_ue_fd(fd)) {
		pthread_mutex_unlock(&lock);
		return real_write(fd, buf, n);
	}
	if (n >= 2 && memcmp(buf, "-:", 2) == 0)
		r = 0;		/* stapbpf's removal: the links go on close */
	else
		r = add_site(buf, n);
	pthread_mutex_unlock(&lock);
	return r < 0 ? -1 : (ssize_t)n;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	unsigned long arg;
	struct site *s;
	int r = 0;

	if (!RESOLVED(real_ioctl) || !RESOLVED(real_syscall) || !RESOLVED(real_close)) {
		errno = ENOSYS;
		return -1;
	}
	va_start(ap, req);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	pthread_mutex_lock(&lock);
	if (!(s = site_of_stand_in(fd))) {
		pthread_mutex_unlock(&lock);
		return real_ioctl(fd, req, arg);
	}
	if (req == PERF_EVENT_IOC_SET_BPF) {
		unsigned i;

		s->prog = (int)arg;
		for (i = 0; i < nsites && sites[i].prog >= 0; i++)
			;
		if (i == nsites && !armed)
			r = arm();
	} else if (req != PERF_EVENT_IOC_ENABLE && req != PERF_EVENT_IOC_DISABLE) {
		errno = ENOTTY;
		r = -1;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

int close(int fd)
{
	struct site *s;

	if (!RESOLVED(real_close)) {
		errno = ENOSYS;
		return -1;
	}
	pthread_mutex_lock(&lock);
	if ((s = site_of_stand_in(fd))) {
		s->stand_in = -1;
		if (armed) {
			disarm();
			armed = 0;
		}
	}
	for (unsigned i = 0; fd >= 0 && i < sizeof(ue_fds) / sizeof(ue_fds[0]); i++)
		if (ue_fds[i] == fd)
			ue_fds[i] = -1;
	pthread_mutex_unlock(&lock);
	return real_close(fd);
}

long syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	if (!RESOLVED(real_syscall) || !RESOLVED(real_open)) {
		errno = ENOSYS;
		return -1;
	}
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_perf_event_open) {
		const struct perf_event_attr *pa = (const struct perf_event_attr *)a[0];
		int fd;

		if (pa && pa->type == PERF_TYPE_TRACEPOINT && pa->config >= MW_FAKE_ID) {
			pthread_mutex_lock(&lock);
			if (pa->config - MW_FAKE_ID >= nsites) {
				pthread_mutex_unlock(&lock);
				errno = ENOENT;
				return -1;
			}
			fd = real_open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				sites[pa->config - MW_FAKE_ID].stand_in = fd;
				sites[pa->config - MW_FAKE_ID].pid = (int)a[1];
			}
			pthread_mutex_unlock(&lock);
			return fd;
		}
	} else if (nr == __NR_bpf && a[0] == BPF_MAP_CREATE && a[1] &&
		   (size_t)a[2] >= offsetof(union bpf_attr, map_flags) + 4 &&
		   (size_t)a[2] <= sizeof(union bpf_attr)) {
		union bpf_attr copy;
		long fd;

		memset(&copy, 0, sizeof(copy));
		memcpy(&copy, (const void *)a[1], (size_t)a[2]);
		if (copy.map_type == BPF_MAP_TYPE_HASH && !(copy.map_flags & BPF_F_NO_PREALLOC) &&
		    copy.max_entries > prealloc_max()) {
			copy.map_flags |= BPF_F_NO_PREALLOC;
			if ((fd = real_syscall(nr, a[0], &copy, a[2])) >= 0)
				return fd;
			/* refused: made as stapbpf asked */
		}
	} else if (nr == __NR_bpf && a[0] == BPF_PROG_LOAD && a[1] &&
		   (size_t)a[2] >= offsetof(union bpf_attr, expected_attach_type) + 4 &&
		   (size_t)a[2] <= sizeof(union bpf_attr)) {
		union bpf_attr copy;

		memset(&copy, 0, sizeof(copy));
		memcpy(&copy, (const void *)a[1], (size_t)a[2]);
		if (copy.prog_type == BPF_PROG_TYPE_KPROBE) {
			struct bpf_insn *fast = NULL;
			struct mw_inplace_stats st;
			unsigned fast_n = 0;
			long fd;

			copy.expected_attach_type = MW_BPF_TRACE_UPROBE_MULTI;
			if (!getenv("MW_UMULTI_NO_INPLACE") && copy.insns && copy.insn_cnt &&
			    (fast = mw_inplace((const struct bpf_insn *)(uintptr_t)copy.insns,
					       copy.insn_cnt, &fast_n, map_info, &st))) {
				union bpf_attr f = copy;

				f.insns = (uintptr_t)fast;
				f.insn_cnt = fast_n;
				fd = shared_load(&f, a[2]);
				inplace_log(&f, fd, &st);
				free(fast);
				if (fd >= 0)
					return fd;
				/* refused: loaded as stapbpf made it */
			}
			return shared_load(&copy, a[2]);
		}
	}
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
