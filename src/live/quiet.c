/* quiet.c - did no thread of a process run between two instants (quiet.h)?
 *
 * The argument, thread by thread, from the kernel's sources (6.x):
 *
 * - A thread leaves its CPU to another task only in __schedule()
 *   (kernel/sched/core.c), which counts it, when prev != next, in the
 *   thread's nvcsw (it blocked) or nivcsw (it was preempted), under the
 *   run queue's lock, before the switch and before its on_cpu is cleared
 *   (finish_task, under that lock too).  status shows both counts
 *   (fs/proc/array.c, task_context_switch_counts).  A thread runs - its
 *   own code, or the kernel's on its behalf, which may write its memory -
 *   only between being switched in and such a switch out (or its exit).
 * - /proc/PID/task/TID/syscall (fs/proc/base.c, proc_pid_syscall; lib/
 *   syscall.c, task_current_syscall) prints the thread's system call only
 *   when wait_task_inactive() found it, under that lock, off its CPU and
 *   off the run queue in a sleeping or stopped state (twice, with the
 *   same nvcsw); else "running".
 * - mw_quiet_begin reads the counts C, then sees the thread off its CPU
 *   (at z1); mw_quiet_end sees it off its CPU (at z2), then reads the
 *   counts C'.  Had it run at any time u between z1 and z2, it was
 *   switched in after z1 (it was off at z1) and out again before z2: a
 *   count rose after C was read and before C' was: C' != C.  So C' == C
 *   means it did not run between z1 and z2, which hold the walk's reads.
 *   The state letter alone (S, D: not R) proves nothing: a thread shows S
 *   from set_current_state() on while still running towards schedule();
 *   it may find its condition met, go back to its own code without a
 *   switch, and be seen there again with the same counts.  A stopped
 *   thread (T, t) that stays stopped passes like a sleeping one.
 * - The same threads at both ends: a thread made or gone meanwhile means
 *   one ran (or the process is being killed: its reads then fail).
 * - Tasks that run on its memory without being its threads: vfork and
 *   clone(CLONE_VM) children (posix_spawn's child, until it execs).  Each
 *   child of each thread is compared with it (kcmp KCMP_VM) at both ends:
 *   one that shares its memory, or one that cannot be compared, fails the
 *   proof.  (A vfork child gone by the end has woken its parent thread,
 *   whose counts then changed.)  And, since a task sharing its memory
 *   need not be a child of one of its threads (clone's CLONE_PARENT, a
 *   task whose parent died, one the children file skipped: it is not
 *   race-free), every task on the system is compared with it once its
 *   threads were seen at the start (foreign_sharer); one made after that
 *   was made by a thread of it (its counts) or by one sharing it then.
 *   The children files still count beside that scan: the scan takes a
 *   task kcmp refuses, with capabilities mallocwatch lacks, for one not
 *   sharing the memory (task_shares), and a clone(CLONE_VM) child that
 *   kept root's credentials when its parent dropped them (a daemon's
 *   helper, made before it setuid()s and makes itself dumpable again) is
 *   such a task to a user's mallocwatch: its refused kcmp in the children
 *   check is what fails the proof (unit-quiet).
 *
 * What the walk reads is malloc's own words (snapshot.c,
 * snapshot_consolidate.c): mp_ and main_arena in libc's private data,
 * narenas, the break, the locks, the arenas' headers and bin heads, the
 * heap_info headers, each free chunk's size and fd, the size of the
 * chunks beside a fastbin chunk and the footer (prev_size) of a free
 * chunk before one; never the tcache's entries or a chunk's user data.
 * The heaps are private anonymous memory (the break, glibc's mmapped
 * heaps).  The kernel writes a process's memory without one of its
 * threads running only where the process asked it to: I/O completing
 * into buffers (AIO, io_uring, O_DIRECT; io_uring's workers are threads
 * of the process, counted above), which are chunks' user data.  An in-use
 * chunk's user data ends before the next chunk's size field (it covers
 * that chunk's prev_size, read only when the chunk before it is free).
 * A buffer freed while I/O into it runs is the program's use-after-free:
 * the later read would see its change (if it came while we read), this
 * proof does not.  Not covered either: another process writing it
 * (process_vm_writev, ptrace POKEDATA, /proc/PID/mem: a debugger), a
 * shared mapping laid over its heap, and a task sharing its memory that
 * has capabilities mallocwatch lacks (kcmp refuses it: task_shares).
 *
 * The cost: per thread, three small /proc files at each end (about 0.1
 * ms a thread in all, measured here); the syscall file may wait a
 * scheduler tick for a thread that is going to sleep.  The later read it
 * saves costs about 0.2 to 0.5 ms a MiB of heap walked (bench/RESULTS-
 * 2026-11-29-speed2.txt), so it is tried only when that read is likely
 * dearer: at most MW_QUIET_FEW threads, or at least MW_QUIET_RSS_PER
 * bytes resident a thread (the heaps walked are resident), and at least
 * MW_QUIET_RSS_TASK resident for each task on the system (the scan of
 * every task: about 7 us a task, 0.9 ms over 136 tasks at load 14, here
 * on 2026-11-29); the begin gives up at the first thread that runs.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procmem.h"
#include "quiet.h"
#include "xalloc.h"

struct mw_quiet {
	pid_t pid;
	struct mw_quiet_thread *t;
	size_t n;
};

int mw_quiet_counts(const char *status, uint64_t *nvcsw, uint64_t *nivcsw)
{
	const char *v = strstr(status, "\nvoluntary_ctxt_switches:");
	const char *nv = strstr(status, "\nnonvoluntary_ctxt_switches:");
	char *end;

	if (!v || !nv)
		return -1;
	v += strlen("\nvoluntary_ctxt_switches:");
	nv += strlen("\nnonvoluntary_ctxt_switches:");
	*nvcsw = strtoull(v, &end, 10);
	if (end == v || (*end != '\n' && *end != '\0'))
		return -1;
	*nivcsw = strtoull(nv, &end, 10);
	return end == nv || (*end != '\n' && *end != '\0') ? -1 : 0;
}

int mw_quiet_same(const struct mw_quiet_thread *a, size_t na, const struct mw_quiet_thread *b,
		  size_t nb)
{
	if (na != nb || !na)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (a[i].tid != b[i].tid || !a[i].off || !b[i].off || a[i].shares || b[i].shares ||
		    a[i].nvcsw != b[i].nvcsw || a[i].nivcsw != b[i].nivcsw)
			return 0;
	return 1;
}

/* Does a child of thread tid share its memory (or could that not be
 * told)?  1 or 0. */
static int shared_child(pid_t pid, pid_t tid)
{
	char path[96], buf[4096];
	const char *s = buf;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0 || n == (ssize_t)sizeof(buf) - 1)
		return 1;	/* not read, or more children than read */
	buf[n] = '\0';
	while (*s) {
		char *end;
		long c = strtol(s, &end, 10), r;

		if (end == s || c <= 0 || (*end && !isspace((unsigned char)*end)))
			return 1;
		for (s = end; isspace((unsigned char)*s); s++)
			;
		/* 0: the same memory; 1, 2: another; -1 ESRCH: gone meanwhile */
		r = syscall(SYS_kcmp, (pid_t)tid, (pid_t)c, KCMP_VM, 0UL, 0UL);
		if (r == 0 || (r < 0 && errno != ESRCH))
			return 1;
	}
	return 0;
}

/* /proc/sys/kernel/ns_last_pid: the last pid given out in this pid
 * namespace (-1: not read). */
static long last_pid(void)
{
	char buf[32], *end;
	long v;

	if (mw_read_small("/proc/sys/kernel/ns_last_pid", 0, buf, sizeof(buf)) <= 0)
		return -1;
	v = strtol(buf, &end, 10);
	return end != buf && (*end == '\n' || !*end) && v >= 0 ? v : -1;
}

/* CapPrm from a status file (path): the capabilities its task may
 * have; 0 when it cannot be read (then as mallocwatch: not above it). */
static uint64_t permitted(const char *path)
{
	char buf[4096];
	const char *c;

	if (mw_read_small(path, 0, buf, sizeof(buf)) < 0 || !(c = strstr(buf, "\nCapPrm:")))
		return 0;
	return strtoull(c + strlen("\nCapPrm:"), NULL, 16);
}

/* Does task t (of process x), not of pid's thread group, share pid's
 * memory (or could that not be told)?  1 or 0.  kcmp refuses (EPERM) a
 * task that may have capabilities mallocwatch has not (commoncap's
 * ptrace rule; an init or supervisor above a container's root): such a
 * task shares no memory with pid's unless pid's process had them too
 * (clone keeps the memory and the capabilities; an exec that gains them
 * brings new memory), which no user without them can make (but root can,
 * and then drop them in the process and not in the task: the children
 * check above finds that task when it is a child of a thread); any other
 * refusal cannot be told. */
static int task_shares(pid_t pid, long x, long t, uint64_t own)
{
	long r = syscall(SYS_kcmp, pid, (pid_t)t, KCMP_VM, 0UL, 0UL);
	char path[96];

	/* 0: the same memory; 1, 2: another; -1 ESRCH: gone meanwhile */
	if (r >= 0 || errno != EPERM)
		return r == 0 || (r < 0 && errno != ESRCH);
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/status", x, t);
	return (permitted(path) & ~own) == 0;
}

/* Does a task outside pid's thread group share its memory (a clone
 * (CLONE_VM) whose parent is not one of its threads: CLONE_PARENT, or
 * orphaned), or could that not be told?  Every task of every process
 * compared (kcmp KCMP_VM).  A task made during the scan is made by one
 * sharing the memory of its maker; /proc lists pids in order, and the
 * pids given out meanwhile are above the last one before unless they
 * wrapped: so, without a wrap, the scan meets each such line of makers
 * ahead of where it reads.  A wrap fails the proof.  1 or 0. */
static int foreign_sharer(pid_t pid)
{
	long before = last_pid(), after;
	uint64_t own = permitted("/proc/self/status");
	struct dirent *d, *e;
	int found = 0;
	DIR *proc, *task;

	if (before < 0 || !(proc = opendir("/proc")))
		return 1;
	while (!found && (d = readdir(proc))) {
		char path[64], *end;
		long x = strtol(d->d_name, &end, 10);

		if (end == d->d_name || *end || x <= 0 || x == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task", x);
		if (!(task = opendir(path))) {
			found = errno != ENOENT;	/* gone meanwhile */
			continue;
		}
		while (!found && (e = readdir(task))) {
			long t = strtol(e->d_name, &end, 10);

			found = end != e->d_name && !*end && t > 0 && task_shares(pid, x, t, own);
		}
		closedir(task);
	}
	closedir(proc);
	after = last_pid();
	return found || after < before;
}

/* Thread tid of pid sampled into t, its counts read before (end 0) or
 * after (end 1) it is seen off its CPU.  0, or -1 when it cannot be read
 * (gone, not allowed). */
static int sample(pid_t pid, pid_t tid, int end, struct mw_quiet_thread *t)
{
	char spath[96], cpath[96], buf[4096];

	snprintf(spath, sizeof(spath), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	snprintf(cpath, sizeof(cpath), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	t->tid = tid;
	for (int k = 0; k < 2; k++) {
		if ((k == 0) == (end == 0)) {
			if (mw_read_small(spath, 0, buf, sizeof(buf)) < 0 ||
			    mw_quiet_counts(buf, &t->nvcsw, &t->nivcsw) < 0)
				return -1;
		} else {
			if (mw_read_small(cpath, 0, buf, sizeof(buf)) < 0)
				return -1;
			t->off = strncmp(buf, "running", 7) != 0 &&
				 (isdigit((unsigned char)buf[0]) || buf[0] == '-');
		}
	}
	t->shares = shared_child(pid, tid);
	return 0;
}

static int by_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* pid's threads, sorted, into *out (*n): 0, or -1 (gone, too many). */
static int threads(pid_t pid, pid_t **out, size_t *n)
{
	char path[64];
	struct dirent *d;
	size_t cap = 0;
	DIR *dir;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path)))
		return -1;
	while ((d = readdir(dir))) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);

		if (end == d->d_name || *end || tid <= 0)
			continue;
		if (*n == MW_QUIET_MAX_THREADS)
			break;
		XGROW(*out, *n, cap);
		(*out)[(*n)++] = (pid_t)tid;
	}
	closedir(dir);
	if (!*n || *n == MW_QUIET_MAX_THREADS) {
		free(*out);
		*out = NULL;
		return -1;
	}
	qsort(*out, *n, sizeof(**out), by_tid);
	return 0;
}

/* The tasks on the system now (/proc/loadavg's fourth field: running/
 * all); 0 when not read. */
static uint64_t system_tasks(void)
{
	char buf[128];
	const char *slash;

	if (mw_read_small("/proc/loadavg", 0, buf, sizeof(buf)) <= 0 || !(slash = strchr(buf, '/')))
		return 0;
	return strtoull(slash + 1, NULL, 10);
}

/* Is the proof likely cheaper than the later read, for n threads?  (Its
 * scan of every task, foreign_sharer, costs about what the read of
 * MW_QUIET_RSS_TASK bytes does, a task.) */
static int worth(pid_t pid, size_t n)
{
	uint64_t rss = mw_process_rss(pid), tasks = system_tasks();

	return (n <= MW_QUIET_FEW || rss / n >= MW_QUIET_RSS_PER) && tasks &&
	       rss >= tasks * MW_QUIET_RSS_TASK;
}

/* Every thread of pid sampled (end: as mw_quiet_end does) into a new
 * array (*n).  NULL when one cannot be, or at the first found running,
 * sharing, or (end) not as it was in q. */
static struct mw_quiet_thread *sample_all(pid_t pid, int end, const struct mw_quiet *q, size_t *n)
{
	struct mw_quiet_thread *t;
	pid_t *tids;

	if (threads(pid, &tids, n) < 0)
		return NULL;
	if (end ? *n != q->n : !worth(pid, *n)) {
		free(tids);
		return NULL;
	}
	t = xcalloc(*n, sizeof(*t));
	for (size_t i = 0; i < *n; i++)
		if (sample(pid, tids[i], end, &t[i]) < 0 || !t[i].off || t[i].shares ||
		    (end && !mw_quiet_same(&q->t[i], 1, &t[i], 1))) {
			free(t);
			t = NULL;
			break;
		}
	free(tids);
	return t;
}

struct mw_quiet *mw_quiet_begin(pid_t pid)
{
	struct mw_quiet *q;

	if (pid == getpid())	/* this thread runs, and its syscall file shows
				 * the read of it: never quiet */
		return NULL;
	q = xcalloc(1, sizeof(*q));
	q->pid = pid;
	/* the scan after the threads are seen: a task writing the memory
	 * during the walk (after this) is one of them (its counts), or
	 * shared it during the scan, or was made by one that did */
	if (!(q->t = sample_all(pid, 0, NULL, &q->n)) || foreign_sharer(pid)) {
		free(q->t);
		free(q);
		return NULL;
	}
	return q;
}

int mw_quiet_end(struct mw_quiet *q)
{
	struct mw_quiet_thread *t;
	size_t n;
	int same = 0;

	if (!q)
		return 0;
	if ((t = sample_all(q->pid, 1, q, &n)))
		same = mw_quiet_same(q->t, q->n, t, n);
	free(t);
	free(q->t);
	free(q);
	return same;
}
