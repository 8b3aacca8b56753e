/* relsock.c - the directories of -f runs' release sockets; see relsock.h.
 * A live root run's:
 *
 *	/run/mallocwatch/release/4026531836.4242/socket
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "relsock.h"

/* The directory open on fd is uid's alone (no group or other bits)?
 * Else why says what it is. */
static int private_to(int fd, uid_t uid, const char *path, char *why, size_t len)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		snprintf(why, len, "'%s' is not a directory", path);
		return 0;
	}
	if (sb.st_uid != uid || (sb.st_mode & 077)) {
		snprintf(why, len, "'%s' is not uid %d's alone (uid %d, mode %04o)", path, (int)uid,
			 (int)sb.st_uid, (unsigned)(sb.st_mode & 07777));
		return 0;
	}
	return 1;
}

/* A user's $XDG_RUNTIME_DIR, path: opened without following any link on
 * the way, when it is uid's alone; its descriptor, or -1 with why. */
static int open_runtime_dir(const char *path, uid_t uid, char *why, size_t len)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd;

	if (!path || path[0] != '/') {
		snprintf(why, len, "no XDG_RUNTIME_DIR (an absolute path) for uid %d", (int)uid);
		return -1;
	}
	if ((fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how))) < 0) {
		snprintf(why, len, "XDG_RUNTIME_DIR '%s': %s", path, strerror(errno));
		return -1;
	}
	if (!private_to(fd, uid, path, why, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

int mw_relsock_base(uid_t uid, const char *xdg, int create, char *why, size_t len)
{
	char err[512];
	int top, fd;

	if (uid == 0) {
		if (create && mkdir(MW_RUN_DIR, 0700) < 0 && errno != EEXIST) {
			snprintf(why, len, "cannot make '%s': %s", MW_RUN_DIR, strerror(errno));
			return -1;
		}
		if ((fd = mw_dir_open_safe(MW_RELSOCK_DIR, create, 0, err, sizeof(err))) < 0) {
			snprintf(why, len, "%s", err);
			return -1;
		}
		if (!private_to(fd, 0, MW_RELSOCK_DIR, why, len)) {
			close(fd);
			return -1;
		}
		return fd;
	}
	if ((top = open_runtime_dir(xdg, uid, why, len)) < 0)
		return -1;
	if (create && mkdirat(top, MW_RELSOCK_USER_DIR, 0700) < 0 && errno != EEXIST) {
		snprintf(why, len, "cannot make '%s/%s': %s", xdg, MW_RELSOCK_USER_DIR,
			 strerror(errno));
		close(top);
		return -1;
	}
	fd = openat(top, MW_RELSOCK_USER_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(top);
	snprintf(err, sizeof(err), "%s/%s", xdg, MW_RELSOCK_USER_DIR);
	if (fd < 0) {
		snprintf(why, len, "cannot open '%s': %s", err, strerror(errno));
		return -1;
	}
	if (!private_to(fd, uid, err, why, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

void mw_relsock_name(unsigned long long ns, pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "%llu.%d", ns, (int)pid);
}

void mw_relsock_self(char *buf, size_t len)
{
	struct stat sb;

	mw_relsock_name(stat("/proc/self/ns/pid", &sb) == 0 ? (unsigned long long)sb.st_ino : 0,
			getpid(), buf, len);
}

/* Is name in base still the directory open on fd (not removed, not
 * replaced)? */
static int still(int base, const char *name, int fd)
{
	struct stat a, b;

	return fstatat(base, name, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* name in base, a directory of ours: open and locked (1 with *fd), held
 * by a live process (0), or not a directory (-1, errno set). */
static int take(int base, const char *name, int *fd)
{
	struct stat sb;

	*fd = openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0)
		return -1;
	if (fstat(*fd, &sb) < 0 || sb.st_uid != geteuid() || flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		close(*fd);
		*fd = -1;
		return 0;
	}
	return 1;
}

/* How long a run's name may stay locked by someone else before it is
 * said to be held: a sweep (of another run of this user, as it starts)
 * locks the directory of a run that has made it and not locked it yet,
 * for as long as it takes to remove it, ms. */
#define MAKE_WAIT_MS 1000

int mw_relsock_make(int base, const char *name, char *why, size_t len)
{
	long long until = mw_now_ms() + MAKE_WAIT_MS;
	int held = 0;

	for (int tries = 0; tries < 64 || mw_now_ms() < until; tries++) {
		int fd, r;

		if (held && mw_now_ms() >= until)
			break;
		if (mkdirat(base, name, 0700) < 0 && errno != EEXIST)
			break;
		if ((r = take(base, name, &fd)) < 0 && (errno == ENOTDIR || errno == ELOOP)) {
			/* not a directory: the base is ours alone, so ours */
			unlinkat(base, name, 0);
			continue;
		}
		if (r < 0 && errno == ENOENT)
			continue;	/* a sweep removed it before our lock: again */
		if (r < 0)
			break;
		if (r == 0) {	/* a sweep's lock for a moment, or a live run's */
			held = 1;
			usleep(1000);
			continue;
		}
		if (!still(base, name, fd)) {	/* a sweep took it first */
			close(fd);
			continue;
		}
		/* an earlier process of this pid's, dead (its lock was free) */
		unlinkat(fd, MW_RELSOCK_SOCKET, 0);
		return fd;
	}
	if (held)
		snprintf(why, len, "its directory '%s' is held by another process", name);
	else
		snprintf(why, len, "cannot make its directory '%s': %s", name, strerror(errno));
	return -1;
}

void mw_relsock_remove(int base, const char *name, int dir)
{
	unlinkat(dir, MW_RELSOCK_SOCKET, 0);
	if (still(base, name, dir))
		unlinkat(base, name, AT_REMOVEDIR);
	close(dir);
}

int mw_relsock_sweep(void)
{
	char why[512];
	int base = mw_relsock_base(geteuid(), getenv("XDG_RUNTIME_DIR"), 0, why, sizeof(why));
	int dup_fd = base >= 0 ? fcntl(base, F_DUPFD_CLOEXEC, 0) : -1, n = 0;
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d))) {
		unsigned long long ns;
		int pid, used = 0, fd;

		if (sscanf(de->d_name, "%llu.%d%n", &ns, &pid, &used) != 2 || de->d_name[used] ||
		    take(base, de->d_name, &fd) <= 0)
			continue;	/* not a run's, or a live run's */
		if (still(base, de->d_name, fd)) {
			unlinkat(fd, MW_RELSOCK_SOCKET, 0);
			n += unlinkat(base, de->d_name, AT_REMOVEDIR) == 0;
		}
		close(fd);
	}
	if (d)
		closedir(d);
	else if (dup_fd >= 0)
		close(dup_fd);
	if (base >= 0)
		close(base);
	return n;
}
