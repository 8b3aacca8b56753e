/* proclist.c - process ids from a list, a cgroup or all of /proc
 * (proclist.h).  A cgroup.procs file, the same in v1 and v2:
 *
 *	8123
 *	8130
 *
 * and the /proc/PID/maps line that makes a process a glibc's:
 *
 *	7f2c4a228000-7f2c4a39d000 r-xp 00028000 fe:01 1311038  /usr/lib/x86_64-linux-gnu/libc.so.6
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "procmem.h"
#include "proclist.h"
#include "xalloc.h"

int mw_parse_pid(const char *s, pid_t *pid)
{
	unsigned long long v = 0;

	if (!*s || strlen(s) > 10)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v < 1 || v > INT_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static void add(struct mw_pidlist *l, pid_t pid)
{
	XGROW(l->pids, l->n, l->cap);
	l->pids[l->n++] = pid;
}

struct pid_at {
	pid_t pid;
	size_t i;
};

static int cmp_pid_at(const void *a, const void *b)
{
	const struct pid_at *x = a, *y = b;

	return x->pid != y->pid ? (x->pid > y->pid) - (x->pid < y->pid) : (x->i > y->i) - (x->i < y->i);
}

/* Keep the first of each pid in l, in l's order (n log n, for long lists). */
static void drop_repeats(struct mw_pidlist *l)
{
	struct pid_at *v = xcalloc(l->n, sizeof(*v));
	char *drop = xcalloc(l->n, 1);
	size_t out = 0;

	for (size_t i = 0; i < l->n; i++)
		v[i] = (struct pid_at){ .pid = l->pids[i], .i = i };
	qsort(v, l->n, sizeof(*v), cmp_pid_at);
	for (size_t k = 1; k < l->n; k++)
		if (v[k].pid == v[k - 1].pid)
			drop[v[k].i] = 1;
	for (size_t i = 0; i < l->n; i++)
		if (!drop[i])
			l->pids[out++] = l->pids[i];
	l->n = out;
	free(v);
	free(drop);
}

int mw_pidlist_parse(struct mw_pidlist *l, const char *arg, char *err, size_t errlen)
{
	for (const char *p = arg;; p++) {
		size_t len = strcspn(p, ",");
		char one[16];
		pid_t pid;

		if (len >= sizeof(one) || (snprintf(one, sizeof(one), "%.*s", (int)len, p),
					   mw_parse_pid(one, &pid) < 0)) {
			snprintf(err, errlen, "-p needs process ids separated by commas, not '%.*s'",
				 (int)(len > 32 ? 32 : len), p);
			return -1;
		}
		add(l, pid);
		p += len;
		if (!*p)
			break;
	}
	drop_repeats(l);
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Sort l->pids[from..] and drop repeated pids. */
static void sort_unique(struct mw_pidlist *l, size_t from)
{
	size_t out = from;

	qsort(l->pids + from, l->n - from, sizeof(pid_t), cmp_pid);
	for (size_t i = from; i < l->n; i++)
		if (out == from || l->pids[out - 1] != l->pids[i])
			l->pids[out++] = l->pids[i];
	l->n = out;
}

/* The pids in dfd's cgroup.procs; -1 (errno set) when it cannot be read. */
static int read_procs(int dfd, struct mw_pidlist *l)
{
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char buf[8192], num[16];
	size_t have = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			pid_t pid;

			if (buf[i] != '\n') {
				if (have < sizeof(num) - 1)
					num[have++] = buf[i];
				continue;
			}
			num[have] = '\0';
			if (mw_parse_pid(num, &pid) == 0)
				add(l, pid);
			have = 0;
		}
	close(fd);
	return n < 0 ? -1 : 0;
}

/* dfd's procs and its children's, depth levels down; closes dfd. */
static void walk_cgroup(int dfd, struct mw_pidlist *l, int depth)
{
	DIR *d;
	struct dirent *e;

	read_procs(dfd, l);	/* a child removed meanwhile has none */
	if (depth >= MW_CGROUP_MAX_DEPTH || !(d = fdopendir(dfd))) {
		close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		int cfd;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		cfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd >= 0)
			walk_cgroup(cfd, l, depth + 1);
	}
	closedir(d);
}

int mw_pidlist_cgroup(struct mw_pidlist *l, const char *dir, char *err, size_t errlen)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t from = l->n;

	if (dfd < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (faccessat(dfd, "cgroup.procs", R_OK, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(err, errlen, "'%s' is not a cgroup directory (no cgroup.procs)", dir);
		close(dfd);
		return -1;
	}
	walk_cgroup(dfd, l, 0);
	sort_unique(l, from);
	return 0;
}

/* Is the file at the end of a maps line (no newline) a glibc? */
static int is_glibc_path(const char *path)
{
	const char *base = strrchr(path, '/');

	if (!base)
		return 0;
	base++;
	if (!strncmp(base, "libc.so.6", 9))
		return base[9] == '\0' || !strcmp(base + 9, " (deleted)");
	return !strncmp(base, "libc-2.", 7) && strstr(base, ".so") != NULL;
}

int mw_maps_glibc(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (!found && (n = getline(&line, &cap, f)) > 0) {
		char *p;

		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		p = strchr(line, '/');
		found = p && is_glibc_path(p);
	}
	if (!found && ferror(f))
		found = -1;	/* ESRCH mid-read: gone */
	free(line);
	fclose(f);
	return found;
}

int mw_pidlist_all_by(struct mw_pidlist *l, size_t *seen, size_t *unlisted, double deadline,
		      char *err, size_t errlen)
{
	DIR *d = opendir("/proc");	/* O_CLOEXEC: glibc's opendir */
	struct dirent *e;
	size_t from = l->n, looked = 0, late = 0;
	pid_t self = getpid();

	if (!d) {
		snprintf(err, errlen, "cannot list '/proc': %s", strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		pid_t pid;
		int r;

		if (mw_parse_pid(e->d_name, &pid) < 0 || pid == self)
			continue;
		if (late || (deadline && mw_now_s() >= deadline)) {
			late++;	/* past the deadline: counted, not looked at */
			continue;
		}
		looked++;
		errno = 0;
		r = mw_maps_glibc(pid);
		/* one we may not read may map a glibc: listed, to say so; so
		 * is one whose main thread has exited (pthread_exit), its
		 * maps empty while its other threads run: not hidden */
		if (r == 1 || (r < 0 && (errno == EACCES || errno == EPERM)) ||
		    (r == 0 && mw_proc_kind(pid) == MW_PROC_LEADER_GONE))
			add(l, pid);
	}
	closedir(d);
	sort_unique(l, from);
	if (seen)
		*seen = looked;
	if (unlisted)
		*unlisted = late;
	return 0;
}

int mw_pidlist_all(struct mw_pidlist *l, size_t *seen, char *err, size_t errlen)
{
	return mw_pidlist_all_by(l, seen, NULL, 0, err, errlen);
}

void mw_pidlist_free(struct mw_pidlist *l)
{
	free(l->pids);
	memset(l, 0, sizeof(*l));
}
