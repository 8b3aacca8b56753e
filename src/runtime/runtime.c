/* runtime.c - runtime choice and bpf preparation; see runtime.h.  The
 * tracer's procfs files and the module's lock are runtime_procfs.c's. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "cache.h"
#include "fsutil.h"
#include "runtime.h"
#include "uprobe_multi_link.h"


const char *mw_runtime_name(enum mw_runtime rt)
{
	return rt == MW_RT_BPF ? "bpf" : rt == MW_RT_KERNEL ? "kernel" : "auto";
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void add_did(struct mw_runtime_env *env, const char *what)
{
	size_t n = strlen(env->did);

	snprintf(env->did + n, sizeof(env->did) - n, "%s%s", n ? "; " : "", what);
}

/* Create path for writing, never through a link or over a file that is
 * already there (the directories it goes into are fresh and private). */
static FILE *create_new(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");

	if (!f) {
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

/* Write /proc/config.gz, decompressed, to path. */
static int write_config(const char *path, char *err, size_t errlen)
{
	gzFile in = gzopen("/proc/config.gz", "rbe");
	FILE *out;
	char buf[8192];
	int n, ret = -1;

	if (!in) {
		snprintf(err, errlen, "cannot read '/proc/config.gz': %s", strerror(errno));
		return -1;
	}
	if (!(out = create_new(path, err, errlen)))
		goto cleanup;
	while ((n = gzread(in, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, out);
	if (fclose(out) != 0 || n < 0)	/* closed whatever the read gave */
		snprintf(err, errlen, "cannot write '%s'", path);
	else
		ret = 0;
cleanup:
	gzclose(in);
	return ret;
}

static int write_text(const char *path, const char *text, char *err, size_t errlen)
{
	FILE *f = create_new(path, err, errlen);
	int bad;

	if (!f)
		return -1;
	bad = fputs(text, f) < 0;
	if (fclose(f) != 0 || bad) {	/* closed whatever fputs gave */
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Fill the fresh, empty directory dir with the stub. */
static int fill_kstub(const char *dir, const char *release, char *err, size_t errlen)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/include", dir);
	if (mkdir(path, 0755) < 0)
		goto mkdir_failed;
	snprintf(path, sizeof(path), "%s/include/config", dir);
	if (mkdir(path, 0755) < 0)
		goto mkdir_failed;
	snprintf(path, sizeof(path), "%s/.config", dir);
	if (write_config(path, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/Module.symvers", dir);
	if (write_text(path, "", err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/include/config/kernel.release", dir);
	return write_text(path, release, err, errlen);
mkdir_failed:
	snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
	return -1;
}

/* A directory only root can change (runtime.h). */
/* Root: a cache shared by runs, MW_CACHE_DIR/kernel-RELEASE, built in a
 * fresh mkdtemp directory beside it and renamed into place whole. */
static int kstub_cached(char *dir, size_t len, const char *release, char *err, size_t errlen)
{
	char tmp[PATH_MAX], ok[PATH_MAX + 64];
	int fd;

	if (mkdir(MW_CACHE_DIR, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create '%s': %s", MW_CACHE_DIR, strerror(errno));
		return -1;
	}
	if (!mw_root_only_dir(MW_CACHE_DIR)) {
		snprintf(err, errlen, "'%s' is not a directory only root can write; not using it",
			 MW_CACHE_DIR);
		return -1;
	}
	snprintf(dir, len, "%s/kernel-%s", MW_CACHE_DIR, release);
	snprintf(ok, sizeof(ok), "%s/include/config/kernel.release", dir);
	if (mw_root_only_dir(dir) && exists(ok))
		return 0;
	/* locked while it is made: a temporary left by a killed run is
	 * swept (cache.h) */
	if ((fd = mw_cache_tmpdir(MW_CACHE_DIR, tmp, sizeof(tmp))) < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		return -1;
	}
	fchmod(fd, 0755);
	if (fill_kstub(tmp, release, err, errlen) < 0 ||
	    (rename(tmp, dir) < 0 && !(mw_root_only_dir(dir) && exists(ok)))) {
		if (!err[0])
			snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
		mw_remove_tree(tmp);
		close(fd);
		return -1;
	}
	mw_remove_tree(tmp);	/* another run's won the rename */
	close(fd);
	return 0;
}

/* Make (or reuse) a kernel-config stub directory for `stap -r`, its path
 * into dir (runtime.h; workdir: the run's private directory, used
 * when not root).  Returns 0 or -1 with err. */
static int mw_runtime_kstub(char *dir, size_t len, const char *workdir, char *err, size_t errlen)
{
	struct utsname u;

	err[0] = '\0';
	uname(&u);
	if (geteuid() == 0)
		return kstub_cached(dir, len, u.release, err, errlen);
	if (!workdir || !workdir[0]) {
		snprintf(err, errlen, "no work directory for the kernel-config stub");
		return -1;
	}
	snprintf(dir, len, "%s/kbuild", workdir);
	if (mkdir(dir, 0700) < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
		return -1;
	}
	return fill_kstub(dir, u.release, err, errlen);
}

/* Can a process of ours raise RLIMIT_MEMLOCK to unlimited?  Tried in a
 * child so our own limits, and so the traced program's, stay as they are. */
static int memlock_raisable(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };

		_exit(setrlimit(RLIMIT_MEMLOCK, &r) == 0 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The shim NAME beside our own binary (build tree), else the installed
 * one, into out. */
static int find_shim(const char *name, char *out, size_t len)
{
	char exe[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, len, "%s/%s", exe, name);
			if (exists(out))
				return 0;
		}
	}
	snprintf(out, len, "%s/%s", MW_LIBEXECDIR, name);
	return exists(out) ? 0 : -1;
}

/* Can uprobes be attached as a uprobe_multi link (BPF_LINK_CREATE,
 * BPF_TRACE_UPROBE_MULTI, Linux 6.6)?  Tried with a program that is
 * loaded and a link that is refused (its path is "/", a directory):
 * nothing is attached.  1 yes, 0 no, or when MALLOCWATCH_ATTACH is
 * "tracefs". */
static int mw_runtime_uprobe_multi(void)
{
	const char *env = getenv("MALLOCWATCH_ATTACH");
	uint64_t off = 0;
	int prog, fd, ok;

	if (env && strcmp(env, "tracefs") == 0)
		return 0;
	if ((prog = mw_umulti_empty_prog()) < 0)
		return 0;
	fd = mw_umulti_link(prog, "/", &off, NULL, 1, 0);
	/* a kernel that has the link looks the path up and refuses a
	 * directory with EBADF (bpf_uprobe_multi_link_attach); one that has
	 * not refuses the attach type with EINVAL */
	ok = fd < 0 && errno == EBADF;
	if (fd >= 0)
		close(fd);
	close(prog);
	return ok;
}

/* Make sure stapbpf's directory MW_STAPBPF_TMP/systemtap-USER (USER:
 * the effective user) is one no other user can change before stapbpf is
 * started: every directory from / down is checked through O_NOFOLLOW
 * descriptors (owned by the effective user or root, writable by no one
 * else) and /run/mallocwatch, MW_STAPBPF_TMP and systemtap-USER are
 * created 0700 when missing.  0, or -1 with a one-line reason in err. */
static int mw_runtime_procfs_secure(char *err, size_t errlen)
{
	const char *chain[] = { "/run/mallocwatch", MW_STAPBPF_TMP, NULL };
	char base[PATH_MAX], why[PATH_MAX + 64];
	int fd;

	if (mw_runtime_procfs_base(base, sizeof(base)) < 0) {
		snprintf(err, errlen, "no user name for uid %d", (int)geteuid());
		return -1;
	}
	chain[2] = base;
	for (int i = 0; i < 3; i++) {
		if ((fd = mw_dir_open_safe(chain[i], 1, 0, why, sizeof(why))) < 0) {
			snprintf(err, errlen, "%s: stapbpf's FIFOs would be where another user can "
				 "replace them; remove it (or make it root's, 0700) and run again",
				 why);
			return -1;
		}
		close(fd);
	}
	return 0;
}

int mw_runtime_vartmp_enter(void)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ||
	    mount(MW_STAPBPF_TMP, "/var/tmp", NULL, MS_BIND, NULL) < 0)
		return -1;
	return mount(NULL, "/var/tmp", NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV |
		     MS_NOEXEC, NULL);
}

static int prepare_bpf(struct mw_runtime_env *env, int for_run, const char *workdir,
		       char *err, size_t errlen)
{
	char kb[PATH_MAX + 32];
	struct utsname u;

	uname(&u);
	snprintf(kb, sizeof(kb), "/lib/modules/%s/build/.config", u.release);
	if (!exists(kb)) {
		if (mw_runtime_kstub(env->kbuild, sizeof(env->kbuild), workdir, err, errlen) < 0)
			return -1;
		add_did(env, "kernel-config stub for stap -r");
	}
	if (!for_run)
		return 0;
	if (!exists(MW_UPROBE_EVENTS)) {
		if (mount("none", "/sys/kernel/debug", "debugfs", 0, NULL) < 0 ||
		    !exists(MW_UPROBE_EVENTS)) {
			snprintf(err, errlen, "cannot mount debugfs on '/sys/kernel/debug': %s%s",
				 strerror(errno), geteuid() ? " (tracing needs root: run "
				 "mallocwatch with sudo)" : "");
			return -1;
		}
		add_did(env, "mounted debugfs");
	}
	if (mw_runtime_procfs_secure(err, errlen) < 0)
		return -1;
	if (!memlock_raisable()) {
		if (find_shim("memlock-shim.so", env->shim, sizeof(env->shim)) < 0) {
			snprintf(err, errlen, "RLIMIT_MEMLOCK cannot be raised and "
				 "memlock-shim.so is missing (looked in '%s')", MW_LIBEXECDIR);
			return -1;
		}
		add_did(env, "memlock shim for stapbpf");
	}
	if (mw_runtime_uprobe_multi()) {
		char um[PATH_MAX];
		size_t n = strlen(env->shim);

		if (find_shim("umulti-shim.so", um, sizeof(um)) < 0) {
			snprintf(err, errlen, "umulti-shim.so is missing (looked in '%s'); "
				 "MALLOCWATCH_ATTACH=tracefs attaches without it", MW_LIBEXECDIR);
			return -1;
		}
		if (n + 1 + strlen(um) >= sizeof(env->shim)) {
			snprintf(err, errlen, "the shims' paths are too long for LD_PRELOAD");
			return -1;
		}
		snprintf(env->shim + n, sizeof(env->shim) - n, "%s%s", n ? ":" : "", um);
		env->umulti = 1;
		add_did(env, "uprobes attached as one uprobe_multi link");
	}
	return 0;
}

enum mw_runtime mw_runtime_pick(enum mw_runtime want)
{
	struct utsname u;
	char kb[PATH_MAX + 32];

	if (want != MW_RT_AUTO)
		return want;
	uname(&u);
	snprintf(kb, sizeof(kb), "/lib/modules/%s/build", u.release);
	return exists("/proc/modules") && exists(kb) ? MW_RT_KERNEL : MW_RT_BPF;
}

int mw_runtime_prepare(enum mw_runtime want, int for_run, const char *workdir,
		       struct mw_runtime_env *env, char *err, size_t errlen)
{
	struct utsname u;
	char kb[PATH_MAX + 32];

	memset(env, 0, sizeof(*env));
	uname(&u);
	snprintf(kb, sizeof(kb), "/lib/modules/%s/build", u.release);
	want = mw_runtime_pick(want);
	env->rt = want;
	if (want == MW_RT_BPF)
		return prepare_bpf(env, for_run, workdir, err, errlen);
	if (!for_run) {
		/* translation only: a stub tree is enough for stap -p3 */
		if (!exists(kb)) {
			if (mw_runtime_kstub(env->kbuild, sizeof(env->kbuild), workdir, err, errlen) < 0)
				return -1;
			add_did(env, "kernel-config stub for stap -r");
		}
		return 0;
	}
	if (!exists("/proc/modules")) {
		snprintf(err, errlen, "the kernel runtime needs loadable modules, and this "
			 "kernel has none; use --runtime=bpf");
		return -1;
	}
	if (!exists(kb)) {
		snprintf(err, errlen, "the kernel runtime needs '%s' (the kernel's build "
			 "tree); install the kernel headers or use --runtime=bpf", kb);
		return -1;
	}
	return 0;
}

const char *mw_runtime_module(const char *workdir, char *buf, size_t len)
{
	const char *dot = strrchr(workdir, '.');
	char tag[16] = "";

	/* only what a C identifier may hold reaches stap -m */
	for (size_t i = 0; dot && dot[1 + i] && i + 1 < sizeof(tag); i++)
		tag[i] = isalnum((unsigned char)dot[1 + i]) ? dot[1 + i] : '_';
	snprintf(buf, len, MW_MODULE_PREFIX "%d_%s", (int)getpid(), tag);
	return buf;
}
