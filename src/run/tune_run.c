/* tune_run.c - run a program once and measure it; see tune_run.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "explain.h"
#include "metrics.h"
#include "glibcinfo.h"
#include "leftovers.h"
#include "procmem.h"
#include "tune_run.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* GLIBC_TUNABLES: the inherited one and tunables after it. */
static void set_tunables(const char *tunables)
{
	const char *old = getenv("GLIBC_TUNABLES");
	size_t len;
	char *v;

	if (!tunables || !tunables[0])
		return;
	len = (old ? strlen(old) + 1 : 0) + strlen(tunables) + 1;
	if ((v = malloc(len))) {
		snprintf(v, len, "%s%s%s", old ? old : "", old ? ":" : "", tunables);
		setenv("GLIBC_TUNABLES", v, 1);
	}
}

/* The tunables whose setting makes mp_.no_dyn_threshold 1 (malloc.c's
 * do_set_mmap_threshold, do_set_trim_threshold, do_set_top_pad and
 * do_set_mmaps_max), which nothing sets back to 0. */
static const char *const fixes_dyn[] = { "glibc.malloc.mmap_threshold",
	"glibc.malloc.trim_threshold", "glibc.malloc.top_pad", "glibc.malloc.mmap_max" };

int mw_tune_not_applied(const char *tunables, int known, uint64_t no_dyn_threshold,
			uint64_t mmap_threshold, char *why, size_t len)
{
	const char *t = tunables;

	if (!t || !known || no_dyn_threshold)
		return 0;
	while (*t) {
		size_t n = strcspn(t, ":"), k = strcspn(t, "=");

		for (size_t i = 0; i < sizeof(fixes_dyn) / sizeof(fixes_dyn[0]); i++)
			if (k < n && k == strlen(fixes_dyn[i]) && !strncmp(t, fixes_dyn[i], k)) {
				snprintf(why, len, "glibc did not apply %.*s: mp_.no_dyn_threshold "
					 "is 0 at exit (mp_.mmap_threshold %" PRIu64 "), which "
					 "that setting makes 1 (a value this glibc does not "
					 "take, e.g. 2.31 no mmap threshold above 32 MiB; or "
					 "the program never called malloc)",
					 (int)(n > 512 ? 512 : n), t, mmap_threshold);
				return 1;
			}
		t += n + (t[n] == ':');
	}
	return 0;
}

/* In the child: stdin, stdout, stderr; GLIBC_TUNABLES; held on holdfd
 * until the parent has seized us (a byte); exec.  Never returns; the
 * exec's errno goes to errfd. */
static void child(char *const *argv, const char *tunables, int show_output, int holdfd,
		  int errfd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), e;
	char go;

	if (null >= 0) {
		dup2(null, 0);
		if (!show_output) {
			dup2(null, 1);
			dup2(null, 2);
		}
	}
	set_tunables(tunables);
	if (read(holdfd, &go, 1) != 1)	/* seized meanwhile */
		_exit(127);
	execvp(argv[0], argv);
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* The exit stop: the allocator, the ledger and the findings now; a
 * setting glibc did not apply, refused (m->why, no figures at exit). */
static void at_exit_stop(pid_t pid, const char *tunables, long timeout_ms,
			 struct mw_tune_sample *m, struct mw_finding **findings, size_t *nfindings)
{
	char err[PATH_MAX + 512];
	struct mw_explained e;
	struct mw_glibc g;

	m->why[0] = '\0';
	m->rss_exit = mw_process_rss(pid);
	if (mw_glibc_load(pid, &g, err, sizeof(err)) < 0 ||
	    mw_explain_read(pid, &g, timeout_ms, &e, err, sizeof(err)) < 0) {
		snprintf(m->why, sizeof(m->why), "the allocator at exit: %.990s", err);
		return;
	}
	if (mw_tune_not_applied(tunables, g.mp_no_dyn_threshold.off >= 0, e.s->no_dyn_threshold,
				e.s->mmap_threshold, m->why, sizeof(m->why))) {
		m->rss_exit = MW_TUNE_UNKNOWN;
		mw_explained_free(&e);
		return;
	}
	m->arenas_exit = e.s->narenas;
	if (!e.l)
		snprintf(m->why, sizeof(m->why), "no RSS ledger at exit: %.990s", e.lerr);
	if (e.l) {
		m->rss_exit = e.l->total.rss;
		m->in_use_exit = e.l->total.in_use;
		m->free_exit = e.l->total.free_resident + e.l->total.top;
		if (e.l->peak_rss)
			m->peak_rss = e.l->peak_rss;
	}
	if (findings && e.f) {
		*findings = e.f;
		*nfindings = e.nf;
		e.f = NULL;
	}
	mw_explained_free(&e);
}

/* Seize pid, held on the other end of holdw, for its exit stop (when
 * that fails it runs unmeasured at exit), then release it: 0, or -1 (it
 * is gone). */
static int seize(pid_t pid, int holdw)
{
	int r;

	ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL));
	r = write(holdw, "g", 1) == 1 ? 0 : -1;
	close(holdw);
	return r;
}

int mw_tune_run(char *const *argv, const char *tunables, int show_output, long timeout_ms,
		struct mw_tune_sample *m, struct mw_finding **findings, size_t *nfindings,
		char *err, size_t errlen)
{
	int pfd[2], hold[2], st, e = 0;
	struct rusage ru;
	double t0, held = 0;	/* held: in its exit stop, being read */
	pid_t pid;

	*m = (struct mw_tune_sample){ .peak_rss = MW_TUNE_UNKNOWN, .rss_exit = MW_TUNE_UNKNOWN,
		.in_use_exit = MW_TUNE_UNKNOWN, .free_exit = MW_TUNE_UNKNOWN,
		.arenas_exit = MW_TUNE_UNKNOWN, .waits = MW_TUNE_UNKNOWN,
		.why = "not held in its exit stop (ptrace)" };
	if (findings) {
		*findings = NULL;
		*nfindings = 0;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0 || pipe2(hold, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot make a pipe: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) < 0) {
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		close(hold[0]);
		close(hold[1]);
		return -1;
	}
	if (pid == 0) {
		close(hold[1]);
		child(argv, tunables, show_output, hold[0], pfd[1]);
	}
	close(pfd[1]);
	close(hold[0]);
	if (seize(pid, hold[1]) < 0) {
		close(pfd[0]);
		waitpid(pid, NULL, 0);
		snprintf(err, errlen, "cannot start '%s'", argv[0]);
		return -1;
	}
	t0 = now_s();
	for (;;) {
		pid_t w = wait4(pid, &st, 0, &ru);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || !WIFSTOPPED(st))
			break;
		if (st >> 16 == PTRACE_EVENT_EXIT) {
			double t1 = now_s();

			at_exit_stop(pid, tunables, timeout_ms, m, findings, nfindings);
			held += now_s() - t1;
			ptrace(PTRACE_CONT, pid, 0, 0);
		} else if (st >> 16 == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_LISTEN, pid, 0, 0);	/* a group-stop stays */
		} else {
			ptrace(PTRACE_CONT, pid, 0, (void *)(long)WSTOPSIG(st));
		}
	}
	m->wall_s = now_s() - t0 - held;	/* the program's own time */
	m->cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		   (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	if (m->peak_rss == MW_TUNE_UNKNOWN)
		m->peak_rss = (uint64_t)ru.ru_maxrss * 1024;
	m->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (read(pfd[0], &e, sizeof(e)) == sizeof(e)) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0], strerror(e));
		close(pfd[0]);
		return -1;
	}
	close(pfd[0]);
	return 0;
}

int mw_tune_waits(char *const *argv, const char *tunables, uint64_t *waits, char *err,
		  size_t errlen)
{
	char dir[PATH_MAX], file[PATH_MAX + 16], self[PATH_MAX];
	const char *pre[] = { "mallocwatch", "-q", "-e", "arena", "--json", file, "-o",
			      "/dev/null", "-c" };
	size_t npre = sizeof(pre) / sizeof(pre[0]), n = 0;
	json_t *report = NULL;
	int st = -1, ret = -1;
	int64_t v;
	ssize_t sl;
	char **av;
	pid_t pid;

	while (argv[n])
		n++;
	if ((sl = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0) {
		snprintf(err, errlen, "cannot run the tracer: %s", strerror(errno));
		return -1;
	}
	/* a work directory like a run's (leftovers.h): locked while we
	 * live, swept by the next run if we are killed */
	if (mw_workdir_make(dir, sizeof(dir), err, errlen) < 0)
		return -1;
	self[sl] = '\0';
	snprintf(file, sizeof(file), "%s/run.json", dir);
	av = calloc(npre + n + 1, sizeof(*av));
	if (av && (pid = fork()) == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		set_tunables(tunables);
		memcpy(av, pre, sizeof(pre));
		memcpy(av + npre, argv, n * sizeof(*av));
		execv(self, av);
		_exit(127);
	} else if (av && pid > 0) {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	free(av);
	if (st >= 0 && (report = json_load_file(file, 0, NULL)) &&
	    mw_metric_value(report, MW_M_reuse_waits, &v) == 0 && v >= 0) {
		*waits = (uint64_t)v;
		ret = 0;
	} else {
		snprintf(err, errlen, "no lock waits from the tracer for '%s' (its run exited %d)",
			 tunables && tunables[0] ? tunables : "baseline",
			 st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	json_decref(report);
	unlink(file);
	mw_workdir_remove(dir);
	return ret;
}
