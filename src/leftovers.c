/* leftovers.c - work directories and the sweep; see leftovers.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "leftovers.h"
#include "pidfd.h"
#include "procmem.h"
#include "runtime.h"
#include "xalloc.h"

#define PREFIX "mallocwatch."

static const char *tmp_base(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

/* This process's work directory, locked (flock LOCK_EX) on lock_fd for
 * as long as the run (or its watcher, which inherits it) lives. */
static int lock_fd = -1;

/* Take the lock of the directory open on fd without waiting; 0, or -1
 * when a live run holds it. */
static int try_lock(int fd)
{
	return flock(fd, LOCK_EX | LOCK_NB);
}

/* Is the directory at path still the one open on fd (not removed or
 * replaced by a sweep that held the lock before us)? */
static int still_there(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && a.st_nlink > 0 && lstat(path, &b) == 0 &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

int mw_workdir_make(char *dir, size_t len, char *err, size_t errlen)
{
	char why[PATH_MAX + 64];
	int base = mw_dir_open_safe(tmp_base(), 0, 1, why, sizeof(why));

	dir[0] = '\0';
	if (base < 0) {	/* another user could move our directory away */
		snprintf(err, errlen, "TMPDIR: %s: another user could replace the run's work "
			 "directory; use a directory of root's, or a sticky one like /tmp", why);
		return -1;
	}
	close(base);
	for (int tries = 0; tries < 8; tries++) {
		int fd;

		if ((size_t)snprintf(dir, len, "%s/" PREFIX "%d.XXXXXX", tmp_base(),
				     (int)getpid()) >= len) {
			snprintf(err, errlen, "TMPDIR '%s' is too long", tmp_base());
			return -1;
		}
		if (!mkdtemp(dir)) {
			snprintf(err, errlen, "cannot create a work directory '%s': %s", dir,
				 strerror(errno));
			dir[0] = '\0';
			return -1;
		}
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && try_lock(fd) == 0 && still_there(fd, dir)) {
			lock_fd = fd;
			return 0;
		}
		if (fd >= 0)	/* a sweep took it for a dead run's: another */
			close(fd);
	}
	snprintf(err, errlen, "cannot lock a work directory in '%s'", tmp_base());
	dir[0] = '\0';
	return -1;
}

int mw_workdir_lock_fd(void)
{
	return lock_fd;
}

void mw_workdir_remove(const char *dir)
{
	mw_remove_tree(dir);
	mw_workdir_unlock();	/* the run is over: its directory with it */
}

void mw_workdir_unlock(void)
{
	if (lock_fd >= 0)
		close(lock_fd);
	lock_fd = -1;
}

/* The pid in name right after prefix, end past it; 0 when there is none
 * (no prefix, no digits, out of range). */
static pid_t pid_after(const char *name, const char *prefix, const char **endp)
{
	char *end;
	long pid;

	if (strncmp(name, prefix, strlen(prefix)) != 0)
		return 0;
	name += strlen(prefix);
	pid = strtol(name, &end, 10);
	if (end == name || pid <= 0 || pid > INT_MAX)
		return 0;
	*endp = end;
	return (pid_t)pid;
}

/* "mallocwatch.PID.XXXXXX": the PID, or 0 when name is not of that form. */
static pid_t run_pid(const char *name)
{
	const char *end;
	pid_t pid = pid_after(name, PREFIX, &end);

	return pid && *end == '.' && strlen(end + 1) == 6 ? pid : 0;
}

/* Is the run of the work directory name (in tmp_base()) dead: a
 * directory of the effective user's, 0700, that no process holds the
 * lock of, and whose pid is not alive?  A run is known by its lock: the
 * pid in the name may be of another pid namespace.  The pid is asked
 * too because a run of an older mallocwatch, which took no lock, must
 * not be taken for dead while it is running.  With keep, the lock
 * is held on the returned fd (the caller removes the directory and
 * closes it); else it is let go at once.  The fd, or -1 (alive, not a
 * work directory, not ours). */
static int dead_run_dir(const char *name, int keep)
{
	char path[PATH_MAX];
	struct stat sb;
	pid_t pid = run_pid(name);
	int fd;

	if (!pid || mw_process_alive(pid))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", tmp_base(), name);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0 || sb.st_uid != geteuid() || (sb.st_mode & 07777) != 0700 ||
	    try_lock(fd) < 0 || !still_there(fd, path)) {	/* not removed and replaced
								 * while we locked it */
		close(fd);
		return -1;
	}
	if (!keep) {
		close(fd);
		return 0;
	}
	return fd;
}

/* Is path (a tracer's cwd) the work directory of a dead run? */
static int in_dead_workdir(const char *cwd)
{
	const char *base = tmp_base();
	size_t n = strlen(base);
	char name[NAME_MAX + 1];

	if (strncmp(cwd, base, n) != 0 || cwd[n] != '/')
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(cwd + n + 1, "/ "), cwd + n + 1);
	return dead_run_dir(name, 0) == 0;
}

/* A pidfd for pid when it is a stap or stapbpf working in a dead run's
 * directory (read after the pidfd was opened and checked alive after:
 * the pid was not reused in between); -1 otherwise. */
static int recorded_alive(pid_t pid);

static int orphan_tracer(pid_t pid, int *exiting)
{
	char path[64], cwd[PATH_MAX], comm[32];
	int fd = mw_pidfd_open(pid);
	ssize_t k;

	if (fd < 0)
		return -1;
	mw_process_comm(pid, comm, sizeof(comm));
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	k = (strcmp(comm, "stapbpf") == 0 || strcmp(comm, "stap") == 0) ?
		readlink(path, cwd, sizeof(cwd) - 1) : -1;
	if (k > 0)
		cwd[k] = '\0';
	/* a stapbpf of ours already exiting (its cwd let go: it got its
	 * SIGTERM, from its dead run's PR_SET_PDEATHSIG) is removing its
	 * uprobes: waited for like an orphan, not signalled again */
	*exiting = k < 0 && errno == ENOENT && strcmp(comm, "stapbpf") == 0 &&
		   recorded_alive(pid);
	if ((!*exiting && (k <= 0 || !in_dead_workdir(cwd))) || mw_pidfd_exited(fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Stop tracers (stap, stapbpf) left working in a dead run's directory:
 * SIGTERM (they detach their uprobes and exit), waited for until
 * deadline together with those of ours already exiting; with full,
 * SIGKILL to one that has not ended by then, and its end waited for
 * (its exit releases its perf events slowly; only then can its
 * definitions go).  How many were sent SIGTERM. */
static int sweep_tracers(long long deadline, int full)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found[64], n = 0, stopped = 0;

	while (d && (de = readdir(d)) && n < 64) {
		pid_t pid = (pid_t)atoi(de->d_name);
		int exiting = 0, fd = pid > 0 ? orphan_tracer(pid, &exiting) : -1;

		if (fd >= 0 && (exiting || mw_pidfd_signal(fd, SIGTERM) == 0)) {
			found[n++] = fd;
			stopped += !exiting;
		} else if (fd >= 0) {
			close(fd);
		}
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++) {
		long long left = deadline - mw_now_ms();

		if (!mw_pidfd_wait(found[i], left > 0 ? left : 0) && full) {
			mw_pidfd_signal(found[i], SIGKILL);
			mw_pidfd_wait(found[i], MW_SWEEP_WAIT_MS);
		}
		close(found[i]);
	}
	return stopped;
}

/* Is pid a stapbpf that is still running (not dead, not a zombie)? */
static int live_stapbpf(pid_t pid)
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
	char buf[1024], *p;
	unsigned long long t = 0;

	if (mw_proc_stat(pid, buf, sizeof(buf)) < 0)
		return 0;
	if (!(p = strrchr(buf, ')')))	/* comm may hold anything but ')' last */
		return 0;
	/* after ") ": state is field 3; the start time field 22 */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
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
	char name[64], line[64];
	int dir = record_dir(1), fd;

	if (dir < 0)
		return;
	record_name(tracer, name, sizeof(name));
	unlinkat(dir, name, 0);	/* an older process's, of the same pid */
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		int n = snprintf(line, sizeof(line), "%llu\n", start_time(tracer));

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

/* The start time root's record gives tracer pid (a tracer mallocwatch
 * started), or 0 when there is no record. */
static unsigned long long recorded_start(pid_t pid)
{
	char path[128], buf[64];
	unsigned long long t;

	record_path(pid, path, sizeof(path));
	if (mw_read_small(path, O_NOFOLLOW | O_NONBLOCK, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%llu", &t) != 1)
		return 0;
	return t;
}

/* Is pid a tracer mallocwatch started that has ended?  A live process
 * with that pid and the recorded start time is the tracer itself. */
static int recorded_dead(pid_t pid)
{
	unsigned long long t = recorded_start(pid);

	return t && (!mw_process_alive(pid) || start_time(pid) != t);
}

/* Is pid a tracer mallocwatch started, still running? */
static int recorded_alive(pid_t pid)
{
	unsigned long long t = recorded_start(pid);

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
		if (!live_stapbpf(pid))
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

/* Is the record name ("NS.PID") of a tracer that has ended: in our pid
 * namespace, the process with that pid is gone or another (its start
 * time); in another, that namespace has no process left at all (it was
 * killed with its last process, the tracer and its watcher with it). */
static int record_dead(const char *name, const struct liveness *lv, pid_t *pid)
{
	const char *dot = strrchr(name, '.');
	unsigned long long ns;

	*pid = dot ? (pid_t)atoi(dot + 1) : 0;
	if (*pid <= 0)
		return 0;
	if (!lv->complete)
		return 0;	/* not all seen: a live one may be among the rest */
	if (strncmp(name, lv->ours, strlen(lv->ours)) == 0)
		return recorded_dead(*pid);
	if (sscanf(name, "%llu.", &ns) != 1)
		return 0;
	for (int i = 0; i < lv->nns; i++)
		if (lv->ns[i] == ns)
			return 0;	/* its pids are not ours to judge */
	return 1;
}

/* May the definitions named for pid go: a record of a tracer of ours
 * that has ended, and no live stapbpf anywhere we can see calls itself
 * pid? */
static int ours_and_dead(pid_t pid, const struct liveness *lv)
{
	int dir = record_dir(0), dead = 0;
	DIR *d = dir >= 0 ? fdopendir(dir) : NULL;
	struct dirent *de;

	for (int i = 0; i < lv->nstapbpf; i++)
		if (lv->stapbpf[i] == pid)
			pid = 0;
	while (pid && d && !dead && (de = readdir(d))) {
		pid_t p;

		dead = record_dead(de->d_name, lv, &p) && p == pid;
	}
	if (d)
		closedir(d);
	else if (dir >= 0)
		close(dir);
	return dead;
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

		if (record_dead(de->d_name, &lv, &pid) && mw_uprobes_of(pid) == 0)
			unlinkat(dir, de->d_name, 0);
	}
	if (d)
		closedir(d);
	else if (dir >= 0)
		close(dir);
}

int mw_sweep_uprobes(long budget_ms)
{
	long long until = mw_now_ms() + budget_ms;
	int removed = 0, busy;

	for (;;) {
		removed += remove_dead_uprobes(&busy);
		if (!busy || mw_now_ms() + 100 > until)
			break;
		usleep(100000);	/* a dead tracer's events are still being released */
	}
	prune_records();
	return removed;
}

/* Work directories of dead runs in tmp_base(), removed until deadline
 * (TMPDIR is shared: anyone can fill it with names that look like ours). */
static int sweep_dirs(long long deadline)
{
	DIR *d = opendir(tmp_base());
	struct dirent *de;
	int n = 0;

	for (unsigned k = 0; d && (de = readdir(d)); k++) {
		if ((k & 255) == 0 && mw_now_ms() > deadline)
			break;	/* the rest next time */
		char path[PATH_MAX];
		int fd = dead_run_dir(de->d_name, 1);

		if (fd < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp_base(), de->d_name);
		mw_remove_tree(path);	/* locked */
		n += access(path, F_OK) != 0;
		close(fd);
	}
	if (d)
		closedir(d);
	return n;
}

/* Is a stapbpf running module's object ("MODULE.bo" in its argv, as
 * tracer_argv() gives it): a tracer detaching after its run has ended,
 * whose watcher removes the FIFO directory once it is done? */
static int module_running(const char *module)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	while (d && !found && (de = readdir(d))) {
		char path[64], args[4096];
		pid_t pid = (pid_t)atoi(de->d_name);
		ssize_t n;
		int fd;

		if (pid <= 0 || !live_stapbpf(pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, args, sizeof(args) - 1);
		close(fd);
		if (n <= 0)
			continue;
		args[n] = '\0';	/* NUL-separated arguments */
		for (ssize_t i = 0; i < n; i += (ssize_t)strlen(args + i) + 1) {
			const char *a = strrchr(args + i, '/') ? strrchr(args + i, '/') + 1 : args + i;
			size_t len = strlen(module);

			if (strncmp(a, module, len) == 0 && strcmp(a + len, ".bo") == 0)
				found = 1;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* stapbpf's procfs FIFO directories (runtime.h) of dead runs: named
 * mallocwatch_PID_XXXXXX for the run; stapbpf removes them unless
 * it was killed.  Not one whose tracer is still detaching after its run
 * (mallocwatch gone, the tracer not): that is no leftover. */
static int sweep_fifo_dirs(void)
{
	char base[PATH_MAX];
	DIR *d;
	struct dirent *de;
	int n = 0;

	if (mw_runtime_procfs_base(base, sizeof(base)) < 0 || !(d = opendir(base)))
		return 0;
	while ((de = readdir(d))) {
		const char *end;
		pid_t pid = pid_after(de->d_name, MW_MODULE_PREFIX, &end);

		/* mallocwatch_PID_XXXXXX (older runs: mallocwatch_PID); the
		 * directory lives exactly as long as a stapbpf running its
		 * module (which makes and removes it), whatever pid namespace
		 * the PID in its name is from */
		if (!pid || (*end && *end != '_') || module_running(de->d_name))
			continue;
		mw_runtime_procfs_remove(de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

void mw_sweep(struct mw_sweep *out, long budget_ms)
{
	struct mw_sweep s;
	long long start = mw_now_ms();
	int full = budget_ms >= MW_SWEEP_WAIT_MS;
	long left;

	/* a run's sweep shares one budget; --cleanup gives each part its
	 * own (a tracer killed after its wait still has definitions the
	 * kernel lets go only slowly) */
	s.tracers = sweep_tracers(start + (full ? budget_ms : budget_ms / 2), full);
	left = full ? budget_ms : budget_ms - (long)(mw_now_ms() - start);
	s.uprobes = mw_sweep_uprobes(left > 0 ? left : 0);
	s.dirs = sweep_dirs(full ? mw_now_ms() + budget_ms : start + budget_ms) + sweep_fifo_dirs();
	if (out)
		*out = s;
}

/* The tracer in dir's MW_DETACHING_FILE: a pidfd for it when dir is a
 * work directory of ours (the effective user's, 0700, not a link) whose
 * lock a watcher holds, the file a regular file of ours, and the pid in
 * it a live stapbpf of ours (recorded, with its start time); else
 * -1.  With a pidfd, *dir_fd is an fd on dir (the caller closes it).
 * Nothing planted by another user is opened, waited on or followed: a
 * FIFO or a link there is refused without blocking. */
static int detaching_tracer(const char *dir, pid_t *tracer, int *dir_fd)
{
	char buf[32];
	struct stat sb;
	int dfd, fd, pfd = -1;
	ssize_t n;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	/* a watcher holds the lock while its tracer detaches: a free lock
	 * is a watcher gone, nothing to wait for */
	if (fstat(dfd, &sb) < 0 || sb.st_uid != geteuid() || (sb.st_mode & 07777) != 0700 ||
	    try_lock(dfd) == 0) {
		close(dfd);
		return -1;
	}
	fd = openat(dfd, MW_DETACHING_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	n = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() ?
		read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = '\0';
		*tracer = (pid_t)atoi(buf);
		pfd = *tracer > 0 ? mw_pidfd_open(*tracer) : -1;
	}
	if (pfd >= 0) {	/* a tracer of ours (its record, its start time), still it */
		if (!live_stapbpf(*tracer) || !recorded_alive(*tracer) || mw_pidfd_exited(pfd)) {
			close(pfd);
			pfd = -1;
		}
	}
	if (pfd < 0)
		close(dfd);
	else
		*dir_fd = dfd;
	return pfd;
}

/* Wait up to ms for the run of the directory open on fd to let go of
 * its lock (its watcher has ended). */
static void wait_unlocked(int fd, long ms)
{
	long long until = mw_now_ms() + ms;

	while (try_lock(fd) < 0 && mw_now_ms() < until)
		usleep(20000);
}

int mw_wait_detaching(void)
{
	DIR *d = opendir(tmp_base());
	struct dirent *de;
	pid_t tracer[64];
	int dfd[64], tfd[64], n = 0;

	long long deadline = mw_now_ms() + MW_SWEEP_WAIT_MS;

	for (unsigned k = 0; d && (de = readdir(d)) && n < 64; k++) {
		char path[PATH_MAX];

		if ((k & 255) == 0 && mw_now_ms() > deadline)
			break;	/* a TMPDIR flooded with names like ours */
		if (!run_pid(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp_base(), de->d_name);
		if ((tfd[n] = detaching_tracer(path, &tracer[n], &dfd[n])) >= 0)
			n++;
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++) {
		mw_wait_tracer(tracer[i], tfd[i], MW_SWEEP_WAIT_MS);
		wait_unlocked(dfd[i], 5000);	/* its watcher's clean-up */
		close(tfd[i]);
		close(dfd[i]);
	}
	return n;
}
