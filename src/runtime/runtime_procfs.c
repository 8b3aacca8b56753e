/* runtime_procfs.c - where the tracer's procfs probe files are, and
 * whose they are (runtime.h): the kernel runtime's
 * /proc/systemtap/MODULE/NAME, stapbpf's FIFOs under
 * MW_STAPBPF_TMP/systemtap-USER/MODULE/NAME, opened only through
 * directories no other user can change; and the lock file a run holds
 * for its tracer's module, MODULE.lock beside those directories, which
 * tells the sweep of killed runs what is still in use:
 *
 *	$ ls /run/mallocwatch/vartmp/systemtap-root
 *	mallocwatch_12125_UpDrYd  mallocwatch_12125_UpDrYd.lock
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "runtime.h"

int mw_runtime_procfs_base(char *buf, size_t len)
{
	struct passwd *pw = getpwuid(geteuid());

	if (!pw || !pw->pw_name[0] || strchr(pw->pw_name, '/'))
		return -1;
	return (size_t)snprintf(buf, len, MW_STAPBPF_TMP "/systemtap-%s", pw->pw_name) < len ?
	       0 : -1;
}

int mw_runtime_procfs_path(enum mw_runtime rt, const char *module, const char *name,
			   char *buf, size_t len)
{
	char base[PATH_MAX];
	size_t n;

	if (rt != MW_RT_BPF)
		n = (size_t)snprintf(buf, len, "/proc/systemtap/%s/%s", module, name);
	else if (mw_runtime_procfs_base(base, sizeof(base)) < 0)
		return -1;
	else
		n = (size_t)snprintf(buf, len, "%s/%s/%s", base, module, name);
	return n < len ? 0 : -1;
}

/* openat(at, name) of a directory of the effective user's that only it
 * can change: writable by no one else, unless in (at) is a directory no
 * one else can enter (closed), where its mode does not matter */
static int own_dir_at(int at, const char *name, int in_closed)
{
	struct stat sb;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0 && (fstat(fd, &sb) < 0 || sb.st_uid != geteuid() ||
			((sb.st_mode & 022) && !in_closed))) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* stapbpf's directory of FIFO directories (systemtap-USER), open: the
 * user's own, writable by no one else.  *closed: no one else can enter
 * it (0700, as mw_runtime_procfs_secure makes it), so a module's
 * directory in it may have any mode.  systemtap 5.1's stapbpf makes that
 * one 0777 (create_dir(): umask(0), mkdir 0777, since its PR30321); 4.8's
 * made it by its umask. */
static int fifo_base_open(const char *path, int *closed)
{
	struct stat sb;
	int fd = own_dir_at(AT_FDCWD, path, 0);

	*closed = fd >= 0 && fstat(fd, &sb) == 0 && !(sb.st_mode & 077);
	return fd;
}

int mw_runtime_procfs_open(enum mw_runtime rt, const char *module, const char *name,
			   char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat sb;
	int base, dir, fd, closed;

	if (mw_runtime_procfs_path(rt, module, name, path, sizeof(path)) < 0) {
		snprintf(err, errlen, "no name for user %d", (int)geteuid());
		return -1;
	}
	if (rt != MW_RT_BPF) {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return fd;
	}
	*strrchr(path, '/') = '\0';
	*strrchr(path, '/') = '\0';	/* path: MW_STAPBPF_TMP/systemtap-USER */
	if ((base = fifo_base_open(path, &closed)) < 0) {
		snprintf(err, errlen, "'%s': %s (not the user's own directory?)", path,
			 strerror(errno));
		return -1;
	}
	dir = own_dir_at(base, module, closed);
	close(base);
	if (dir < 0) {
		snprintf(err, errlen, "'%s/%s': %s%s", path, module, strerror(errno),
			 errno == EPERM ? " (writable by others, in a directory others can "
			 "enter)" : "");
		return -1;
	}
	fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	close(dir);
	if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISFIFO(sb.st_mode) || sb.st_uid != geteuid())) {
		close(fd);
		fd = -1;
		errno = EPERM;
	}
	if (fd < 0)
		snprintf(err, errlen, "'%s/%s/%s': %s", path, module, name, strerror(errno));
	return fd;
}

/* The lock this process holds for its tracer's module (one at a time: a
 * later hold lets go of the one before), and that module's name. */
static int procfs_lock = -1;
static char procfs_module[64];

/* Is the file open on fd still base's entry name (not removed and
 * replaced under us)? */
static int same_entry(int base, const char *name, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && a.st_nlink > 0 &&
	       fstatat(base, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

/* "MODULE.lock" into buf, or -1 when module is not a module's name. */
static int lock_name(const char *module, char *buf, size_t len)
{
	if (strncmp(module, MW_MODULE_PREFIX, strlen(MW_MODULE_PREFIX)) != 0 ||
	    strlen(module) >= sizeof(procfs_module) || strchr(module, '/'))
		return -1;
	snprintf(buf, len, "%s" MW_PROCFS_LOCK_SUFFIX, module);
	return 0;
}

int mw_runtime_procfs_hold(const char *module, char *err, size_t errlen)
{
	char path[PATH_MAX], name[96];
	int base, fd = -1;

	if (lock_name(module, name, sizeof(name)) < 0 || mw_runtime_procfs_base(path, sizeof(path)) < 0 ||
	    (base = own_dir_at(AT_FDCWD, path, 0)) < 0) {
		snprintf(err, errlen, "cannot lock stapbpf's FIFO directory for '%s' in '%s': %s",
			 module, path, strerror(errno));
		return -1;
	}
	mw_runtime_procfs_remove(module);	/* a killed stapbpf's (its pid reused) */
	/* a sweep may take the lock between its making and ours, and remove
	 * it: made again */
	for (int i = 0; i < 50 && fd < 0; i++) {
		if (i)
			usleep(10000);
		fd = openat(base, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && (flock(fd, LOCK_EX | LOCK_NB) < 0 || !same_entry(base, name, fd))) {
			close(fd);
			fd = -1;
		}
	}
	close(base);
	if (fd < 0) {
		snprintf(err, errlen, "cannot lock '%s/%s': %s", path, name, strerror(errno));
		return -1;
	}
	mw_runtime_procfs_release();
	procfs_lock = fd;
	snprintf(procfs_module, sizeof(procfs_module), "%s", module);
	return 0;
}

int mw_runtime_procfs_lock_fd(void)
{
	return procfs_lock;
}

const char *mw_runtime_procfs_module(void)
{
	return procfs_module[0] ? procfs_module : NULL;
}

void mw_runtime_procfs_lock_move(int at)
{
	if (procfs_lock >= 0 && procfs_lock != at)
		procfs_lock = fcntl(procfs_lock, F_DUPFD_CLOEXEC, at);
}

void mw_runtime_procfs_release(void)
{
	if (procfs_lock >= 0)
		close(procfs_lock);
	procfs_lock = -1;
}

int mw_runtime_procfs_take(const char *module, int *fdp)
{
	char path[PATH_MAX], name[96];
	struct stat sb;
	int base, fd, r = -1;

	*fdp = -1;
	if (lock_name(module, name, sizeof(name)) < 0 || mw_runtime_procfs_base(path, sizeof(path)) < 0 ||
	    (base = own_dir_at(AT_FDCWD, path, 0)) < 0)
		return -1;
	/* O_NONBLOCK: nothing but a regular file is opened (the place is
	 * root's alone) */
	fd = openat(base, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		r = errno == ENOENT ? 0 : -1;
	} else if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
		   flock(fd, LOCK_EX | LOCK_NB) == 0 && same_entry(base, name, fd)) {
		*fdp = fd;
		r = 1;
	}
	if (r != 1 && fd >= 0)
		close(fd);
	close(base);
	return r;
}

int mw_runtime_procfs_held(const char *module)
{
	int fd, r = mw_runtime_procfs_take(module, &fd);

	if (fd >= 0)
		close(fd);
	return r < 0;
}

void mw_runtime_procfs_remove(const char *module)
{
	char path[PATH_MAX], name[96];
	int base, dir, closed;

	if (mw_runtime_procfs_base(path, sizeof(path)) < 0 ||
	    (base = fifo_base_open(path, &closed)) < 0)
		return;
	if ((dir = own_dir_at(base, module, closed)) >= 0) {
		DIR *d = fdopendir(dir);
		struct dirent *de;

		while (d && (de = readdir(d)))	/* stapbpf's FIFOs */
			if (de->d_name[0] != '.')
				unlinkat(dir, de->d_name, 0);
		if (d)
			closedir(d);
		else
			close(dir);
		unlinkat(base, module, AT_REMOVEDIR);
	}
	if (lock_name(module, name, sizeof(name)) == 0)
		unlinkat(base, name, 0);	/* its lock's file */
	close(base);
}
