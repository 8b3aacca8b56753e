/* uprobes.c - root's records of the tracers mallocwatch started, and the
 * uprobe definitions those tracers leave; see uprobes.h.  A stapbpf
 * names its definitions in uprobe_events by its own pid,
 *
 *	p:uprobes/stapprobe_4242_0 /usr/lib/x86_64-linux-gnu/libc.so.6:0x...
 *
 * and its record, MW_RECORD_DIR/4026531836.4242, holds its start time
 * (4026531836 being the inode of its pid namespace).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "pidfd.h"
#include "procmem.h"
#include "runtime.h"
#include "uprobes.h"
#include "xalloc.h"

int mw_stapbpf_live(pid_t pid)
{
	char comm[32], path[64];
	struct stat sb;

	mw_process_comm(pid, comm, sizeof(comm));
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	/* running as us (root): anyone may name a process "stapbpf", and
	 * only root's can hold uprobes */
	return strcmp(comm, "stapbpf") == 0 && stat(path, &sb) == 0 && sb.st_uid == geteuid() &&
	       mw_process_alive(pid);
}

int mw_uprobes_of(pid_t tracer)
{
	FILE *f = fopen(MW_UPROBE_EVENTS, "re");
	char line[4096];
	int n = 0, pid;

	while (f && fgets(line, sizeof(line), f))
		n += sscanf(line, "p:uprobes/stapprobe_%d_", &pid) == 1 && pid == tracer;
	if (f)
		fclose(f);
	return f ? n : -1;
}

int mw_wait_tracer(pid_t tracer, int pidfd, long grace_ms)
{
	long long until = mw_now_ms() + grace_ms, next_count = 0;
	int defs = INT_MAX, k;

	while (!mw_pidfd_exited(pidfd)) {
		if (mw_now_ms() >= next_count) {	/* reading uprobe_events waits
							 * behind removals: not too often */
			next_count = mw_now_ms() + 1000;
			if ((k = mw_uprobes_of(tracer)) >= 0 && k < defs) {
				defs = k;
				until = mw_now_ms() + grace_ms;
			}
		}
		if (mw_now_ms() > until)
			return -1;
		mw_pidfd_wait(pidfd, 50);
	}
	return 0;
}

/* The name of the record of tracer pid: "NS.PID", NS the inode of our
 * pid namespace (pids, and so records, mean something only in it). */
static void record_name(pid_t pid, char *buf, size_t len)
{
	struct stat sb;

	snprintf(buf, len, "%llu.%d",
		 stat("/proc/self/ns/pid", &sb) == 0 ? (unsigned long long)sb.st_ino : 0ULL,
		 (int)pid);
}

static void record_path(pid_t pid, char *buf, size_t len)
{
	char name[64];

	record_name(pid, name, sizeof(name));
	snprintf(buf, len, MW_RECORD_DIR "/%s", name);
}

/* The start time of pid (proc(5), /proc/PID/stat field 22, clock ticks
 * since boot): with the pid, it names one process.  0 when it is gone. */
static unsigned long long start_time(pid_t pid)
{
	char buf[1024];
	const char *f = mw_proc_stat_fields(pid, buf, sizeof(buf));
	unsigned long long t = 0;

	if (!f)
		return 0;
	/* from the state, field 3, to the start time, field 22 */
	if (sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
		   "%*d %*d %*d %llu", &t) != 1)
		return 0;
	return t;
}

/* MW_RECORD_DIR, made root's 0700 when missing; an fd on it, or -1 when
 * it is not ours alone (then nothing is recorded and nothing swept). */
static int record_dir(int create)
{
	struct stat sb;
	int fd;

	if (create && mkdir(MW_RUN_DIR, 0700) < 0 && errno != EEXIST)
		return -1;
	if (create && mkdir(MW_RECORD_DIR, 0700) < 0 && errno != EEXIST)
		return -1;
	fd = open(MW_RECORD_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &sb) < 0 || sb.st_uid != geteuid() || (sb.st_mode & 077))) {
		close(fd);
		return -1;
	}
	return fd;
}

void mw_tracer_record(pid_t tracer)
{
	char name[64], line[128];
	int dir = record_dir(1), fd;

	if (dir < 0)
		return;
	record_name(tracer, name, sizeof(name));
	unlinkat(dir, name, 0);	/* an older process's, of the same pid */
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		const char *module = mw_runtime_procfs_module();
		int n = snprintf(line, sizeof(line), "%llu\n%s%s", start_time(tracer),
				 module ? module : "", module ? "\n" : "");

		if (write(fd, line, (size_t)n) != n)
			unlinkat(dir, name, 0);
		close(fd);
	}
	close(dir);
}

void mw_tracer_unrecord(pid_t tracer)
{
	char path[128];

	record_path(tracer, path, sizeof(path));
	unlink(path);
}

/* The record MW_RECORD_DIR/name: the tracer's start time into *t and
 * the module whose lock it held into module (runtime.h; "" in a record
 * of an older mallocwatch, which took no lock).  0, or -1 when there is
 * no such record. */
static int read_record(const char *name, unsigned long long *t, char *module, size_t len)
{
	char path[128], buf[160], mod[64] = "";

	snprintf(path, sizeof(path), MW_RECORD_DIR "/%s", name);
	if (mw_read_small(path, O_NOFOLLOW | O_NONBLOCK, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%llu %63s", t, mod) < 1)
		return -1;
	snprintf(module, len, "%s", strncmp(mod, MW_MODULE_PREFIX, strlen(MW_MODULE_PREFIX)) == 0 ?
		 mod : "");
	return 0;
}

/* The start time root's record gives tracer pid (a tracer mallocwatch
 * started), or 0 when there is no record; its module into module. */
static unsigned long long recorded_start(pid_t pid, char *module, size_t len)
{
	char name[64];
	unsigned long long t;

	record_name(pid, name, sizeof(name));
	return read_record(name, &t, module, len) == 0 ? t : 0;
}

/* Is pid a tracer mallocwatch started that has ended?  One that held its
 * module's lock has ended when no one holds it; of an older mallocwatch,
 * a live process with that pid and the recorded start time is the
 * tracer itself. */
static int recorded_dead(pid_t pid)
{
	char module[64];
	unsigned long long t = recorded_start(pid, module, sizeof(module));

	if (t && module[0])
		return !mw_runtime_procfs_held(module);
	return t && (!mw_process_alive(pid) || start_time(pid) != t);
}

int mw_tracer_recorded_alive(pid_t pid)
{
	char module[64];
	unsigned long long t = recorded_start(pid, module, sizeof(module));

	return t && mw_process_alive(pid) && start_time(pid) == t;
}

/* What a sweep knows once per pass: the pids live stapbpfs call their
 * own (the innermost of /proc/PID/status's NSpid: a stapbpf in a pid
 * namespace names its uprobe definitions with that one), the pid
 * namespaces with a process left (inodes of /proc/PID/ns/pid), our own.
 * complete is 0 when either list overflowed: then nothing may be judged
 * dead by it. */
struct liveness {
	pid_t stapbpf[256];
	int nstapbpf;
	unsigned long long ns[1024];
	int nns;
	int complete;
	char ours[64];		/* our record names' prefix, "NS." */
};

/* The innermost NSpid of pid, or 0. */
static pid_t own_pid(pid_t pid)
{
	char path[64], buf[4096], *line, *last;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) < 0 || !(line = strstr(buf, "\nNSpid:")))
		return 0;
	line[strcspn(line + 1, "\n") + 1] = '\0';
	last = strrchr(line, '\t');
	return (pid_t)atoi(last ? last + 1 : line + 7);
}

static void liveness_read(struct liveness *lv)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	lv->nstapbpf = lv->nns = 0;
	lv->complete = d != NULL;
	while (d && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name), own;
		char path[64];
		struct stat sb;
		int i;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
		if (stat(path, &sb) == 0) {
			for (i = 0; i < lv->nns && lv->ns[i] != (unsigned long long)sb.st_ino; i++)
				;
			if (i == lv->nns && lv->nns == 1024)
				lv->complete = 0;
			else if (i == lv->nns)
				lv->ns[lv->nns++] = (unsigned long long)sb.st_ino;
		}
		if (!mw_stapbpf_live(pid))
			continue;
		if (!(own = own_pid(pid)) || lv->nstapbpf == 256)
			lv->complete = 0;
		else
			lv->stapbpf[lv->nstapbpf++] = own;
	}
	if (d)
		closedir(d);
	record_name(0, lv->ours, sizeof(lv->ours));	/* "NS.0" */
	lv->ours[strlen(lv->ours) - 1] = '\0';
}

int mw_pidns_initial(void)
{
	struct stat sb;

	return stat("/proc/self/ns/pid", &sb) == 0 && sb.st_ino == 0xEFFFFFFCULL;
}

/* Is the record name ("NS.PID") of a tracer that has ended (1), one
 * that may run (0), or no record of ours (-1)?  A tracer that held its
 * module's lock has ended when no one holds it, whatever namespace it
 * ran in.  Of an older mallocwatch: in our pid namespace, the process
 * with that pid is gone or another (its start time); in another, seen
 * from the initial one, that namespace has no process left at all (it
 * was killed with its last process, the tracer and its watcher with
 * it). */
static int record_dead(const char *name, const struct liveness *lv, pid_t *pid)
{
	const char *dot = strrchr(name, '.');
	unsigned long long ns, t;
	char module[64];

	*pid = dot ? (pid_t)atoi(dot + 1) : 0;
	if (*pid <= 0 || read_record(name, &t, module, sizeof(module)) < 0)
		return -1;
	if (module[0])
		return !mw_runtime_procfs_held(module);
	if (!lv->complete)
		return 0;	/* not all seen: a live one may be among the rest */
	if (strncmp(name, lv->ours, strlen(lv->ours)) == 0)
		return recorded_dead(*pid);
	if (sscanf(name, "%llu.", &ns) != 1 || !mw_pidns_initial())
		return 0;	/* its processes may be where we cannot see */
	for (int i = 0; i < lv->nns; i++)
		if (lv->ns[i] == ns)
			return 0;	/* its pids are not ours to judge */
	return 1;
}

/* May the definitions named for pid go: a record of a tracer of ours
 * that has ended, no record of that pid (another pid namespace's) that
 * may still run, and no live stapbpf anywhere we can see calls itself
 * pid? */
static int ours_and_dead(pid_t pid, const struct liveness *lv)
{
	int dir = record_dir(0), dead = 0, alive = 0;
	DIR *d = dir >= 0 ? fdopendir(dir) : NULL;
	struct dirent *de;

	for (int i = 0; i < lv->nstapbpf; i++)
		if (lv->stapbpf[i] == pid)
			pid = 0;
	while (pid && d && !alive && (de = readdir(d))) {
		pid_t p;
		int r = record_dead(de->d_name, lv, &p);

		if (p == pid && r >= 0) {
			dead |= r == 1;
			alive |= r == 0;
		}
	}
	if (d)
		closedir(d);
	else if (dir >= 0)
		close(dir);
	return dead && !alive;
}

/* One pass: remove the definitions of dead tracers of ours; how many
 * went, and in *busy how many the kernel still held (a perf event not
 * yet let go). */
static int remove_dead_uprobes(int *busy)
{
	FILE *f = fopen(MW_UPROBE_EVENTS, "re");
	char line[4096], (*names)[160] = NULL;
	struct liveness lv;
	size_t n = 0, cap = 0;
	int removed = 0, fd, last = 0, last_dead = 0;

	*busy = 0;
	if (!f)
		return 0;
	liveness_read(&lv);
	/* the names first: removing while the file is read skips lines */
	while (fgets(line, sizeof(line), f)) {
		int pid, used = 0;

		/* "p:uprobes/stapprobe_PID_N /path:0x..." */
		if (sscanf(line, "p:uprobes/stapprobe_%d_%*d%n", &pid, &used) != 1 || !used)
			continue;
		if (pid != last) {	/* a tracer's definitions come together */
			last = pid;
			last_dead = ours_and_dead(pid, &lv);
		}
		if (!last_dead)
			continue;	/* a running tracer's, or not one of ours */
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = xrealloc(names, cap * sizeof(*names));
		}
		snprintf(names[n++], sizeof(names[0]), "-:uprobes/%.*s",
			 (int)strcspn(line + 10, " \n"), line + 10);
	}
	fclose(f);
	fd = n ? open(MW_UPROBE_EVENTS, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
	for (size_t i = 0; fd >= 0 && i < n; i++) {
		if (write(fd, names[i], strlen(names[i])) > 0)
			removed++;
		else if (errno == EBUSY)
			(*busy)++;
	}
	if (fd >= 0)
		close(fd);
	free(names);
	return removed;
}

/* Records of tracers that have ended and have no definition left. */
static void prune_records(void)
{
	int dir = record_dir(0);
	DIR *d = dir >= 0 ? fdopendir(dir) : NULL;
	struct dirent *de;
	struct liveness lv;

	liveness_read(&lv);
	while (d && (de = readdir(d))) {
		pid_t pid;

		if (record_dead(de->d_name, &lv, &pid) == 1 && mw_uprobes_of(pid) == 0)
			unlinkat(dir, de->d_name, 0);
	}
	if (d)
		closedir(d);
	else if (dir >= 0)
		close(dir);
}

int mw_tracer_records(pid_t *pids, int max, int *foreign)
{
	int dir = record_dir(0), n = 0;
	DIR *d = dir >= 0 ? fdopendir(dir) : NULL;
	struct dirent *de;
	char ours[64];

	*foreign = 0;
	record_name(0, ours, sizeof(ours));	/* "NS.0" */
	ours[strlen(ours) - 1] = '\0';
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (strncmp(de->d_name, ours, strlen(ours)) != 0) {
			*foreign = 1;
			continue;
		}
		if (n < max)
			pids[n] = (pid_t)atoi(de->d_name + strlen(ours));
		n++;
	}
	if (d)
		closedir(d);
	else if (dir >= 0)
		close(dir);
	return n;
}

/* Is there a record of a tracer of ours that has ended?  Without one,
 * no definition may go (ours_and_dead) and no record either: the sweep
 * need not read uprobe_events, whose every read waits for the kernel's
 * event_mutex behind the uprobe removals under way on the machine
 * (1.2 s per 4 KiB read measured while other tracers detached: the
 * start of every run paid it).  Without any record it need not list
 * /proc either (liveness_read: 2090 processes cost a run's start 50 to
 * 190 ms). */
static int any_dead_record(void)
{
	pid_t pids[64];
	int dir, dead = 0, foreign, n = mw_tracer_records(pids, 64, &foreign);
	DIR *d;
	struct dirent *de;
	struct liveness lv;

	/* ours: each asked directly (a run's start: the record of the run
	 * before, its tracer still detaching, is the usual one) */
	for (int i = 0; i < n && i < 64; i++)
		if (recorded_dead(pids[i]))
			return 1;
	if (n <= 64 && !foreign)
		return 0;
	dir = record_dir(0);
	d = dir >= 0 ? fdopendir(dir) : NULL;
	if (!d) {
		if (dir >= 0)
			close(dir);
		return 0;
	}
	liveness_read(&lv);
	while (!dead && (de = readdir(d))) {
		pid_t pid;

		dead = de->d_name[0] != '.' && record_dead(de->d_name, &lv, &pid) == 1;
	}
	closedir(d);
	return dead;
}

int mw_sweep_uprobes(long budget_ms)
{
	long long until = mw_now_ms() + budget_ms;
	int removed = 0, busy;

	if (!any_dead_record())
		return 0;
	for (;;) {
		removed += remove_dead_uprobes(&busy);
		if (!busy || mw_now_ms() + 100 > until)
			break;
		usleep(100000);	/* a dead tracer's events are still being released */
	}
	prune_records();
	return removed;
}
