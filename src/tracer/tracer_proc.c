/* tracer_proc.c - the processes a run starts and talks to (tracer_proc.h):
 * the tracer (stap, stapbpf) and its bpf compile, the program held
 * before its first instruction, and the script's procfs files.  Split
 * out of tracer.c, which runs the loop around them.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfobj.h"
#include "cache.h"
#include "clock.h"
#include "hash.h"
#include "kmod_sources.h"
#include "glibc_ns.h"
#include "msg.h"
#include "ptyrelay.h"
#include "runtime.h"
#include "signals.h"
#include "spawn.h"
#include "tracer_proc.h"

/* The child: on its own terminal when it has one (ptyrelay.h), wait for
 * the release byte, drop to the invoking user under sudo, exec.  An
 * error goes back as an errno on errpipe. */
static void program_child(const struct mw_target *t, const struct mw_pty *pty, int hold_r,
			  int errpipe)
{
	char c;
	int e;
	const char *path = t->loader[0] ? t->loader : t->path;

	if (mw_pty_child(pty) < 0)
		goto fail;
	if (read(hold_r, &c, 1) != 1)
		_exit(127);	/* the tracer failed: never run untraced */
	close(hold_r);
	mw_cloexec_from_3();
	/* while still root: the namespace is made as root, then the user
	 * it runs as cannot undo it */
	if (t->ns && mw_libcns_enter(t->ns, NULL) < 0)
		goto fail;
	if (t->uid != (uid_t)-1) {
		if ((t->user[0] ? initgroups(t->user, t->gid) : setgroups(0, NULL)) < 0 ||
		    setgid(t->gid) < 0 || setuid(t->uid) < 0)
			goto fail;
	}
	execv(path, t->argv);
fail:
	e = errno;
	if (write(errpipe, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* The program, forked and held (tracer_proc.h). */
pid_t mw_program_start(const struct mw_target *t, const struct mw_pty *pty, int *hold_w,
			int *errpipe_r)
{
	int hold[2], ep[2];
	pid_t pid;

	if (pipe2(hold, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(hold[0]);
		close(hold[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(hold[1]);
		close(ep[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		program_child(t, pty, hold[0], ep[1]);
	}
	close(hold[0]);
	close(ep[1]);
	*hold_w = hold[1];
	*errpipe_r = ep[0];
	return pid;
}

/* Threads of pid still there, from /proc/PID/status (tracer_proc.h). */
int mw_threads_of(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	int n = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Ask one of the script's procfs probes (runtime.h): the kernel
 * runtime's probe runs in read() and the file is closed again at once;
 * stapbpf's runs when a reader opens its FIFO, and the FIFO stays open
 * (*fd) until the answer is in: mw_procfs_answered() (tracer_proc.h). */
int mw_procfs_ask(enum mw_runtime rt, const char *module, int verbose, const char *name,
		  int *fd, char *err, size_t errlen)
{
	char c[64];

	*fd = mw_runtime_procfs_open(rt, module, name, err, errlen);
	if (*fd < 0)
		return -1;
	if (rt != MW_RT_BPF) {
		if (read(*fd, c, sizeof(c)) < 0 && verbose)
			mw_note("%s read: %s", name, strerror(errno));
		close(*fd);
		*fd = -1;
	}
	return 0;
}

/* poll() said revents about an asked FIFO: take what is in it; closed
 * (*fd = -1) once stapbpf has written its answer and closed its end
 * (POLLHUP: a writer came and went since the open).  stapbpf spins on
 * open(O_NONBLOCK) until the reader has gone, so the close must not
 * wait; it must not come early either: the answer would be written to a
 * FIFO without a reader (EPIPE: SIGPIPE is ignored in the tracer, see
 * mw_tracer_spawn()) and stapbpf warns on stderr. */
int mw_procfs_answered(int *fd, short revents)
{
	char c[64];
	ssize_t k;
	int got = 0;

	if (*fd < 0)
		return 0;
	if (revents & (POLLIN | POLLHUP))	/* the last bytes may come with the hang-up */
		while ((k = read(*fd, c, sizeof(c))) > 0)
			got += (int)k;
	if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
		close(*fd);
		*fd = -1;
	}
	return got;
}

/* Close an asked FIFO before the tracer is stopped or left: wait for its
 * answer, at most ms (the probe is a few map reads; a tracer that has not
 * answered by then is stuck, and closing is all that is left). */
void mw_procfs_settle(int *fd, int ms)
{
	long long until = mw_now_ms() + ms;

	while (*fd >= 0) {
		struct pollfd p = { .fd = *fd, .events = POLLIN };
		long long left = until - mw_now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			close(*fd);
			*fd = -1;
			break;
		}
		mw_procfs_answered(fd, p.revents);
	}
}

/* argv for stapbpf/staprun, into argv[] (tracer_proc.h). */
void mw_tracer_argv(const struct mw_runtime_env *env, pid_t pid, char *pidbuf,
		    const char *object, const char **argv)
{
	int k = 0;

	sprintf(pidbuf, "%d", (int)pid);
	if (env->rt == MW_RT_BPF) {
		argv[k++] = "stapbpf";
		argv[k++] = "-w";
	} else {
		argv[k++] = "staprun";
		argv[k++] = "-R";	/* loaded as mw_kmod_loaded_name() */
	}
	if (!env->untargeted) {
		argv[k++] = "-x";
		argv[k++] = pidbuf;
	}
	argv[k++] = object;
	argv[k] = NULL;
}

/* The kernel runtime's bound on the statements one probe runs (stap's
 * MAXACTION, MAXACTION_INTERRUPTIBLE; a probe past it stops the session
 * with "MAXACTION exceeded").  The largest dump and drain, every map of
 * the script full (about 170,000 entries) and -f's drain scanning each
 * map once a round of 1024 keys, runs some 6 million (mw_n's 65536
 * entries over 64 rounds: 2.2 million iterations); the bound stays, for
 * a loop that would not end. */
#define MW_KMOD_MAXACTION "50000000"

/* See tracer_proc.h.  The flush's and the exec drain's loops go over
 * every entry of the script's maps, several times under -f
 * (gen_drain.c), past stap's 1000 (MAXACTION) and 10000
 * (MAXACTION_INTERRUPTIBLE) at some thousand entries: the bound above.
 * No overload check (STP_NO_OVERLOAD): it ends the session when the
 * handlers took more than half of a CPU's TSC cycles in a second, and
 * the TSC runs on while a virtual CPU waits for its host (the trixie
 * guest's t-e2e-setjmp: 510,536,910 cycles of 1,000,000,000); the
 * handlers' cost is the traced threads', and the report's "tracing
 * cost" line says it (docs/tracing.md, "The kernel runtime"). */
const char *const mw_kmod_defines[] = {
	"-DMAXACTION=" MW_KMOD_MAXACTION,
	"-DMAXACTION_INTERRUPTIBLE=" MW_KMOD_MAXACTION,
	"-DSTP_NO_OVERLOAD",
	NULL,
};

/* Why stap's compile failed (its output msg), with what to do, when the
 * cause is known, into err. */
void mw_tracer_compile_why(int kernel, const char *msg, char *err, size_t errlen)
{
	if (kernel && strstr(msg, "task_work_cancel"))
		snprintf(err, errlen, "stap cannot build a module for this kernel: its "
			 "runtime predates the kernel's task_work_cancel_func() (systemtap "
			 "before 5.2 on Linux 6.1.1xx and later; see docs/tracing.md, 'The kernel "
			 "runtime'); use --runtime=bpf");
	else if (kernel && (strstr(msg, "uprobe_unregister") || strstr(msg, "uprobe_register")))
		snprintf(err, errlen, "stap cannot build a module for this kernel: its runtime "
			 "does not match the kernel's uprobes API (Linux 6.12 changed it; see "
			 "docs/tracing.md, 'The kernel runtime'): %s; use --runtime=bpf", msg);
	else if (kernel)
		snprintf(err, errlen, "stap could not build the script's kernel module: %s "
			 "(--runtime=bpf traces without one)", msg);
	else
		snprintf(err, errlen, "stap could not compile the script: %s", msg);
}

/* stap -p4 -m name script in workdir: workdir/name.bo or .ko. */
static int compile(const struct mw_runtime_env *env, const char *script, const char *workdir,
		   const char *name, char *err, size_t errlen)
{
	const char *argv[20];
	int k = 0;
	char msg[400], rt[PATH_MAX];

	argv[k++] = "stap";
	argv[k++] = "-g";	/* guru mode: the scripts' embedded C (stp/) */
	if (env->rt == MW_RT_BPF) {
		argv[k++] = "--runtime=bpf";
	} else {
		if (env->ustack) {	/* ubacktrace()'s unwind data */
			argv[k++] = "--ldd";
			if (env->unwind[0]) {
				argv[k++] = "-d";
				argv[k++] = env->unwind;
			}
		}
		for (int d = 0; mw_kmod_defines[d]; d++)	/* above */
			argv[k++] = mw_kmod_defines[d];
		/* the runtime's sources, mended where they need it (kmod_sources.h) */
		switch (mw_krt_runtime(workdir, env->kbuild, rt, sizeof(rt), msg, sizeof(msg))) {
		case 1:
			argv[k++] = "-R";
			argv[k++] = rt;
			__attribute__((fallthrough));	/* clang reads no comment */
		case 0:
			if (msg[0])
				mw_warn("%s", msg);
			break;
		default:
			mw_warn("%s; the module is built from stap's own runtime as it is", msg);
			break;
		}
	}
	argv[k++] = "-w";
	if (env->kbuild[0]) {
		argv[k++] = "-r";
		argv[k++] = env->kbuild;
	}
	argv[k++] = "-p4";
	argv[k++] = "-m";
	argv[k++] = name;
	argv[k++] = script;
	argv[k] = NULL;
	switch (mw_run_capture((char *const *)argv, workdir, msg, sizeof(msg))) {
	case -2:
		snprintf(err, errlen, "interrupted by signal %d (%s) before tracing started",
			 mw_signal_pending(), strsignal(mw_signal_pending()));
		return -1;
	case -1:
		mw_tracer_compile_why(env->rt != MW_RT_BPF, msg, err, errlen);
		return -1;
	}
	return 0;
}

/* What a module is built from: the script, the running kernel, the build
 * tree given to stap, stap itself (its file's size and time), a kernel
 * module's -D flags (mw_kmod_defines) and, with
 * ubacktrace(), the program whose unwind data it carries (its path, size
 * and time). */
static int module_key(const struct mw_runtime_env *env, const char *script, uint64_t *key)
{
	uint64_t h = MW_FNV1A_INIT;
	struct utsname u;
	char buf[8192];
	size_t n;
	FILE *f = fopen(script, "re");

	if (!f)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		h = mw_fnv1a(h, buf, n);
	fclose(f);
	uname(&u);
	h = mw_fnv1a(h, u.release, strlen(u.release) + 1);
	h = mw_fnv1a(h, u.version, strlen(u.version) + 1);
	h = mw_fnv1a(h, u.machine, strlen(u.machine) + 1);
	h = mw_fnv1a(h, env->kbuild, strlen(env->kbuild) + 1);
	if (env->ustack) {	/* built with other unwind data */
		h = mw_fnv1a(h, env->unwind, strlen(env->unwind) + 1);
		/* and the program's file: one rebuilt at the same path has
		 * other unwind data (and another build-id) */
		h = mw_fnv1a_stat(h, env->unwind);
	}
	h = mw_fnv1a_stat(h, "/usr/bin/stap");
	if (env->rt != MW_RT_BPF)	/* built with other flags: another module */
		for (int d = 0; mw_kmod_defines[d]; d++)
			h = mw_fnv1a(h, mw_kmod_defines[d], strlen(mw_kmod_defines[d]) + 1);
	*key = h;
	return 0;
}

/* Copy from to a fresh file beside to (locked while it is written:
 * cache.h), renamed into place whole. */
static int copy_into(const char *from, const char *to)
{
	char tmp[PATH_MAX], parent[PATH_MAX], buf[65536];
	const char *slash = strrchr(to, '/');
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1;
	ssize_t n = 0;

	if (slash && (size_t)(slash - to) < sizeof(parent))
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - to), to);
	if (in < 0 || !slash || (size_t)(slash - to) >= sizeof(parent) ||
	    (out = mw_cache_tmpfile(parent, tmp, sizeof(tmp))) < 0) {
		if (in >= 0)
			close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	/* renamed before the lock goes with the descriptor */
	if (n < 0 || fchmod(out, 0644) < 0 || rename(tmp, to) < 0) {
		unlink(tmp);
		close(out);
		return -1;
	}
	return close(out);
}

/* A regular file of root's that no one else can write, not a link. */
static int roots_file(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == 0 &&
	       !(sb.st_mode & 022);
}

/* stap -p4 for the bpf runtime, cached (tracer_proc.h). */
int mw_tracer_compile_bpf(const struct mw_runtime_env *env, const char *script,
			  const char *workdir, const char *rn_module, char *bo, size_t bolen,
			  int cache, int *cached, char *err, size_t errlen)
{
	char dir[PATH_MAX], kept[PATH_MAX + 64];
	uint64_t key;

	*cached = 0;
	snprintf(bo, bolen, "%s/%s.bo", workdir, rn_module);
	if (cache && (mw_cache_subdir("modules", dir, sizeof(dir)) < 0 || module_key(env, script, &key) < 0))
		cache = 0;
	if (cache) {
		/* objects kept before mw_bpfobj_tune() were not tuned */
		key = mw_fnv1a(key, "bpfobj 1", 9);
		snprintf(kept, sizeof(kept), "%s/bpf_%016llx.bo", dir, (unsigned long long)key);
		if (roots_file(kept) && copy_into(kept, bo) == 0) {
			mw_cache_used(kept);
			*cached = 1;
			return 0;
		}
	}
	if (compile(env, script, workdir, rn_module, err, errlen) < 0 ||
	    mw_bpfobj_tune(bo, err, errlen) < 0)
		return -1;
	if (cache && copy_into(bo, kept) == 0)	/* for the next run; none is fine */
		mw_cache_evict(mw_cache_limit());
	return 0;
}

/* stap -p4 for the kernel runtime, cached (tracer_proc.h). */
int mw_tracer_compile_kernel(const struct mw_runtime_env *env, const char *script,
			     const char *workdir, char *ko, size_t kolen, int *cached,
			     char *err, size_t errlen)
{
	char name[64], dir[PATH_MAX], built[PATH_MAX + 80];
	uint64_t key;
	int cache;

	*cached = 0;
	if (module_key(env, script, &key) < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", script, strerror(errno));
		return -1;
	}
	/* modules built before the runtime's mends (kmod_sources.h) and the
	 * statement bound are not used */
	key = mw_fnv1a(key, "kmod 2", 7);
	snprintf(name, sizeof(name), MW_KMOD_PREFIX "%016llx", (unsigned long long)key);
	cache = mw_cache_subdir("modules", dir, sizeof(dir)) == 0;	/* else no cache */
	if (cache) {
		snprintf(ko, kolen, "%s/%s.ko", dir, name);
		if (roots_file(ko)) {
			mw_cache_used(ko);
			*cached = 1;
			return 0;
		}
	}
	if (compile(env, script, workdir, name, err, errlen) < 0)
		return -1;
	snprintf(built, sizeof(built), "%s/%s.ko", workdir, name);
	if (!cache || copy_into(built, ko) < 0)
		snprintf(ko, kolen, "%s", built);
	else
		mw_cache_evict(mw_cache_limit());
	return 0;
}

void mw_kmod_loaded_name(const char *ko, pid_t staprun, char *buf, size_t len)
{
	const char *base = strrchr(ko, '/') ? strrchr(ko, '/') + 1 : ko;
	char pid[16];
	int blen = (int)strcspn(base, "."), keep;

	snprintf(pid, sizeof(pid), "%d", (int)staprun);
	/* staprun -R: the same length, the name's head then _PID */
	keep = blen - (int)strlen(pid) - 1;
	snprintf(buf, len, "%.*s_%s", keep > 0 ? keep : 0, base, pid);
}

/* Why the tracer ended, when it said nothing itself. */
void mw_tracer_fate(const char *name, int st, char *msg, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(msg, len, "%s was killed by signal %d (%s)", name, WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else if (WIFEXITED(st) && WEXITSTATUS(st))
		snprintf(msg, len, "%s exited with status %d", name, WEXITSTATUS(st));
}
