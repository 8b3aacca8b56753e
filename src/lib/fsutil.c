/* fsutil.c - see fsutil.h. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "fsutil.h"

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

/* Is the directory open on fd one only we (or root) can change?  last:
 * the last of the chain, which may be sticky only with sticky_ok. */
static int safe_dir(int fd, int sticky_ok, const char *path, char *err, size_t errlen)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0) {
		snprintf(err, errlen, "cannot stat '%s': %s", path, strerror(errno));
		return -1;
	}
	if (sb.st_uid != geteuid() && sb.st_uid != 0) {
		snprintf(err, errlen, "'%s' belongs to uid %u", path, (unsigned)sb.st_uid);
		return -1;
	}
	if ((sb.st_mode & 022) && !(sticky_ok && (sb.st_mode & S_ISVTX))) {
		snprintf(err, errlen, "'%s' is writable by others (mode %04o)", path,
			 (unsigned)(sb.st_mode & 07777));
		return -1;
	}
	return 0;
}

int mw_dir_open_safe(const char *path, int create, int sticky_last, char *err, size_t errlen)
{
	char copy[PATH_MAX], sofar[PATH_MAX] = "";
	char *save, *comp, *next;
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (path[0] != '/' || (size_t)snprintf(copy, sizeof(copy), "%s", path) >= sizeof(copy)) {
		snprintf(err, errlen, "'%s' is not an absolute path", path);
		goto fail;
	}
	if (fd < 0 || safe_dir(fd, 1, "/", err, errlen) < 0)
		goto fail;
	for (comp = strtok_r(copy, "/", &save); comp; comp = next) {
		int sub;

		next = strtok_r(NULL, "/", &save);
		snprintf(sofar + strlen(sofar), sizeof(sofar) - strlen(sofar), "/%s", comp);
		if (!next && create && mkdirat(fd, comp, 0700) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create '%s': %s", sofar, strerror(errno));
			goto fail;
		}
		sub = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			snprintf(err, errlen, "cannot open '%s': %s%s", sofar, strerror(errno),
				 errno == ELOOP || errno == ENOTDIR ? " (a link or not a directory: "
				 "refused, it would be followed)" : "");
			goto fail;
		}
		close(fd);
		fd = sub;
		if (safe_dir(fd, next || sticky_last, sofar, err, errlen) < 0)
			goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

void mw_remove_tree(const char *path)
{
	if (path && path[0])
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

int mw_root_only_dir(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && sb.st_uid == 0 &&
	       !(sb.st_mode & 022);
}

int mw_lock_path(int fd, const char *path)
{
	struct stat a, b;

	return flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &a) == 0 && a.st_nlink > 0 &&
	       lstat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

int mw_open_regular(int dirfd, const char *path, unsigned long long resolve, unsigned need)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = resolve };
	char self[64];
	struct stat a, b;
	int at, fd = -1, e;

	at = resolve ? (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how)) :
		       openat(dirfd, path, O_PATH | O_CLOEXEC);
	if (at < 0)
		return -1;
	if (fstat(at, &a) < 0)
		goto out;
	if (!S_ISREG(a.st_mode) || (a.st_mode & need) != need) {
		errno = S_ISREG(a.st_mode) ? EACCES : EINVAL;
		goto out;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", at);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &b) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev)) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
out:
	e = errno;
	close(at);
	errno = e;
	return fd;
}

FILE *mw_fopen_input(const char *path)
{
	int fd = mw_open_regular(AT_FDCWD, path, 0, 0), fl, e;
	FILE *f;

	if (fd < 0)
		return NULL;
	if ((fl = fcntl(fd, F_GETFL)) >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (!(f = fdopen(fd, "r"))) {
		e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

const char *mw_input_strerror(int e)
{
	return e == EINVAL ? "not a regular file" : strerror(e);
}
