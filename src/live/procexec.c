/* procexec.c - a running process's exec told without stopping it
 * (procexec.h).  The tracepoint's id, as tracefs gives it:
 *
 *	$ cat /sys/kernel/debug/tracing/events/sched/sched_process_exec/id
 *	365
 *	$ grep pid /sys/kernel/debug/tracing/events/sched/sched_process_exec/format
 *		field:pid_t pid;	offset:12;	size:4;	signed:1;
 *
 * (pid: the exec'ing task's, which is the process's pid once de_thread
 * made the exec'ing thread its leader).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pidfd.h"
#include "procexec.h"
#include "procmem.h"
#include "xalloc.h"

#define MAX_CPUS 4096
/* Counting descriptors (one per CPU per process) all watchers may hold
 * at once: at most this, and a quarter of RLIMIT_NOFILE's soft limit; a
 * process past it is watched by its address space alone. */
#define COUNTER_FDS_MAX 512

static long counter_fds;	/* held now, by every watcher */

struct mw_procexec {
	pid_t pid;
	int pidfd;		/* the process, for as long as it lives */
	int memfd;		/* /proc/PID/mem of the address space at the start */
	uint64_t addr;		/* an address mapped there: its arguments' start */
	int *fds;		/* sched_process_exec counted per CPU; NULL none */
	int nfds;
	int seen;		/* an exec was seen: why below */
	char why[PATH_MAX + 400];
};

static const char *const tracefs[] = {
	"/sys/kernel/tracing/events/sched/sched_process_exec/id",
	"/sys/kernel/debug/tracing/events/sched/sched_process_exec/id",
};

static long tracepoint_id(void)
{
	char buf[32], *end;
	long id;

	for (size_t i = 0; i < sizeof(tracefs) / sizeof(tracefs[0]); i++) {
		if (mw_read_small(tracefs[i], O_NOFOLLOW, buf, sizeof(buf)) <= 0)
			continue;
		id = strtol(buf, &end, 10);
		if (end != buf && (*end == '\n' || !*end) && id > 0)
			return id;
	}
	return -1;
}

/* Are mallocwatch's pids the kernel's (the tracepoint's)?  Only in the
 * initial pid namespace, whose inode is fixed (PROC_PID_INIT_INO,
 * include/linux/proc_ns.h). */
static int pids_are_the_kernels(void)
{
	struct stat sb;

	return stat("/proc/self/ns/pid", &sb) == 0 && sb.st_ino == 0xEFFFFFFCU;
}

/* One counting event per CPU, each enabled only once its filter is set
 * (an event enabled before would count other processes' execs).  All or
 * none: a CPU left out could run the exec (one offline, ENODEV, cannot;
 * one brought online later is not counted on). */
static void open_counters(struct mw_procexec *w)
{
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(a),
				     .disabled = 1 };
	long id = tracepoint_id(), ncpu = sysconf(_SC_NPROCESSORS_CONF), budget = COUNTER_FDS_MAX;
	struct rlimit rl;
	char filter[32];
	int ok = 1;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (long)(rl.rlim_cur / 4) < budget)
		budget = (long)(rl.rlim_cur / 4);
	if (id < 0 || ncpu < 1 || ncpu > MAX_CPUS || counter_fds + ncpu > budget ||
	    !pids_are_the_kernels())
		return;
	a.config = (uint64_t)id;
	snprintf(filter, sizeof(filter), "pid == %d", (int)w->pid);
	w->fds = xcalloc((size_t)ncpu, sizeof(*w->fds));
	for (int cpu = 0; ok && cpu < ncpu; cpu++) {
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			ok = errno == ENODEV;	/* offline */
			continue;
		}
		w->fds[w->nfds++] = fd;
		ok = ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) == 0 &&
		     ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0;
	}
	if (ok && w->nfds) {
		counter_fds += w->nfds;
		return;
	}
	for (int i = 0; i < w->nfds; i++)
		close(w->fds[i]);
	free(w->fds);
	w->fds = NULL;
	w->nfds = 0;
}

/* The address space now, read where its arguments start (field 48 of
 * /proc/PID/stat, proc(5): arg_start).  Kept beside the counters: they
 * see nothing when mallocwatch runs in a pid namespace of its own (the
 * filter's pid is not the kernel's). */
static void open_mem(struct mw_procexec *w)
{
	char path[64], buf[1024];
	const char *f = mw_proc_stat_fields(w->pid, buf, sizeof(buf));
	unsigned long long v = 0;
	int n;

	w->memfd = -1;
	for (n = 3; f && n < 48; n++)	/* f starts at field 3 */
		if ((f = strchr(f, ' ')))
			f++;
	if (!f || sscanf(f, "%llu", &v) != 1 || !v)
		return;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)w->pid);
	w->memfd = open(path, O_RDONLY | O_CLOEXEC);
	w->addr = v;
}

struct mw_procexec *mw_procexec_open(pid_t pid)
{
	struct mw_procexec *w = xcalloc(1, sizeof(*w));

	w->pid = pid;
	w->pidfd = mw_pidfd_open(pid);
	open_counters(w);
	open_mem(w);
	return w;
}

int mw_procexec_counted(const struct mw_procexec *w)
{
	return w && w->fds;
}

/* Execs counted so far. */
static uint64_t counted(const struct mw_procexec *w)
{
	uint64_t n = 0, v;

	for (int i = 0; i < w->nfds; i++)
		if (read(w->fds[i], &v, sizeof(v)) == (ssize_t)sizeof(v))
			n += v;
	return n;
}

/* Is the address space at the start gone while the process lives?  (The
 * pidfd is asked after the read: a process seen alive then was alive
 * when the read found nothing.) */
static int mem_gone(const struct mw_procexec *w)
{
	char b;

	if (w->memfd < 0 || pread(w->memfd, &b, 1, (off_t)w->addr) != 0)
		return 0;
	return w->pidfd >= 0 && !mw_pidfd_exited(w->pidfd) && mw_process_alive(w->pid);
}

int mw_procexec_check(struct mw_procexec *w, char *why, size_t whylen)
{
	char path[64], exe[PATH_MAX];
	const char *by = NULL, *or = "";
	ssize_t n;

	if (!w->seen) {
		/* the counts read before it is seen alive: its pid was its own
		 * all along; else another process may have been given it */
		if (w->fds && counted(w) > 0) {
			by = "the kernel's sched_process_exec event, counted for its pid";
			if (mw_pidfd_exited(w->pidfd))
				or = ", or exited and a process given its pid since did (the exec was "
				     "counted after it exited: which one made it cannot be told)";
		} else if (mem_gone(w))
			by = "the address space it had when the run started is gone while it runs";
		if (!by)
			return 0;
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)w->pid);
		if (w->pidfd < 0 || (n = readlink(path, exe, sizeof(exe) - 1)) <= 0 ||
		    mw_pidfd_exited(w->pidfd))
			n = 0;
		exe[n] = '\0';
		/* exe: the process's name for it, quoted where it is printed */
		snprintf(w->why, sizeof(w->why), "process %d replaced its program (exec) during "
			 "the run%s%s%s%s (seen by %s)", (int)w->pid, exe[0] ? ", now '" : "", exe,
			 exe[0] ? "'" : "", or, by);
		w->seen = 1;
	}
	snprintf(why, whylen, "%s", w->why);
	return 1;
}

void mw_procexec_free(struct mw_procexec *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->nfds; i++)
		close(w->fds[i]);
	counter_fds -= w->nfds;
	free(w->fds);
	if (w->memfd >= 0)
		close(w->memfd);
	if (w->pidfd >= 0)
		close(w->pidfd);
	free(w);
}
