/* cache.c - root's cache of what runs build once (cache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "fsutil.h"
#include "msg.h"

int mw_cache_subdir(const char *name, char *dir, size_t len)
{
	struct stat sb;
	const char *off = getenv("MW_NO_CACHE");

	snprintf(dir, len, "%s/%s", MW_CACHE_DIR, name);
	if ((off && *off) || geteuid() != 0 || (mkdir(MW_CACHE_DIR, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(dir, 0700) < 0 && errno != EEXIST) || lstat(dir, &sb) < 0 ||
	    !S_ISDIR(sb.st_mode) || sb.st_uid != 0 || (sb.st_mode & 077))
		return -1;
	return 0;
}

/* Lock the temporary just made at path, open on fd (which is closed on
 * failure): the descriptor, or -1 when a sweep took it first. */
static int hold(int fd, const char *path)
{
	if (fd >= 0 && mw_lock_path(fd, path))
		return fd;
	if (fd >= 0)
		close(fd);
	errno = EAGAIN;
	return -1;
}

static int tmp_name(const char *parent, char *path, size_t len)
{
	if ((size_t)snprintf(path, len, "%s/" MW_CACHE_NEW "XXXXXX", parent) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* A sweep (another run's) may take a temporary between its making and
 * its lock: then it is made again, under another name. */
#define TMP_TRIES 8

int mw_cache_tmpdir(const char *parent, char *path, size_t len)
{
	int fd = -1;

	for (int i = 0; i < TMP_TRIES && fd < 0; i++) {
		if (tmp_name(parent, path, len) < 0 || !mkdtemp(path))
			return -1;
		fd = hold(open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), path);
	}
	return fd;
}

int mw_cache_tmpfile(const char *parent, char *path, size_t len)
{
	int fd = -1;

	for (int i = 0; i < TMP_TRIES && fd < 0; i++) {
		if (tmp_name(parent, path, len) < 0)
			return -1;
		fd = hold(mkostemp(path, O_CLOEXEC), path);
	}
	return fd;
}

void mw_cache_used(const char *path)
{
	utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW);
}

long long mw_cache_limit(void)
{
	const char *s = getenv("MALLOCWATCH_CACHE_MB");
	char *end;
	long long mb;

	if (!s || !*s)
		return (long long)MW_CACHE_MB_DEFAULT << 20;
	errno = 0;
	mb = strtoll(s, &end, 10);
	if (errno || *end || mb < 1 || mb > (1LL << 40)) {
		mw_warn("MALLOCWATCH_CACHE_MB='%s' is not a whole number of MiB (1 or more); "
			"keeping %d MiB", s, MW_CACHE_MB_DEFAULT);
		return (long long)MW_CACHE_MB_DEFAULT << 20;
	}
	return mb << 20;
}

/* A compiled script: a bpf object or a kernel module (tracer_proc.h
 * names them; only root writes in modules/). */
static int compiled(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && (strcmp(name + n - 3, ".bo") == 0 || strcmp(name + n - 3, ".ko") == 0);
}

struct kept {
	char name[NAME_MAX + 1];
	long long size;
	struct timespec used;
};

static int older(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

int mw_cache_evict(long long limit)
{
	char dir[PATH_MAX], p[PATH_MAX + NAME_MAX + 2];
	struct kept *k = NULL;
	size_t n = 0, cap = 0;
	long long total = 0;
	struct dirent *e;
	int gone = 0;
	DIR *d;

	if (mw_cache_subdir("modules", dir, sizeof(dir)) < 0 || !(d = opendir(dir)))
		return 0;
	while ((e = readdir(d))) {
		struct stat sb;

		if (!compiled(e->d_name) || fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(sb.st_mode))
			continue;
		if (n == cap) {
			struct kept *m = realloc(k, (cap = cap ? 2 * cap : 64) * sizeof(*k));

			if (!m)
				break;
			k = m;
		}
		snprintf(k[n].name, sizeof(k[n].name), "%s", e->d_name);
		k[n].size = (long long)sb.st_size;
		k[n].used = sb.st_mtim;
		total += k[n++].size;
	}
	closedir(d);
	if (n && total > limit) {	/* n 0 (k NULL): nothing to evict, whatever the limit */
		time_t fresh = time(NULL) - MW_CACHE_FRESH_S;

		qsort(k, n, sizeof(*k), older);
		for (size_t i = 0; i < n && total > limit && k[i].used.tv_sec < fresh; i++) {
			snprintf(p, sizeof(p), "%s/%s", dir, k[i].name);
			if (unlink(p) == 0) {
				total -= k[i].size;
				gone++;
			}
		}
	}
	free(k);
	return gone;
}

/* The temporaries in dir nobody holds the lock on, removed. */
static int sweep_new(const char *dir)
{
	char p[PATH_MAX + NAME_MAX + 2];
	struct dirent *e;
	int gone = 0;
	DIR *d;

	if (!mw_root_only_dir(dir) || !(d = opendir(dir)))
		return 0;
	while ((e = readdir(d))) {
		struct stat sb;
		int fd;

		if (strncmp(e->d_name, MW_CACHE_NEW, strlen(MW_CACHE_NEW)) ||
		    strlen(e->d_name) != strlen(MW_CACHE_NEW) + 6)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		/* O_NONBLOCK: nothing but a file or a directory is opened
		 * for long (the place is root's alone: only root plants) */
		fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &sb) == 0 && (S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode)) &&
		    mw_lock_path(fd, p)) {
			mw_remove_tree(p);
			gone++;
		}
		close(fd);
	}
	closedir(d);
	return gone;
}

int mw_cache_sweep(void)
{
	if (geteuid() != 0 || !mw_root_only_dir(MW_CACHE_DIR))
		return 0;
	return sweep_new(MW_CACHE_DIR) + sweep_new(MW_CACHE_DIR "/modules") +
	       sweep_new(MW_CACHE_DIR "/runtime");
}
