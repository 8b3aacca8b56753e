/* procexec.c - a running process's exec told without stopping it
 * (procexec.h).  The tracepoint's id, as tracefs gives it:
 *
 *	$ cat /sys/kernel/debug/tracing/events/sched/sched_process_exec/id
 *	365
 *
 * counted by a perf event opened on each of the process's threads (pid
 * the thread's id, cpu -1), which the threads made later inherit
 * (inherit, inherit_thread: not the processes it forks).  Such an event
 * counts the tracepoint only while its own thread runs, so it never
 * counts another process's exec, even one given the process's pid after
 * it exited; and it keeps its count after its thread has exited.  Its
 * threads, as /proc/PID/task lists them:
 *
 *	$ ls /proc/4242/task
 *	4242  4243  4244
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pidfd.h"
#include "procexec.h"
#include "procmem.h"
#include "xalloc.h"

/* Counting descriptors (one per thread) all watchers may hold at once:
 * at most this, and a quarter of RLIMIT_NOFILE's soft limit; a process
 * past it is watched by its address space alone. */
#define COUNTER_FDS_MAX 512
#define ROUNDS 64		/* listings of its threads at the start, at most */

static long counter_fds;	/* held now, by every watcher */

struct mw_procexec {
	pid_t pid;
	int pidfd;		/* the process, for as long as it lives */
	int procfd;		/* its /proc/PID: names its threads, never another's */
	int memfd;		/* /proc/PID/mem of the address space at the start */
	uint64_t addr;		/* an address mapped there: its arguments' start */
	long tp;		/* the tracepoint's id */
	int lead;		/* counted on its main thread alone (not inherited), or -1 */
	void *lead_page;	/* lead's control page, mapped */
	int lead_gone;		/* its main thread had exited when that was opened */
	struct counter {
		pid_t tid;
		int fd;		/* sched_process_exec counted on that thread */
	} *c;
	size_t nc, cap;
	uint64_t closed;	/* counted by events closed, their threads gone */
	int counted;		/* every thread has had a counter since the start */
	int partial;		/* not yet a look that found every thread with one */
	int gone_early;		/* the address space was gone when they were set */
	int seen;		/* an exec was seen (or cannot be told): why below */
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

static long budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (long)(rl.rlim_cur / 4) < COUNTER_FDS_MAX)
		return (long)(rl.rlim_cur / 4);
	return COUNTER_FDS_MAX;
}

/* Is thread tid of the process there now?  (Asked through its /proc
 * directory, opened while it lived: once it has exited, no thread is,
 * whoever has its pid since.) */
static int thread_there(const struct mw_procexec *w, pid_t tid)
{
	char path[32];

	snprintf(path, sizeof(path), "task/%d", (int)tid);
	return faccessat(w->procfd, path, F_OK, 0) == 0;
}

/* The threads /proc/PID/task lists, in one getdents64 call (a listing
 * taken in several may skip a thread when one exits between them): the
 * number, or -1 (more than max, or not read). */
static long list_threads(const struct mw_procexec *w, pid_t *tids, long max)
{
	char buf[65536];
	long n = 0;
	ssize_t len;
	int fd;

	if ((fd = openat(w->procfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	len = getdents64(fd, buf, sizeof(buf));
	if (len > 0 && getdents64(fd, buf + len, sizeof(buf) - (size_t)len) != 0)
		len = -1;	/* more than one call's worth */
	close(fd);
	for (ssize_t off = 0; len > 0 && off < len;) {
		struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
		char *end;
		long t = strtol(d->d_name, &end, 10);

		off += d->d_reclen;
		if (d->d_name[0] == '.' || *end || t <= 0 || t > INT_MAX)
			continue;
		if (n == max)
			return -1;
		tids[n++] = (pid_t)t;
	}
	return len < 0 ? -1 : n;
}

/* Count thread tid's execs from now on (and its threads').  1 counted
 * (or exiting: it runs no program again, fd -1), 0 the thread is gone,
 * -1 it cannot be.  The thread's /proc directory is held across
 * perf_event_open: still there after it, the thread was, so the id was
 * not another's (a thread's id is not reused while it lives). */
static int count_thread(struct mw_procexec *w, pid_t tid)
{
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(a),
				     .config = (uint64_t)w->tp, .inherit = 1, .inherit_thread = 1 };
	char path[32];
	int dir, fd, err, there;

	if (counter_fds + 1 > budget())
		return -1;
	snprintf(path, sizeof(path), "task/%d", (int)tid);
	if ((dir = openat(w->procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	err = errno;	/* faccessat's ENOENT is not perf_event_open's */
	there = faccessat(dir, "stat", F_OK, 0) == 0;
	close(dir);
	if (fd < 0 && (err != ESRCH || !there))
		return err == ESRCH || !there ? 0 : -1;
	if (!there) {
		close(fd);
		return 0;
	}
	if (w->nc == w->cap)
		xgrow((void **)&w->c, w->nc, &w->cap, sizeof(*w->c));
	w->c[w->nc++] = (struct counter){ .tid = tid, .fd = fd };
	counter_fds += fd >= 0;
	return 1;
}

static int has_counter(const struct mw_procexec *w, pid_t tid)
{
	for (size_t i = 0; i < w->nc; i++)
		if (w->c[i].tid == tid)
			return 1;
	return 0;
}

static uint64_t count_of(int fd)
{
	uint64_t v;

	return fd >= 0 && read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? v : 0;
}

/* Close the counters of threads gone before a whole listing (tids, n),
 * their counts kept: a thread they made was listed, and has one. */
static void prune(struct mw_procexec *w, const pid_t *tids, long n)
{
	size_t k = 0;

	for (size_t i = 0; i < w->nc; i++) {
		long j = 0;

		while (j < n && tids[j] != w->c[i].tid)
			j++;
		if (j < n || thread_there(w, w->c[i].tid)) {
			w->c[k++] = w->c[i];
			continue;
		}
		if (w->c[i].fd >= 0) {
			w->closed += count_of(w->c[i].fd);
			close(w->c[i].fd);
			counter_fds--;
		}
	}
	w->nc = k;
}

/* Give every thread listed a counter.  1 when each already had one and
 * the listing was whole (a listing ends early when the thread it stands
 * on exits: every thread listed is there after it), 0 when a next
 * listing must tell, -1 when a thread cannot be counted. */
static int cover(struct mw_procexec *w)
{
	long max = budget(), n;
	pid_t *tids = xcalloc((size_t)max, sizeof(*tids));
	int whole = 1;

	n = list_threads(w, tids, max);
	for (long i = 0; i < n && whole >= 0; i++) {
		if (has_counter(w, tids[i]))
			continue;
		whole = count_thread(w, tids[i]) < 0 ? -1 : 0;
	}
	for (long i = 0; i < n && whole == 1; i++)
		if (!thread_there(w, tids[i]))
			whole = 0;
	if (n < 0)
		whole = -1;
	else if (whole == 1)
		prune(w, tids, n);
	free(tids);
	return whole;
}

static void drop_counters(struct mw_procexec *w)
{
	for (size_t i = 0; i < w->nc; i++)
		if (w->c[i].fd >= 0) {
			close(w->c[i].fd);
			counter_fds--;
		}
	free(w->c);
	w->c = NULL;
	w->nc = w->cap = 0;
}

/* The main thread's own count, apart from the threads' (never closed
 * before the end, whatever becomes of the threads): the exec it makes is
 * counted, and it has exited once the event's poll says POLLHUP (its task
 * gone, nothing inherited from it).  The task is held as count_thread
 * holds it.  One that exits, or had (pthread_exit: left a zombie until
 * the process ends), leaves /proc/PID without an address space; one that
 * another thread's exec replaced (the exec takes its id) leaves the new
 * program's there (lead_replaced).  One descriptor a process, like its
 * pidfd and /proc/PID: outside the threads' budget, which a process
 * watched before it (another of nobody's, making threads) may hold. */
static void open_lead(struct mw_procexec *w)
{
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(a),
				     .config = (uint64_t)w->tp };
	char path[32];
	int dir, there, err;

	snprintf(path, sizeof(path), "task/%d", (int)w->pid);
	if ((dir = openat(w->procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	w->lead = (int)syscall(SYS_perf_event_open, &a, w->pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	err = errno;
	there = faccessat(dir, "stat", F_OK, 0) == 0;
	close(dir);
	w->lead_gone = w->lead < 0 && err == ESRCH && there;
	/* its control page alone: without one, poll says POLLHUP always */
	if (w->lead >= 0 && there)
		w->lead_page = mmap(NULL, (size_t)getpagesize(), PROT_READ, MAP_SHARED, w->lead, 0);
	if (w->lead >= 0 && (!there || w->lead_page == MAP_FAILED)) {
		w->lead_page = NULL;
		close(w->lead);
		w->lead = -1;
	}
}

/* Counters on every thread, each in place before the listing that found
 * no thread without one: a thread made after its maker's was set inherits
 * it.  Those of a process that makes threads faster are kept (what they
 * count is its execs) but do not make it counted; none when one thread
 * cannot be counted. */
static void open_counters(struct mw_procexec *w)
{
	int r = 0;

	if ((w->tp = tracepoint_id()) < 0)
		return;
	open_lead(w);
	for (int i = 0; i < ROUNDS && r == 0; i++)
		r = cover(w);
	if (r < 0)
		drop_counters(w);
	w->counted = r == 1;
}

/* The address space now, read where its arguments start (field 48 of
 * /proc/PID/stat, proc(5): arg_start).  Kept beside the counters: a
 * process they cannot count (not root, past the descriptors allowed) is
 * watched by it alone. */
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

/* Has the process an address space now?  One that exec'd has its new
 * program's (its stack at least, from the exec's start); one exiting has
 * none from the time its last thread let go of it (exit_mm) until the
 * exit is known (its pidfd), a window an exit that waits (a socket
 * lingering as its files close, a slow machine) holds open for seconds.
 * Its maps are read through the /proc/PID opened while it lived, never
 * another's. */
static int has_mm(const struct mw_procexec *w)
{
	char b;
	int fd = w->procfd < 0 ? -1 : openat(w->procfd, "maps", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, &b, 1);

	if (fd >= 0)
		close(fd);
	return n > 0;
}

/* At the start, once counted: is the address space it had when looked
 * at first (open_mem, before the counters) still there?  An exec before
 * every thread was counted is seen by it alone, and by it only while the
 * process lives: one it exits in the meantime cannot be told from its
 * exit, and is taken as one (refused, never shown wrong). */
static void settle(struct mw_procexec *w)
{
	char b;

	if (w->memfd < 0 || pread(w->memfd, &b, 1, (off_t)w->addr) != 0)
		return;
	if (w->pidfd >= 0 && !mw_pidfd_exited(w->pidfd) && has_mm(w)) {
		w->gone_early = 1;	/* an exec: it lives, on another */
	} else {
		snprintf(w->why, sizeof(w->why), "process %d replaced its program (exec) or exited "
			 "while its execs were being set up to be counted, which cannot be told "
			 "apart then (seen by the address space it had at the start, gone)",
			 (int)w->pid);
		w->seen = 1;
	}
}

struct mw_procexec *mw_procexec_open(pid_t pid)
{
	struct mw_procexec *w = xcalloc(1, sizeof(*w));
	char path[32];

	w->pid = pid;
	w->lead = -1;
	w->pidfd = mw_pidfd_open(pid);
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	w->procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->procfd >= 0 && (w->pidfd < 0 || mw_pidfd_exited(w->pidfd))) {
		close(w->procfd);	/* perhaps another's */
		w->procfd = -1;
	}
	open_mem(w);
	if (w->procfd >= 0)
		open_counters(w);
	w->partial = !w->counted;
	settle(w);
	return w;
}

int mw_procexec_counted(const struct mw_procexec *w)
{
	return w && w->counted;
}

/* Has the process exited (its pidfd says so; without one, its pid has
 * no live process)? */
static int exited(const struct mw_procexec *w)
{
	return w->pidfd >= 0 ? mw_pidfd_exited(w->pidfd) : !mw_process_alive(w->pid);
}

/* Execs counted so far, on every thread it has had since the start
 * (threads made since it was last looked at are listed first, while it
 * lives: see procexec.h). */
static uint64_t counted(struct mw_procexec *w)
{
	uint64_t n;
	int r = 1;

	/* a thread not counted yet is looked at again next time */
	for (int i = 0; w->nc && i < 4 && (r = cover(w)) == 0; i++)
		;
	/* Once a look found every thread with a count, every thread made
	 * since inherits one from its maker's, and no count is closed that
	 * a live thread inherits (prune: after a whole listing), so a later
	 * look that is not whole (threads made and gone as it listed them)
	 * leaves it counted.  (A listing of a process gone fails.) */
	if (w->nc && !exited(w) && r == 1)
		w->partial = 0;
	n = w->closed + count_of(w->lead);	/* closed: of threads gone, just now too */
	for (size_t i = 0; i < w->nc; i++)
		n += count_of(w->c[i].fd);
	return n;
}

/* Was its main thread replaced by another's exec?  Its own task gone
 * (open_lead), and /proc/PID, the process's while it lives, has an
 * address space, the new program's: a thread's exec kills the others
 * and takes the main thread's id, whether or not its own count was set
 * (threads past the descriptors allowed, a thread the listings did not
 * catch), whether or not a clone(CLONE_VM) sibling keeps the old address
 * space alive. */
static int lead_replaced(const struct mw_procexec *w)
{
	struct pollfd p = { .fd = w->lead, .events = POLLIN };

	if (w->lead < 0 && !w->lead_gone)
		return 0;
	if (w->lead >= 0 && (poll(&p, 1, 0) != 1 || !(p.revents & POLLHUP)))
		return 0;
	return has_mm(w);
}

/* Is the address space at the start gone while the process lives, with
 * another in its place?  (The pidfd is asked after the read: a process
 * seen alive then was alive when the read found nothing.) */
static int mem_gone(const struct mw_procexec *w)
{
	char b;

	if (w->memfd < 0 || pread(w->memfd, &b, 1, (off_t)w->addr) != 0)
		return 0;
	return w->pidfd >= 0 && !mw_pidfd_exited(w->pidfd) && mw_process_alive(w->pid) &&
	       has_mm(w);
}

/* No witness saw an exec: 0, unless the process has exited before a
 * look found every thread of it counted: an exec from one that was not,
 * then its exit, leave nothing behind to see (its main thread
 * and its address space gone as at any exit), so which it did cannot be
 * told: 2, and why. */
static int untold(struct mw_procexec *w, char *why, size_t whylen)
{
	if (!w->partial || !exited(w))
		return 0;
	snprintf(w->why, sizeof(w->why), "process %d exited during the run, and an exec before "
		 "its exit cannot be ruled out: not every thread of it had its execs counted "
		 "(the kernel's sched_process_exec event: more threads than the %d descriptors "
		 "allowed, threads made faster than they could be listed, or no perf_event_open "
		 "or tracefs), and an exec from one of those leaves nothing to see once the "
		 "process has exited", (int)w->pid, COUNTER_FDS_MAX);
	w->seen = 2;
	snprintf(why, whylen, "%s", w->why);
	return 2;
}

int mw_procexec_check(struct mw_procexec *w, char *why, size_t whylen)
{
	char path[64], exe[PATH_MAX];
	const char *by = NULL;
	ssize_t n;

	if (!w->seen) {
		if ((w->nc || w->lead >= 0) && counted(w) > 0)
			by = "the kernel's sched_process_exec event, counted on its threads";
		else if (lead_replaced(w))
			by = "its main thread, replaced by the thread that made it";
		else if (w->gone_early || mem_gone(w))
			by = "the address space it had when the run started is gone while it runs";
		if (!by)
			return untold(w, why, whylen);
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)w->pid);
		if (w->pidfd < 0 || (n = readlink(path, exe, sizeof(exe) - 1)) <= 0 ||
		    mw_pidfd_exited(w->pidfd))
			n = 0;
		exe[n] = '\0';
		/* exe: the process's name for it, quoted where it is printed */
		snprintf(w->why, sizeof(w->why), "process %d replaced its program (exec) during "
			 "the run%s%s%s (seen by %s)", (int)w->pid, exe[0] ? ", now '" : "", exe,
			 exe[0] ? "'" : "", by);
		w->seen = 1;
	}
	snprintf(why, whylen, "%s", w->why);
	return w->seen;
}

void mw_procexec_free(struct mw_procexec *w)
{
	if (!w)
		return;
	drop_counters(w);
	if (w->lead_page)
		munmap(w->lead_page, (size_t)getpagesize());
	if (w->lead >= 0)
		close(w->lead);
	if (w->memfd >= 0)
		close(w->memfd);
	if (w->procfd >= 0)
		close(w->procfd);
	if (w->pidfd >= 0)
		close(w->pidfd);
	free(w);
}
