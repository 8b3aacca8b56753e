/* leftovers.c - work directories and the sweep; see leftovers.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "leftovers.h"
#include "procmem.h"
#include "runtime.h"
#include "tracer.h"

#define PREFIX "mallocwatch."

static const char *tmp_base(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

int mw_workdir_make(char *dir, size_t len, char *err, size_t errlen)
{
	if ((size_t)snprintf(dir, len, "%s/" PREFIX "%d.XXXXXX", tmp_base(), (int)getpid()) >= len) {
		snprintf(err, errlen, "TMPDIR '%s' is too long", tmp_base());
		return -1;
	}
	if (!mkdtemp(dir)) {
		snprintf(err, errlen, "cannot create a work directory '%s': %s", dir,
			 strerror(errno));
		dir[0] = '\0';
		return -1;
	}
	return 0;
}

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void mw_workdir_remove(const char *dir)
{
	if (dir && dir[0])
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
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

/* Is path (a tracer's cwd) the work directory of a dead run? */
static int in_dead_workdir(const char *cwd)
{
	const char *base = tmp_base();
	size_t n = strlen(base);
	char name[NAME_MAX + 1];
	pid_t pid;

	if (strncmp(cwd, base, n) != 0 || cwd[n] != '/')
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(cwd + n + 1, "/ "), cwd + n + 1);
	pid = run_pid(name);
	return pid && !mw_process_alive(pid);
}

/* Stop tracers (stap, stapbpf) left working in a dead run's directory. */
static int sweep_tracers(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found[64];
	int n = 0;

	while (d && (de = readdir(d)) && n < 64) {
		char path[64], cwd[PATH_MAX], comm[32];
		pid_t pid = (pid_t)atoi(de->d_name);
		ssize_t k;

		if (pid <= 0)
			continue;
		mw_process_comm(pid, comm, sizeof(comm));
		if (strcmp(comm, "stapbpf") != 0 && strcmp(comm, "stap") != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
		if ((k = readlink(path, cwd, sizeof(cwd) - 1)) <= 0)
			continue;
		cwd[k] = '\0';
		if (in_dead_workdir(cwd) && kill(pid, SIGTERM) == 0)
			found[n++] = pid;
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++) {
		long long until = mw_now_ms() + MW_SWEEP_WAIT_MS;

		while (mw_process_alive(found[i]) && mw_now_ms() < until)
			usleep(20000);
		if (!mw_process_alive(found[i]))
			continue;
		kill(found[i], SIGKILL);
		/* its exit closes its perf events, slowly; the definitions can
		 * go only after that */
		until = mw_now_ms() + MW_SWEEP_WAIT_MS;
		while (mw_process_alive(found[i]) && mw_now_ms() < until)
			usleep(20000);
	}
	return n;
}

/* Is pid a stapbpf that is still running (not dead, not a zombie)? */
static int live_stapbpf(pid_t pid)
{
	char comm[32];

	mw_process_comm(pid, comm, sizeof(comm));
	return strcmp(comm, "stapbpf") == 0 && mw_process_alive(pid);
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

int mw_wait_tracer(pid_t tracer, long grace_ms)
{
	long long until = mw_now_ms() + grace_ms, next_count = 0;
	int defs = INT_MAX, k;

	while (mw_process_alive(tracer)) {
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
		usleep(50000);
	}
	return 0;
}

/* One pass: remove the definitions of dead stapbpfs; how many went, and
 * in *busy how many the kernel still held (a perf event not yet let go). */
static int remove_dead_uprobes(int *busy)
{
	FILE *f = fopen(MW_UPROBE_EVENTS, "re");
	char line[4096], name[160];
	int removed = 0, fd;

	*busy = 0;
	if (!f)
		return 0;
	fd = open(MW_UPROBE_EVENTS, O_WRONLY | O_APPEND | O_CLOEXEC);
	while (fd >= 0 && fgets(line, sizeof(line), f)) {
		int pid, used = 0;

		/* "p:uprobes/stapprobe_PID_N /path:0x..." */
		if (sscanf(line, "p:uprobes/stapprobe_%d_%*d%n", &pid, &used) != 1 || !used)
			continue;
		if (live_stapbpf(pid))
			continue;	/* a running tracer's */
		snprintf(name, sizeof(name), "-:uprobes/%.*s", (int)strcspn(line + 10, " \n"),
			 line + 10);
		if (write(fd, name, strlen(name)) > 0)
			removed++;
		else if (errno == EBUSY)
			(*busy)++;
	}
	if (fd >= 0)
		close(fd);
	fclose(f);
	return removed;
}

int mw_sweep_uprobes(void)
{
	long long until = mw_now_ms() + MW_SWEEP_WAIT_MS;
	int removed = 0, busy;

	for (;;) {
		removed += remove_dead_uprobes(&busy);
		if (!busy || mw_now_ms() > until)
			return removed;
		usleep(100000);	/* a dead tracer's events are still being released */
	}
}

static int sweep_dirs(void)
{
	DIR *d = opendir(tmp_base());
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		pid_t pid = run_pid(de->d_name);
		struct stat sb;
		char path[PATH_MAX];

		if (!pid || mw_process_alive(pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp_base(), de->d_name);
		if (lstat(path, &sb) < 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() ||
		    (sb.st_mode & 0777) != 0700)
			continue;
		mw_workdir_remove(path);
		n += access(path, F_OK) != 0;
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
 * mallocwatch_PID for the run's mallocwatch; stapbpf removes them unless
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

		if (!pid || *end || mw_process_alive(pid) || module_running(de->d_name))
			continue;
		mw_runtime_procfs_remove(de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

void mw_sweep(struct mw_sweep *out)
{
	struct mw_sweep s;

	s.tracers = sweep_tracers();
	s.uprobes = mw_sweep_uprobes();
	s.dirs = sweep_dirs() + sweep_fifo_dirs();
	if (out)
		*out = s;
}

/* The tracer pid in dir's MW_DETACHING_FILE, or 0. */
static pid_t detaching_tracer(const char *dir)
{
	char path[PATH_MAX + 16];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/" MW_DETACHING_FILE, dir);
	if ((f = fopen(path, "re"))) {
		if (fscanf(f, "%d", &pid) != 1 || pid < 0)
			pid = 0;
		fclose(f);
	}
	return pid;
}

int mw_wait_detaching(void)
{
	DIR *d = opendir(tmp_base());
	struct dirent *de;
	pid_t watcher[64], tracer[64];
	int n = 0;

	while (d && (de = readdir(d)) && n < 64) {
		pid_t pid = run_pid(de->d_name), t;
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", tmp_base(), de->d_name);
		if (pid && mw_process_alive(pid) && (t = detaching_tracer(path)) > 0) {
			watcher[n] = pid;
			tracer[n++] = t;
		}
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++) {
		long long until;

		mw_wait_tracer(tracer[i], MW_SWEEP_WAIT_MS);
		until = mw_now_ms() + 5000;	/* its watcher's clean-up */
		while (mw_process_alive(watcher[i]) && mw_now_ms() < until)
			usleep(20000);
	}
	return n;
}
