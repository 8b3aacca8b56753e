/* runtime.c - runtime choice and bpf preparation; see runtime.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "runtime.h"

#define UPROBE_EVENTS "/sys/kernel/debug/tracing/uprobe_events"

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

/* Write /proc/config.gz, decompressed, to path. */
static int write_config(const char *path, char *err, size_t errlen)
{
	gzFile in = gzopen("/proc/config.gz", "rb");
	FILE *out;
	char buf[8192];
	int n, ret = -1;

	if (!in) {
		snprintf(err, errlen, "cannot read '/proc/config.gz': %s", strerror(errno));
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		goto cleanup;
	}
	while ((n = gzread(in, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, out);
	if (n < 0 || fclose(out) != 0)
		snprintf(err, errlen, "cannot write '%s'", path);
	else
		ret = 0;
cleanup:
	gzclose(in);
	return ret;
}

static int write_text(const char *path, const char *text, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* mkdir -p */
static int mkdir_p(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
			return -1;
		}
		if (!c)
			return 0;
		*p = c;
	}
}

int mw_runtime_kstub(char *dir, size_t len, char *err, size_t errlen)
{
	struct utsname u;
	char path[PATH_MAX + 64];
	const char *base = getuid() == 0 ? "/var/cache/mallocwatch" : getenv("TMPDIR");

	if (!base)
		base = "/tmp";
	uname(&u);
	snprintf(dir, len, "%s/kernel-%s", base, u.release);
	snprintf(path, sizeof(path), "%s/include/config/kernel.release", dir);
	if (exists(path))
		return 0;
	snprintf(path, sizeof(path), "%s/include/config", dir);
	if (mkdir_p(path, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/.config", dir);
	if (write_config(path, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/Module.symvers", dir);
	if (write_text(path, "", err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/include/config/kernel.release", dir);
	return write_text(path, u.release, err, errlen);
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

/* The shim beside our own binary (build tree), else the installed one. */
static int find_shim(char *out, size_t len)
{
	char exe[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, len, "%s/memlock-shim.so", exe);
			if (exists(out))
				return 0;
		}
	}
	snprintf(out, len, "%s/memlock-shim.so", MW_LIBEXECDIR);
	return exists(out) ? 0 : -1;
}

static int prepare_bpf(struct mw_runtime_env *env, int for_run, char *err, size_t errlen)
{
	char kb[PATH_MAX + 32];
	struct utsname u;

	uname(&u);
	snprintf(kb, sizeof(kb), "/lib/modules/%s/build/.config", u.release);
	if (!exists(kb)) {
		if (mw_runtime_kstub(env->kbuild, sizeof(env->kbuild), err, errlen) < 0)
			return -1;
		add_did(env, "kernel-config stub for stap -r");
	}
	if (!for_run)
		return 0;
	if (!exists(UPROBE_EVENTS)) {
		if (mount("none", "/sys/kernel/debug", "debugfs", 0, NULL) < 0 ||
		    !exists(UPROBE_EVENTS)) {
			snprintf(err, errlen, "cannot mount debugfs on '/sys/kernel/debug': %s",
				 strerror(errno));
			return -1;
		}
		add_did(env, "mounted debugfs");
	}
	if (!memlock_raisable()) {
		if (find_shim(env->shim, sizeof(env->shim)) < 0) {
			snprintf(err, errlen, "RLIMIT_MEMLOCK cannot be raised and "
				 "memlock-shim.so is missing (looked in '%s')", MW_LIBEXECDIR);
			return -1;
		}
		add_did(env, "memlock shim for stapbpf");
	}
	return 0;
}

int mw_runtime_prepare(enum mw_runtime want, int for_run,
		       struct mw_runtime_env *env, char *err, size_t errlen)
{
	struct utsname u;
	char kb[PATH_MAX + 32];

	memset(env, 0, sizeof(*env));
	uname(&u);
	snprintf(kb, sizeof(kb), "/lib/modules/%s/build", u.release);
	if (want == MW_RT_AUTO)
		want = exists("/proc/modules") && exists(kb) ? MW_RT_KERNEL : MW_RT_BPF;
	env->rt = want;
	if (want == MW_RT_BPF)
		return prepare_bpf(env, for_run, err, errlen);
	if (!for_run) {
		/* translation only: a stub tree is enough for stap -p3 */
		if (!exists(kb)) {
			if (mw_runtime_kstub(env->kbuild, sizeof(env->kbuild), err, errlen) < 0)
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
