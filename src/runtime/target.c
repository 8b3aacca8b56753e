/* target.c - program path, libc choice and loader wrapping; see target.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mapped.h"
#include "msg.h"
#include "procmem.h"
#include "sdtnote.h"
#include "sudouser.h"
#include "target.h"
#include "xalloc.h"

#define SYSTEM_LIB_DIRS "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib"

static int find_libc_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	if (base && strncmp(base + 1, "libc.so", 7) == 0) {
		snprintf(data, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

/* The libc this process (mallocwatch) runs on, found with
 * dl_iterate_phdr.  Returns 0 and fills out, or -1. */
static int mw_system_libc(char *out, size_t len)
{
	char buf[PATH_MAX] = "";

	if (!dl_iterate_phdr(find_libc_cb, buf) || !buf[0])
		return -1;
	if (!realpath(buf, out))
		snprintf(out, len, "%s", buf);
	return 0;
}

int mw_libc_has_probes(const char *path)
{
	char err[256];
	struct mw_elf *e = mw_elf_open(path, err, sizeof(err));
	int found = 0;

	if (!e)
		return -1;
	for (size_t i = 0; i < mw_elf_nsites(e) && !found; i++)
		found = strncmp(mw_elf_site(e, i)->name, "memory_", 7) == 0;
	mw_elf_close(e);
	return found;
}

/* execvp's search: a name with a slash is used as is. */
static int find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, X_OK);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(out, len, "%.*s/%s", (int)(n ? n : 1), n ? path : ".", name);
		if (access(out, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	return -1;
}

/* 1 if path is an ELF file with a PT_INTERP (dynamically linked), 0 if
 * ELF without one (static), -1 if not ELF. */
static int elf_dynamic(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	Elf *elf;
	size_t n;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &n) == 0) {
		ret = 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
				ret = 1;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

#define SHEBANG_MAX 256	/* the kernel reads this much of a script
				 * (BINPRM_BUF_SIZE) */

/* The "#!" line of path: its interpreter (as written) into interp, its
 * optional argument (the rest of the line, trimmed) into arg.  1 when
 * there is one, 0 when the file does not start with "#!", -1 when it
 * cannot be read. */
static int read_shebang(const char *path, char *interp, size_t ilen, char *arg, size_t alen)
{
	char buf[SHEBANG_MAX + 1], *p, *end;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, SHEBANG_MAX);
	close(fd);
	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return n < 0 ? -1 : 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (p = buf + 2; *p == ' ' || *p == '\t'; p++)
		;
	end = p + strcspn(p, " \t");
	snprintf(interp, ilen, "%.*s", (int)(end - p), p);
	for (p = end; *p == ' ' || *p == '\t'; p++)
		;
	for (end = p + strlen(p); end > p && (end[-1] == ' ' || end[-1] == '\t'); end--)
		;
	snprintf(arg, alen, "%.*s", (int)(end - p), p);
	return interp[0] ? 1 : 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A shell runs a wrapper or a shim: what it execs would be the program. */
static int is_shell(const char *path)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh",
					      "ash", "busybox", "fish", "csh", "tcsh" };
	const char *b = base_name(path);

	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (strcmp(b, shells[i]) == 0)
			return 1;
	return 0;
}

/* The script t->path under the loader: follow its "#!" line to an ELF
 * interpreter into t->interp, t->interp_argv0 and t->interp_arg (see
 * target.h).  0, or -1 with a one-line reason in err: no "#!", a shell
 * (named), env with options, an interpreter that is a script itself or
 * static. */
static int follow_script(struct mw_target *t, char *err, size_t errlen)
{
	char interp[PATH_MAX], arg[SHEBANG_MAX];
	int dyn;

	if (read_shebang(t->path, interp, sizeof(interp), arg, sizeof(arg)) != 1) {
		snprintf(err, errlen, "'%s' is not an ELF executable and has no '#!' line; it "
			 "cannot be started under the probe-enabled glibc's loader", t->path);
		return -1;
	}
	snprintf(t->interp_argv0, sizeof(t->interp_argv0), "%s", interp);
	snprintf(t->interp_arg, sizeof(t->interp_arg), "%s", arg);
	if (strcmp(base_name(interp), "env") == 0) {
		if (!arg[0] || arg[0] == '-' || strchr(arg, ' ') || strchr(arg, '=')) {
			snprintf(err, errlen, "'%s' runs '%s %s': name the interpreter itself "
				 "(-c INTERPRETER %s ARGS...)", t->path, interp, arg, t->path);
			return -1;
		}
		if (find_program(arg, interp, sizeof(interp)) < 0) {
			snprintf(err, errlen, "'%s' runs '%s', which is not on PATH", t->path, arg);
			return -1;
		}
		snprintf(t->interp_argv0, sizeof(t->interp_argv0), "%s", arg);
		t->interp_arg[0] = '\0';
	}
	if (is_shell(interp)) {
		snprintf(err, errlen, "'%s' is a script for the shell '%s': under the "
			 "probe-enabled glibc's loader only the shell would be traced, not the "
			 "program it runs; name that program (-c PROGRAM ARGS...)", t->path, interp);
		return -1;
	}
	dyn = elf_dynamic(interp);
	if (dyn != 1) {
		char i2[PATH_MAX], a2[SHEBANG_MAX], what[PATH_MAX + SHEBANG_MAX + 64];

		if (dyn == 0)
			snprintf(what, sizeof(what), "statically linked: it loads no libc.so "
				 "whose probes could be traced");
		else if (read_shebang(interp, i2, sizeof(i2), a2, sizeof(a2)) == 1)
			snprintf(what, sizeof(what), "itself a script (#!%s%s%s), a shim or "
				 "wrapper", i2, a2[0] ? " " : "", a2);
		else
			snprintf(what, sizeof(what), "not an ELF executable");
		snprintf(err, errlen, "'%s' is run by '%s', %s; name the ELF program that runs "
			 "it (-c PROGRAM %s ARGS...)", t->path, interp, what, t->path);
		return -1;
	}
	snprintf(t->interp, sizeof(t->interp), "%s", interp);
	return 0;
}

/* Under sudo (root with SUDO_UID), the program runs as the invoking
 * user.  A SUDO_* environment that does not say who that is exactly is
 * refused: running the program as root instead would be silent. */
static int choose_user(struct mw_target *t, char *err, size_t errlen)
{
	t->uid = (uid_t)-1;
	t->gid = (gid_t)-1;
	return mw_sudo_user(&t->uid, &t->gid, t->user, sizeof(t->user), err, errlen) < 0 ?
	       -1 : 0;
}

/* path made absolute (stap's process("...") wants one) and checked to be
 * a regular file; 0, or -1 with err. */
static int real_file(const char *path, char *out, size_t len, char *err, size_t errlen)
{
	char abs[PATH_MAX];
	struct stat sb;

	if (!realpath(path, abs) || stat(abs, &sb) < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", path);
		return -1;
	}
	snprintf(out, len, "%s", abs);
	return 0;
}

static int mw_target_libc_of_pid(pid_t pid, char *out, size_t len, char *err, size_t errlen);

int mw_choose_libc(const char *libc_opt, pid_t pid, char *out, size_t len,
		   char *err, size_t errlen)
{
	char sys[PATH_MAX];
	const char *prefix = getenv("MW_GLIBC_PREFIX");

	if (libc_opt)
		return real_file(libc_opt, out, len, err, errlen);
	if (pid)
		return mw_target_libc_of_pid(pid, out, len, err, errlen);
	if (mw_system_libc(sys, sizeof(sys)) < 0)
		snprintf(sys, sizeof(sys), "/lib/x86_64-linux-gnu/libc.so.6");
	if (mw_libc_has_probes(sys) == 1) {
		snprintf(out, len, "%s", sys);
		return 0;
	}
	snprintf(out, len, "%s/lib/libc.so.6", prefix && *prefix ? prefix : MW_GLIBC_PREFIX);
	if (access(out, R_OK) != 0) {
		snprintf(err, errlen, "the system libc '%s' has no SDT probes and no "
			 "probe-enabled glibc is at '%s'; run 'mallocwatch setup glibc' as root or use --libc",
			 sys, out);
		return -1;
	}
	return 0;
}

int mw_choose_libm(const char *libm_opt, const char *libc, char *out, size_t len,
		   char *err, size_t errlen)
{
	const char *slash = strrchr(libc, '/');

	out[0] = '\0';
	if (libm_opt)
		return real_file(libm_opt, out, len, err, errlen);
	if (!slash)
		return 0;
	snprintf(out, len, "%.*s/libm.so.6", (int)(slash - libc), libc);
	if (access(out, R_OK) != 0)
		out[0] = '\0';
	return 0;
}

/* How to start the program when t->libc is not the system's libc: in
 * the probe-enabled glibc's mount namespace (not for --libc, nor for a
 * tracer that finds the libc by path), else through the loader beside
 * t->libc. */
static void choose_start(struct mw_target *t, const char *libc_opt, int by_path)
{
	char sys[PATH_MAX], cand[PATH_MAX + 32], dir[PATH_MAX];

	if (mw_system_libc(sys, sizeof(sys)) == 0 && strcmp(t->libc, sys) == 0)
		return;
	if (by_path && !libc_opt)
		snprintf(t->ns_why, sizeof(t->ns_why), "the kernel runtime finds the libc by "
			 "the path a process maps it at, which the namespace would change");
	if (!libc_opt && !by_path) {
		t->ns = mw_libcns_plan(t->libc, sys, t->ns_why, sizeof(t->ns_why));
		if (t->ns && mw_libcns_try(t->ns, t->ns_why, sizeof(t->ns_why)) < 0) {
			mw_libcns_free(t->ns);
			t->ns = NULL;
		}
		if (t->ns)
			return;
	}
	snprintf(dir, sizeof(dir), "%s", t->libc);
	*strrchr(dir, '/') = '\0';
	snprintf(cand, sizeof(cand), "%s/ld-linux-x86-64.so.2", dir);
	if (access(cand, X_OK) == 0)
		snprintf(t->loader, sizeof(t->loader), "%.*s", PATH_MAX - 1, cand);
}

static void build_argv(struct mw_target *t, const char *const *argv)
{
	size_t n = 0, k = 0;
	char libpath[3 * PATH_MAX], dir[PATH_MAX];
	const char *llp = getenv("LD_LIBRARY_PATH");

	while (argv[n])
		n++;
	t->argv = xcalloc(n + 10, sizeof(char *));
	if (t->loader[0]) {
		snprintf(dir, sizeof(dir), "%s", t->libc);
		*strrchr(dir, '/') = '\0';
		snprintf(libpath, sizeof(libpath), "%s:%s%s%s", dir, llp && *llp ? llp : "",
			 llp && *llp ? ":" : "", SYSTEM_LIB_DIRS);
		t->argv[k++] = xstrdup(t->loader);
		t->argv[k++] = xstrdup("--library-path");
		t->argv[k++] = xstrdup(libpath);
		t->argv[k++] = xstrdup("--argv0");
		if (t->interp[0]) {	/* as the kernel runs a script */
			t->argv[k++] = xstrdup(t->interp_argv0);
			t->argv[k++] = xstrdup(t->interp);
			if (t->interp_arg[0])
				t->argv[k++] = xstrdup(t->interp_arg);
		} else {
			t->argv[k++] = xstrdup(argv[0]);
		}
		t->argv[k++] = xstrdup(t->path);
		argv++;
	}
	for (; *argv; argv++)
		t->argv[k++] = xstrdup(*argv);
}

/* What execve(2) would refuse before the tracer is armed: a directory
 * or other non-regular file (access(X_OK) allows a directory), a "#!"
 * interpreter that is not there.  0, or -1 with the reason in err. */
static int cannot_exec(const char *path, char *err, size_t errlen)
{
	char interp[PATH_MAX], arg[SHEBANG_MAX];
	struct stat sb;

	if (stat(path, &sb) < 0) {
		snprintf(err, errlen, "cannot run '%s': %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "cannot run '%s': %s", path,
			 strerror(S_ISDIR(sb.st_mode) ? EISDIR : EACCES));
		return -1;
	}
	if (read_shebang(path, interp, sizeof(interp), arg, sizeof(arg)) == 1 &&
	    access(interp, X_OK) < 0) {
		snprintf(err, errlen, "cannot run '%s': its interpreter '%s' (its '#!' line): %s",
			 path, interp, strerror(errno));
		return -1;
	}
	return 0;
}

/* chroot(8) as the program (argv[0] named chroot): its NEWROOT operand,
 * after coreutils' options (--userspec, --groups with "=" or the value
 * in the next word; --skip-chdir; "--").  NULL when argv is no chroot
 * command; with err set when it is one whose root cannot be told. */
static const char *chroot_operand(const char *const *argv, char *err, size_t errlen)
{
	char q[PATH_MAX];

	err[0] = '\0';
	if (strcmp(base_name(argv[0]), "chroot") != 0)
		return NULL;
	for (argv++; *argv && (*argv)[0] == '-'; argv++) {
		if (strcmp(*argv, "--") == 0) {
			argv++;
			break;
		}
		if (strcmp(*argv, "--userspec") == 0 || strcmp(*argv, "--groups") == 0) {
			if (!*++argv)
				break;
		} else if (strncmp(*argv, "--userspec=", 11) != 0 &&
			   strncmp(*argv, "--groups=", 9) != 0 && strcmp(*argv, "--skip-chdir") != 0) {
			snprintf(err, errlen, "cannot follow chroot's option '%s': the root its "
				 "program runs in is not known", mw_quote(*argv, q, sizeof(q)));
			return NULL;
		}
	}
	if (!*argv)
		snprintf(err, errlen, "chroot without a root to run in");
	return *argv;
}

/* The libc.so.6 a program in root (a directory of ours) loads: the first
 * in the multiarch and then the plain library directories, each looked
 * up inside root (openat2 RESOLVE_IN_ROOT: its links resolve as the
 * program sees them), a regular file.  Its path here into out; 0, or -1
 * with err. */
static int libc_in_root(const char *root, char *out, size_t len, char *err, size_t errlen)
{
	static const char *const dirs[] = { "lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu",
					    "lib64", "usr/lib64", "lib", "usr/lib" };
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char q[PATH_MAX], rel[64], link[64];
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1;
	struct stat sb;
	ssize_t n = -1;

	if (rootfd < 0) {
		snprintf(err, errlen, "cannot open the root '%s': %s", mw_quote(root, q, sizeof(q)),
			 strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && fd < 0; i++) {
		snprintf(rel, sizeof(rel), "%s/libc.so.6", dirs[i]);
		fd = (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
		if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))) {
			close(fd);
			fd = -1;
		}
	}
	close(rootfd);
	if (fd >= 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, out, len - 1);
		close(fd);
	}
	if (n <= 0 || (size_t)n >= len - 1) {
		snprintf(err, errlen, "no libc.so.6 in the root '%s' (its lib/x86_64-linux-gnu, "
			 "usr/lib/x86_64-linux-gnu, lib64, usr/lib64, lib, usr/lib)",
			 mw_quote(root, q, sizeof(q)));
		return -1;
	}
	out[n] = '\0';
	return 0;
}

/* A chroot command: the libc its program will map, from the root it
 * names (not with --libc, which says which).  1 when t->libc is set that
 * way, 0 when argv is no chroot command, -1 with err. */
static int chroot_libc(struct mw_target *t, const char *const *argv, const char *libc_opt,
		       char *err, size_t errlen)
{
	const char *root;

	if (libc_opt)
		return 0;
	if (!(root = chroot_operand(argv, err, errlen)))
		return err[0] ? -1 : 0;
	if (libc_in_root(root, t->libc, sizeof(t->libc), err, errlen) < 0)
		return -1;
	return 1;
}

int mw_target_resolve(const char *const *argv, const char *libc_opt, int by_path,
		      struct mw_target *t, char *err, size_t errlen)
{
	int in_root;

	memset(t, 0, sizeof(*t));
	t->user_argv = argv;
	if (find_program(argv[0], t->path, sizeof(t->path)) < 0) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0],
			 strchr(argv[0], '/') ? strerror(errno) : "command not found");
		return -1;
	}
	if (cannot_exec(t->path, err, errlen) < 0)
		return -1;
	if ((in_root = chroot_libc(t, argv, libc_opt, err, errlen)) < 0)
		return -1;
	if (in_root && by_path) {
		/* the task finder matches the path the process maps, which
		 * inside the root is the root's, not this one */
		snprintf(err, errlen, "the kernel runtime finds the libc by the path a process "
			 "maps it at, which inside a chroot is not '%s': use --runtime=bpf", t->libc);
		return -1;
	}
	if (!in_root && mw_choose_libc(libc_opt, 0, t->libc, sizeof(t->libc), err, errlen) < 0)
		return -1;
	if (!in_root)	/* chroot runs on our libc, untraced; its program on the root's */
		choose_start(t, libc_opt, by_path);
	if (t->loader[0] || t->ns) {
		int dyn = elf_dynamic(t->path);

		if (dyn == 0) {
			snprintf(err, errlen, "'%s' is statically linked: it loads no libc.so "
				 "whose probes could be traced", t->path);
			return -1;
		}
		if (dyn < 0 && !t->ns && follow_script(t, err, errlen) < 0)
			return -1;	/* a script runs in the namespace as it is */
	}
	if (choose_user(t, err, errlen) < 0)
		return -1;
	build_argv(t, argv);
	return 0;
}

/* The libc of a running process, as a path a tracer can probe: the
 * file it maps (mapped.h, "libc.so*" or "libc-*").  When the name its
 * /proc/PID/maps gives is that very file here, that name; else (a
 * process in another mount namespace, a libc deleted or replaced on disk
 * since) the mapped file mounted under MW_MAPPED_DIR (mallocwatch moves
 * into a private mount namespace: call it while single-threaded, before
 * starting a tracer), with the libm it maps beside it as libm.so.6, and
 * a note saying so.  0 or -1 with err. */
static int mw_target_libc_of_pid(pid_t pid, char *out, size_t len, char *err, size_t errlen)
{
	struct mw_mapped m, mm;
	char libm[PATH_MAX], q[PATH_MAX];
	int r = mw_mapped_find(pid, MW_LIB_LIBC, &m, err, errlen), vartmp;

	if (r == 0 && mw_proc_kind(pid) != MW_PROC_USER)
		mw_proc_no_memory(pid, err, errlen);	/* a zombie maps nothing */
	else if (r == 0 && !err[0])
		snprintf(err, errlen, "process %d maps no libc", (int)pid);
	if (r <= 0)
		return -1;
	/* (under /var/tmp: stapbpf's /var/tmp is its own, runtime.h) */
	vartmp = strncmp(m.name, "/var/tmp/", 9) == 0;
	if (mw_mapped_here(&m) && !vartmp) {
		snprintf(out, len, "%s", m.name);
		return 0;
	}
	/* another mount namespace, or replaced on disk: the mapped file */
	if (mw_mapped_mount(&m, "libc.so.6", out, len, err, errlen) < 0)
		return -1;
	mw_note("process %d's libc is its own '%s'%s; here it is %s", (int)pid,
		mw_quote(m.name, q, sizeof(q)), m.deleted ? " (deleted or replaced on disk since it was mapped)" :
		vartmp && mw_mapped_here(&m) ? " (under /var/tmp, which stapbpf's mount namespace "
		"replaces)" : " (another file than this mount namespace's of that name)", out);
	if (mw_mapped_find(pid, MW_LIB_LIBM, &mm, err, errlen) == 1 &&
	    mw_mapped_mount(&mm, "libm.so.6", libm, sizeof(libm), err, errlen) < 0)
		mw_warn("%s; libm's probes are not traced", err);
	return 0;
}

void mw_target_free(struct mw_target *t)
{
	mw_libcns_free(t->ns);
	t->ns = NULL;
	if (!t->argv)
		return;
	for (char **p = t->argv; *p; p++)
		free(*p);
	free(t->argv);
	t->argv = NULL;
}
