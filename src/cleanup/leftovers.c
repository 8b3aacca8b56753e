/* leftovers.c - work directories and the sweep; see leftovers.h.  The
 * records of the tracers mallocwatch started, and the removal of their
 * uprobe definitions, are in uprobes.c. */
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
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "cache.h"
#include "fsutil.h"
#include "leftovers.h"
#include "pidfd.h"
#include "procmem.h"
#include "relsock.h"
#include "runtime.h"
#include "uprobes.h"

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
		if (fd >= 0 && mw_lock_path(fd, dir)) {
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

/* Could pid, named in a work directory's name, be that run still: a live
 * process of the effective user's (root's, for a run that traces) named
 * as mallocwatch or its watcher?  Only a run of an older mallocwatch,
 * which took no lock, needs this: a process another user forked until it
 * got that pid does not keep a dead run's directory (and the tracer
 * working in it) from the sweep. */
static int run_may_live(pid_t pid)
{
	char path[64], comm[32];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (!mw_process_alive(pid) || stat(path, &sb) < 0 || sb.st_uid != geteuid())
		return 0;
	mw_process_comm(pid, comm, sizeof(comm));
	return strcmp(comm, "mallocwatch") == 0 || strcmp(comm, "mw-detach") == 0;
}

/* Is the run of the work directory name (in tmp_base()) dead: a
 * directory of the effective user's, 0700, that no process holds the
 * lock of, and whose pid is not a run that may live (run_may_live)?  A
 * run is known by its lock: the pid in the name may be of another pid
 * namespace, or another user's process by now.  The pid is asked too
 * because a run of an older mallocwatch, which took no lock, must not be
 * taken for dead while it is running.  With keep, the lock
 * is held on the returned fd (the caller removes the directory and
 * closes it); else it is let go at once.  The fd, or -1 (alive, not a
 * work directory, not ours). */
static int dead_run_dir(const char *name, int keep)
{
	char path[PATH_MAX];
	struct stat sb;
	pid_t pid = run_pid(name);
	int fd;

	if (!pid || run_may_live(pid))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", tmp_base(), name);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0 || sb.st_uid != geteuid() || (sb.st_mode & 07777) != 0700 ||
	    !mw_lock_path(fd, path)) {	/* not removed and replaced while we locked it */
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

/* Is cwd (a recorded stapbpf's) "BASE/NAME (deleted)": the work
 * directory of a run whose process is dead, removed under it?  A tracer
 * left running there (its run and the watcher that should have stopped
 * it both gone) holds its uprobes until it is stopped. */
static int in_removed_workdir(const char *cwd)
{
	const char *base = tmp_base(), *del = " (deleted)";
	size_t n = strlen(base), len = strlen(cwd), dl = strlen(del);
	char name[NAME_MAX + 1];
	pid_t run;

	if (strncmp(cwd, base, n) != 0 || cwd[n] != '/' || len < n + 1 + dl ||
	    strcmp(cwd + len - dl, del) != 0 || len - dl - n - 1 > NAME_MAX)
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)(len - dl - n - 1), cwd + n + 1);
	run = run_pid(name);
	return run && !strchr(name, '/') && !run_may_live(run);
}

/* A pidfd for pid when it is a stap or stapbpf working in a dead run's
 * directory (read after the pidfd was opened and checked alive after:
 * the pid was not reused in between); -1 otherwise. */
static int orphan_tracer(pid_t pid, int *exiting, int *removed)
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
		   mw_tracer_recorded_alive(pid);
	*removed = !*exiting && k > 0 && strcmp(comm, "stapbpf") == 0 && in_removed_workdir(cwd) &&
		   mw_tracer_recorded_alive(pid);
	if ((!*exiting && (k <= 0 || (!in_dead_workdir(cwd) && !*removed))) ||
	    mw_pidfd_exited(fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Is there a work directory of a dead run in tmp_base() (looked for
 * until deadline; past it, as if there were)? */
static int dead_runs_any(long long deadline)
{
	DIR *d = opendir(tmp_base());
	struct dirent *de;
	int any = 0;

	for (unsigned k = 0; d && !any && (de = readdir(d)); k++) {
		if ((k & 255) == 0 && mw_now_ms() > deadline) {
			any = 1;
			break;
		}
		any = strncmp(de->d_name, PREFIX, strlen(PREFIX)) == 0 &&
		      dead_run_dir(de->d_name, 0) == 0;
	}
	if (d)
		closedir(d);
	return any;
}

/* Stop tracers (stap, stapbpf) left working in a dead run's directory,
 * or in one removed under them (a recorded stapbpf whose run is dead):
 * SIGTERM (they detach their uprobes and exit), waited for until
 * deadline together with those of ours already exiting; with full, or
 * for one in a removed directory, SIGKILL to one that has not ended by
 * then, and its end waited for
 * (its exit releases its perf events slowly; only then can its
 * definitions go).  How many were sent SIGTERM. */
static int sweep_tracers(long long deadline, int full)
{
	DIR *d = NULL;
	struct dirent *de;
	pid_t rec[64];
	int found[64], removed[64], n = 0, stopped = 0, foreign = 0, nrec = 0, ri = 0;

	/* an orphan works in a dead run's directory, or is a recorded
	 * stapbpf (one exiting, one whose directory was removed): a run's
	 * sweep asks the recorded pids alone when there is no dead run's
	 * directory, rather than every process (2090 processes cost a
	 * run's start 50 to 190 ms); --cleanup looks at every one */
	if (!full) {
		nrec = mw_tracer_records(rec, 64, &foreign);
		if (nrec <= 64 && !foreign && !dead_runs_any(deadline)) {
			if (!nrec)
				return 0;
		} else {
			nrec = -1;
		}
	}
	if (nrec <= 0)
		d = opendir("/proc");
	while (n < 64) {
		pid_t pid;
		int exiting = 0, rm = 0, fd;

		if (d && (de = readdir(d)))
			pid = (pid_t)atoi(de->d_name);
		else if (!d && ri < nrec)
			pid = rec[ri++];
		else
			break;
		fd = pid > 0 ? orphan_tracer(pid, &exiting, &rm) : -1;

		if (fd >= 0 && (exiting || mw_pidfd_signal(fd, SIGTERM) == 0)) {
			removed[n] = rm;
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

		/* one whose work directory was removed under it had its
		 * SIGINT and is stuck (stapbpf ignores a second one) */
		if (!mw_pidfd_wait(found[i], left > 0 ? left : 0) && (full || removed[i])) {
			mw_pidfd_signal(found[i], SIGKILL);
			mw_pidfd_wait(found[i], MW_SWEEP_WAIT_MS);
		}
		close(found[i]);
	}
	return stopped;
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

		if (pid <= 0 || !mw_stapbpf_live(pid))
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

/* stapbpf's procfs FIFO directories (runtime.h) of dead runs, named
 * mallocwatch_PID_XXXXXX for the run (whatever pid namespace the PID is
 * from), and their modules' lock files (MODULE.lock).  A module is in
 * use while its lock is held: by its tracer, or by its run about to start
 * it (mw_runtime_procfs_hold), however little of them this process can
 * see.  One whose lock no one holds is taken and its directory and lock
 * file removed; a directory without a lock file (a run of an older
 * mallocwatch) only when we see every process (mw_pidns_initial) and
 * no stapbpf runs its module. */
static int sweep_fifo_dirs(void)
{
	char base[PATH_MAX];
	DIR *d;
	struct dirent *de;
	int n = 0;

	if (mw_runtime_procfs_base(base, sizeof(base)) < 0 || !(d = opendir(base)))
		return 0;
	while ((de = readdir(d))) {
		char module[NAME_MAX + 1];
		size_t len = strlen(de->d_name), sl = strlen(MW_PROCFS_LOCK_SUFFIX);
		int lock = len > sl && strcmp(de->d_name + len - sl, MW_PROCFS_LOCK_SUFFIX) == 0, fd, r, dir;
		const char *end;
		pid_t pid;

		snprintf(module, sizeof(module), "%.*s", (int)(lock ? len - sl : len), de->d_name);
		pid = pid_after(module, MW_MODULE_PREFIX, &end);
		if (!pid || (*end && *end != '_') || (r = mw_runtime_procfs_take(module, &fd)) < 0)
			continue;
		dir = faccessat(dirfd(d), module, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
		if (r == 1 || (dir && !lock && mw_pidns_initial() && !module_running(module))) {
			n += dir;
			mw_runtime_procfs_remove(module);	/* under its lock */
		}
		if (fd >= 0)
			close(fd);
	}
	closedir(d);
	return n;
}

/* Is pid a staprun or stapio (the one process a loaded module of ours
 * is held by: staprun execs stapio)? */
static int stapio_live(pid_t pid)
{
	char comm[32] = "";

	mw_process_comm(pid, comm, sizeof(comm));
	/* a killed stapio its parent has not reaped yet (a zombie keeps its
	 * name, as under an init that is slow to reap) holds nothing */
	return (strcmp(comm, "stapio") == 0 || strcmp(comm, "staprun") == 0) &&
	       mw_process_alive(pid);
}

/* The next loaded module's name from /proc/modules (f) into name (256
 * bytes): 1, or 0 at the end. */
static int next_module(FILE *f, char *name)
{
	char line[512];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s", name) == 1)
			return 1;
	return 0;
}

/* Is the module name still in /proc/modules? */
static int module_loaded(const char *name)
{
	FILE *f = fopen("/proc/modules", "re");
	char have[256];
	int found = 0;

	while (!found && next_module(f, have))
		found = strcmp(have, name) == 0;
	if (f)
		fclose(f);
	return found;
}

/* One `staprun -d NAME`, waited for until deadline at most: its exit
 * status, or -1 when it was cut short. */
static int staprun_d(const char *name, long long deadline)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		execlp("staprun", "staprun", "-d", name, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (mw_now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(20000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Remove the loaded module name with `staprun -d NAME` (its end probe
 * runs, its uprobes go), waiting until deadline at most.  A module still
 * held (the killed stapio's files not yet let go: the kernel refuses to
 * remove it then) is tried again every 0.2 s.  1 when it is gone. */
static int unload_module(const char *name, long long deadline)
{
	for (;;) {
		if (staprun_d(name, deadline) == 0 || !module_loaded(name))
			return 1;
		if (mw_now_ms() + 200 > deadline)
			return 0;
		usleep(200000);
	}
}

int mw_sweep_kmods(long budget_ms)
{
	long long deadline = mw_now_ms() + budget_ms;
	FILE *f = fopen("/proc/modules", "re");
	char name[256];
	int n = 0;

	while (next_module(f, name)) {
		const char *us;
		char *end;
		long pid;

		if (strncmp(name, MW_KMOD_PREFIX, strlen(MW_KMOD_PREFIX)) != 0 ||
		    !(us = strrchr(name, '_')))
			continue;
		pid = strtol(us + 1, &end, 10);
		if (*end || pid <= 0 || stapio_live((pid_t)pid))
			continue;
		n += unload_module(name, deadline);
	}
	if (f)
		fclose(f);
	return n;
}

void mw_sweep_text(const struct mw_sweep *s, char *buf, size_t len)
{
	snprintf(buf, len, "%d tracer%s stopped, %d uprobe definition%s, %d work director%s, "
		 "%d kernel module%s, %d release socket%s and %d unfinished cache entr%s removed",
		 s->tracers, s->tracers == 1 ? "" : "s", s->uprobes, s->uprobes == 1 ? "" : "s",
		 s->dirs, s->dirs == 1 ? "y" : "ies", s->modules, s->modules == 1 ? "" : "s",
		 s->sockets, s->sockets == 1 ? "" : "s", s->cache, s->cache == 1 ? "y" : "ies");
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
	s.modules = mw_sweep_kmods(full ? budget_ms : MW_SWEEP_KMOD_MS);
	s.cache = mw_cache_sweep();
	s.sockets = mw_relsock_sweep();
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
		if (!mw_stapbpf_live(*tracer) || !mw_tracer_recorded_alive(*tracer) || mw_pidfd_exited(pfd)) {
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
