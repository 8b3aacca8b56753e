/* target.c - program path, libc choice and loader wrapping; see target.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapped.h"
#include "msg.h"
#include "sdtnote.h"
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

int mw_system_libc(char *out, size_t len)
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

/* A sudo user id: digits only, below (uid_t)-1. */
static int parse_id(const char *s, unsigned long *v)
{
	char *end;

	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return *end || errno || *v >= (uid_t)-1 ? -1 : 0;
}

int mw_sudo_user(uid_t *uid, gid_t *gid, char *user, size_t userlen, char *err,
		 size_t errlen)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	const char *name = getenv("SUDO_USER");
	unsigned long vu, vg;

	if (getuid() != 0 || (!u && !g))
		return 0;
	if (parse_id(u, &vu) < 0 || parse_id(g, &vg) < 0) {
		snprintf(err, errlen, "SUDO_UID='%s' and SUDO_GID='%s' do not name a user to run "
			 "the program as; set both to numeric ids, or unset both to run it as root",
			 u ? u : "", g ? g : "");
		return -1;
	}
	*uid = (uid_t)vu;
	*gid = (gid_t)vg;
	snprintf(user, userlen, "%s", name ? name : "");
	return 1;
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
			 "probe-enabled glibc is at '%s'; run 'make glibc' as root or use --libc",
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
 * the probe-enabled glibc's mount namespace (not for --libc), else
 * through the loader beside t->libc. */
static void choose_start(struct mw_target *t, const char *libc_opt)
{
	char sys[PATH_MAX], cand[PATH_MAX + 32], dir[PATH_MAX];

	if (mw_system_libc(sys, sizeof(sys)) == 0 && strcmp(t->libc, sys) == 0)
		return;
	if (!libc_opt) {
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
	t->argv = xcalloc(n + 8, sizeof(char *));
	if (t->loader[0]) {
		snprintf(dir, sizeof(dir), "%s", t->libc);
		*strrchr(dir, '/') = '\0';
		snprintf(libpath, sizeof(libpath), "%s:%s%s%s", dir, llp && *llp ? llp : "",
			 llp && *llp ? ":" : "", SYSTEM_LIB_DIRS);
		t->argv[k++] = xstrdup(t->loader);
		t->argv[k++] = xstrdup("--library-path");
		t->argv[k++] = xstrdup(libpath);
		t->argv[k++] = xstrdup("--argv0");
		t->argv[k++] = xstrdup(argv[0]);
		t->argv[k++] = xstrdup(t->path);
		argv++;
	}
	for (; *argv; argv++)
		t->argv[k++] = xstrdup(*argv);
}

int mw_target_resolve(const char *const *argv, const char *libc_opt,
		      struct mw_target *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->user_argv = argv;
	if (find_program(argv[0], t->path, sizeof(t->path)) < 0) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0],
			 strchr(argv[0], '/') ? strerror(errno) : "command not found");
		return -1;
	}
	if (mw_choose_libc(libc_opt, 0, t->libc, sizeof(t->libc), err, errlen) < 0)
		return -1;
	choose_start(t, libc_opt);
	if (t->loader[0] || t->ns) {
		int dyn = elf_dynamic(t->path);

		if (dyn == 0) {
			snprintf(err, errlen, "'%s' is statically linked: it loads no libc.so "
				 "whose probes could be traced", t->path);
			return -1;
		}
		if (dyn < 0 && !t->ns) {	/* a script runs in the namespace */
			snprintf(err, errlen, "'%s' is not an ELF executable; it cannot be "
				 "started under the probe-enabled glibc's loader", t->path);
			return -1;
		}
	}
	if (choose_user(t, err, errlen) < 0)
		return -1;
	build_argv(t, argv);
	return 0;
}

int mw_target_libc_of_pid(pid_t pid, char *out, size_t len, char *err, size_t errlen)
{
	struct mw_mapped m, mm;
	char libm[PATH_MAX], q[PATH_MAX];
	int r = mw_mapped_find(pid, MW_LIB_LIBC, &m, err, errlen);

	if (r == 0)
		snprintf(err, errlen, "process %d maps no libc", (int)pid);
	if (r <= 0)
		return -1;
	if (mw_mapped_here(&m)) {
		snprintf(out, len, "%s", m.name);
		return 0;
	}
	/* another mount namespace, or replaced on disk: the mapped file */
	if (mw_mapped_mount(&m, "libc.so.6", out, len, err, errlen) < 0)
		return -1;
	mw_note("process %d's libc is its own '%s'%s; here it is %s", (int)pid,
		mw_quote(m.name, q, sizeof(q)), m.deleted ? " (deleted or replaced on disk since it was mapped)" :
		" (another file than this mount namespace's of that name)", out);
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
