/* glibc_ns.c - the probe-enabled glibc at the system's paths, in a mount
 * namespace of the program's own; see glibc_ns.h.  What a run on this
 * machine mounts (grep of /proc/PID/mountinfo in the program):
 *
 *	54 66 254:0 /var/cache/mallocwatch/glibc/lib/libc.so.6 /usr/lib/x86_64-linux-gnu/libc.so.6 ro,nosuid,nodev,relatime - ext4 /dev/vda rw,...
 *	64 66 254:0 /etc/ld.so.cache /var/cache/mallocwatch/glibc/etc/ld.so.cache ro,nosuid,nodev,relatime - ext4 /dev/vda rw,...
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "glibc_ns.h"
#include "xalloc.h"

#define LOADER "ld-linux-x86-64.so.2"
#define PT_INTERP_PATH "/lib64/" LOADER	/* x86_64's, as in target.c */
#define SYS_LDCACHE "/etc/ld.so.cache"

struct bind {
	int fd;			/* the file mounted, as checked (close-on-exec) */
	char src[PATH_MAX];	/* its name, for messages */
	char dst[PATH_MAX];	/* where: a real path, no links */
};

struct mw_libcns {
	size_t n;
	struct bind b[MW_LIBCNS_MAX];
};

/* name, opened relative to the checked directory dirfd: 1 with *fd when
 * it is a regular file, root's (or ours) and writable by no one else; 0
 * when it is missing or not a regular file (a link, a directory); -1
 * with err when it is a file someone else could change. */
static int open_ours(int dirfd, const char *dir, const char *name, int *fd, char *err,
		     size_t errlen)
{
	struct stat sb;
	int f = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (f < 0)
		return 0;
	if (fstat(f, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(f);
		return 0;
	}
	if ((sb.st_uid != 0 && sb.st_uid != geteuid()) || (sb.st_mode & 022)) {
		snprintf(err, errlen, "'%s/%s' could be changed by others than root (owner uid "
			 "%u, mode %04o): not mounted over the system's", dir, name, (unsigned)sb.st_uid,
			 (unsigned)(sb.st_mode & 07777));
		close(f);
		return -1;
	}
	*fd = f;
	return 1;
}

static int is_elf(int fd)
{
	char m[4];

	return pread(fd, m, 4, 0) == 4 && memcmp(m, "\177ELF", 4) == 0;
}

/* A shared library's name: "*.so" or "*.so.*" (not libc.a). */
static int so_name(const char *name)
{
	const char *s = strstr(name, ".so");

	return name[0] != '.' && s && (s[3] == '\0' || s[3] == '.');
}

/* Does the file fd contain the string s (its NUL included; len: s's
 * bytes, NUL included, when s begins with one; else 0)? */
static int file_names(int fd, const char *s, size_t len)
{
	struct stat sb;
	void *p;
	int found;

	if (fstat(fd, &sb) < 0 || sb.st_size <= 0)
		return 0;
	p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 0;
	found = memmem(p, (size_t)sb.st_size, s, len ? len : strlen(s) + 1) != NULL;
	munmap(p, (size_t)sb.st_size);
	return found;
}

/* Add fd (taken) to be mounted on dst (made a real path); a dst already
 * planned, or missing, leaves fd closed and the plan unchanged. */
static void add(struct mw_libcns *ns, int fd, const char *src, const char *dst)
{
	char real[PATH_MAX];

	if (fd < 0)
		return;
	if (!realpath(dst, real) || ns->n == MW_LIBCNS_MAX) {
		close(fd);
		return;
	}
	for (size_t i = 0; i < ns->n; i++)
		if (strcmp(ns->b[i].dst, real) == 0) {
			close(fd);
			return;
		}
	ns->b[ns->n].fd = fd;
	snprintf(ns->b[ns->n].src, PATH_MAX, "%.*s", PATH_MAX - 1, src);
	snprintf(ns->b[ns->n].dst, PATH_MAX, "%s", real);
	ns->n++;
}

/* Is name among what the plan binds (by the source's base name)? */
static int planned(const struct mw_libcns *ns, const char *name)
{
	for (size_t i = 0; i < ns->n; i++) {
		const char *b = strrchr(ns->b[i].src, '/');

		if (b && strcmp(b + 1, name) == 0)
			return 1;
	}
	return 0;
}

/* Every ELF library of libdir (opened as dirfd) with a regular file of
 * that name in sysdir.  0, or -1 with err. */
static int add_libraries(struct mw_libcns *ns, int dirfd, const char *libdir,
			 const char *sysdir, char *err, size_t errlen)
{
	int d = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, r = 0;
	DIR *dir = d < 0 ? NULL : fdopendir(d);
	struct dirent *e;

	if (!dir) {
		snprintf(err, errlen, "cannot read '%s': %s", libdir, strerror(errno));
		if (d >= 0)
			close(d);
		return -1;
	}
	while (r == 0 && (e = readdir(dir))) {
		char src[PATH_MAX + NAME_MAX + 2], dst[PATH_MAX + NAME_MAX + 2];
		struct stat sb;
		int got;

		if (!so_name(e->d_name) ||
		    (size_t)snprintf(dst, sizeof(dst), "%s/%s", sysdir, e->d_name) >= PATH_MAX ||
		    (size_t)snprintf(src, sizeof(src), "%s/%s", libdir, e->d_name) >= PATH_MAX)
			continue;
		if (stat(dst, &sb) < 0 || !S_ISREG(sb.st_mode))
			continue;
		got = open_ours(dirfd, libdir, e->d_name, &fd, err, errlen);
		if (got < 0)
			r = -1;
		if (got <= 0)
			continue;
		if (!is_elf(fd)) {	/* a linker script (libc.so) */
			close(fd);
			continue;
		}
		add(ns, fd, src, dst);
	}
	closedir(dir);
	return r;
}

/* The probe-enabled loader reads PREFIX/etc/ld.so.cache: the system's
 * is mounted there.  A loader built for the system's own paths (a
 * distribution's glibc rebuilt with probes, as `make glibc-root` makes:
 * the trixie guest's) reads the system's /etc/ld.so.cache itself: nothing
 * to mount.  0, or -1 with err. */
static int add_ldcache(struct mw_libcns *ns, const char *prefix, char *err, size_t errlen)
{
	char etc[PATH_MAX + 8], cache[PATH_MAX + 24];
	static const char sys_whole[] = "\0" SYS_LDCACHE;	/* the string alone */
	int etcfd, fd, got, cfd;
	struct stat sb;

	snprintf(etc, sizeof(etc), "%s/etc", prefix);
	snprintf(cache, sizeof(cache), "%s/ld.so.cache", etc);
	for (size_t i = 0; i < ns->n; i++) {
		const char *b = strrchr(ns->b[i].src, '/');

		if (!b || strcmp(b + 1, LOADER) != 0 || file_names(ns->b[i].fd, cache, 0))
			continue;
		if (file_names(ns->b[i].fd, sys_whole, sizeof(sys_whole)))
			return 0;
		snprintf(err, errlen, "the loader '%s' does not read '%s'", ns->b[i].src, cache);
		return -1;
	}
	if ((etcfd = mw_dir_open_safe(etc, 0, 0, err, errlen)) < 0)
		return -1;
	got = open_ours(etcfd, etc, "ld.so.cache", &fd, err, errlen);
	close(etcfd);
	if (got <= 0) {
		if (got == 0)
			snprintf(err, errlen, "no '%s' to mount the system's cache on", cache);
		return -1;
	}
	close(fd);	/* the target, mounted on by its path */
	cfd = open(SYS_LDCACHE, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (cfd < 0 || fstat(cfd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != 0 ||
	    (sb.st_mode & 022)) {
		snprintf(err, errlen, "'%s' is missing, not a regular file, or not root's alone",
			 SYS_LDCACHE);
		if (cfd >= 0)
			close(cfd);
		return -1;
	}
	add(ns, cfd, SYS_LDCACHE, cache);
	return 0;
}

/* The plan's libraries, its loader at PT_INTERP and the cache. */
static int plan(struct mw_libcns *ns, const char *libdir, const char *sysdir, char *err,
		size_t errlen)
{
	char prefix[PATH_MAX], interp[PATH_MAX];
	int dirfd = mw_dir_open_safe(libdir, 0, 0, err, errlen), r;

	if (dirfd < 0)
		return -1;
	r = add_libraries(ns, dirfd, libdir, sysdir, err, errlen);
	close(dirfd);
	if (r < 0)
		return -1;
	if (!planned(ns, "libc.so.6") || !planned(ns, LOADER)) {
		snprintf(err, errlen, "'%s' and '%s' do not both hold libc.so.6 and %s", libdir,
			 sysdir, LOADER);
		return -1;
	}
	for (size_t i = 0; i < ns->n; i++)	/* PT_INTERP, when it is a file of its own */
		if (strcmp(strrchr(ns->b[i].src, '/') + 1, LOADER) == 0 &&
		    realpath(PT_INTERP_PATH, interp)) {
			add(ns, fcntl(ns->b[i].fd, F_DUPFD_CLOEXEC, 3), ns->b[i].src, interp);
			break;
		}
	snprintf(prefix, sizeof(prefix), "%s", libdir);
	*strrchr(prefix, '/') = '\0';
	return add_ldcache(ns, prefix, err, errlen);
}

struct mw_libcns *mw_libcns_plan(const char *libc, const char *syslibc, char *err,
				 size_t errlen)
{
	struct mw_libcns *ns;
	char libdir[PATH_MAX], sysdir[PATH_MAX];

	snprintf(libdir, sizeof(libdir), "%s", libc);
	snprintf(sysdir, sizeof(sysdir), "%s", syslibc);
	if (!strrchr(libdir, '/') || !strrchr(sysdir, '/') || libdir[0] != '/') {
		snprintf(err, errlen, "'%s' or '%s' is not an absolute path", libc, syslibc);
		return NULL;
	}
	*strrchr(libdir, '/') = '\0';
	*strrchr(sysdir, '/') = '\0';
	if (!strrchr(libdir, '/') || !libdir[1]) {
		snprintf(err, errlen, "'%s' is not PREFIX/lib/libc.so.6", libc);
		return NULL;
	}
	ns = xcalloc(1, sizeof(*ns));
	if (plan(ns, libdir, sysdir, err, errlen) < 0) {
		mw_libcns_free(ns);
		return NULL;
	}
	return ns;
}

int mw_libcns_enter(const struct mw_libcns *ns, int *step)
{
	int tree[MW_LIBCNS_MAX], e;
	size_t i, made = 0;

	/* detached copies of the checked files, made here: a descriptor
	 * of the old namespace's cannot be mounted from the new one */
	for (i = 0; i < ns->n; i++, made++)
		if ((tree[i] = open_tree(ns->b[i].fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
					 AT_EMPTY_PATH)) < 0) {
			if (errno == EPERM)	/* no CAP_SYS_ADMIN: no namespace */
				i = (size_t)-1;
			goto fail;
		}
	i = (size_t)-1;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		goto fail;
	for (i = 0; i < ns->n; i++)
		if (move_mount(tree[i], "", AT_FDCWD, ns->b[i].dst, MOVE_MOUNT_F_EMPTY_PATH) < 0 ||
		    mount(NULL, ns->b[i].dst, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID |
			  MS_NODEV, NULL) < 0)
			goto fail;
	for (i = 0; i < made; i++)
		close(tree[i]);
	return 0;
fail:
	e = errno;
	if (step)
		*step = i == (size_t)-1 ? -1 : (int)i;
	while (made)
		close(tree[--made]);
	errno = e;
	return -1;
}

int mw_libcns_try(const struct mw_libcns *ns, char *err, size_t errlen)
{
	int p[2], msg[2] = { 0, 0 }, st;
	pid_t pid;
	ssize_t got;

	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (mw_libcns_enter(ns, &msg[0]) < 0) {
			msg[1] = errno;
			if (write(p[1], msg, sizeof(msg)) < 0)
				_exit(2);
			_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		return -1;
	}
	while ((got = read(p[0], msg, sizeof(msg))) < 0 && errno == EINTR)
		;
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got != sizeof(msg) && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (got != sizeof(msg))
		snprintf(err, errlen, "the trial of the mount namespace ended with status 0x%x", st);
	else if (msg[0] < 0 || (size_t)msg[0] >= ns->n)
		snprintf(err, errlen, "cannot make a mount namespace: %s", strerror(msg[1]));
	else
		snprintf(err, errlen, "cannot mount '%s' on '%s': %s", ns->b[msg[0]].src,
			 ns->b[msg[0]].dst, strerror(msg[1]));
	return -1;
}

void mw_libcns_free(struct mw_libcns *ns)
{
	if (!ns)
		return;
	for (size_t i = 0; i < ns->n; i++)
		close(ns->b[i].fd);
	free(ns);
}
