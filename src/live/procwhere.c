/* procwhere.c - a process's namespaces, NSpid and cgroup, from /proc
 * (procwhere.h).  A real /proc/PID/cgroup on a host with cgroup v1
 * hierarchies and v2 at /sys/fs/cgroup/unified:
 *
 *	9:name=systemd:/system.slice/docker-3f2a1b9c0d4e5f60.scope
 *	4:memory:/system.slice/docker-3f2a1b9c0d4e5f60.scope
 *	1:cpu:/
 *	0::/system.slice/docker-3f2a1b9c0d4e5f60.scope
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "procmem.h"
#include "procwhere.h"

/* Container runtimes' cgroup names: PREFIX<hex id>[.scope]. */
static const struct {
	const char *prefix, *label;
} scope_names[] = {
	{ "docker-", "docker" },
	{ "libpod-", "podman" },
	{ "cri-containerd-", "containerd" },
	{ "crio-", "crio" },
};

/* A parent directory named so, then the container's id or name. */
static const struct {
	const char *parent, *label;
} parent_names[] = {
	{ "docker", "docker" },
	{ "lxc", "lxc" },
	{ "libpod_parent", "podman" },
};

static int is_hex_id(const char *s, size_t len)
{
	if (len < 12)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* label:ID (hex ids cut to 12 characters, as `docker ps` shows them) */
static void set_container(struct mw_where *w, const char *label, const char *id, size_t len)
{
	if (is_hex_id(id, len) && len > 12)
		len = 12;
	snprintf(w->container, sizeof(w->container), "%s:%.*s", label, (int)len, id);
}

/* One path component c (len bytes, not terminated) after parent (plen). */
static int guess_component(struct mw_where *w, const char *parent, size_t plen, const char *c,
			   size_t len)
{
	size_t n = len;

	if (n > 6 && !memcmp(c + n - 6, ".scope", 6))
		n -= 6;
	for (size_t i = 0; i < sizeof(scope_names) / sizeof(scope_names[0]); i++) {
		size_t pl = strlen(scope_names[i].prefix);

		if (n > pl && !memcmp(c, scope_names[i].prefix, pl) && is_hex_id(c + pl, n - pl)) {
			set_container(w, scope_names[i].label, c + pl, n - pl);
			return 1;
		}
	}
	if (len > 12 && !memcmp(c, "lxc.payload.", 12)) {
		set_container(w, "lxc", c + 12, len - 12);
		return 1;
	}
	for (size_t i = 0; parent && i < sizeof(parent_names) / sizeof(parent_names[0]); i++)
		if (plen == strlen(parent_names[i].parent) &&
		    !memcmp(parent, parent_names[i].parent, plen)) {
			set_container(w, parent_names[i].label, c, len);
			return 1;
		}
	return 0;
}

static void guess_container(struct mw_where *w)
{
	const char *p = w->cgroup, *parent = NULL;
	size_t plen = 0;
	int kube = 0;

	w->container[0] = '\0';
	while (*p) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		if (!len)
			break;
		if (len >= 8 && !memcmp(p, "kubepods", 8))
			kube = 1;
		if (guess_component(w, parent, plen, p, len))
			return;
		parent = p;
		plen = len;
		p += len;
	}
	if (kube)
		snprintf(w->container, sizeof(w->container), "kubepods");
}

/* Copy the path of one "ID:CONTROLLERS:PATH" line (len bytes). */
static void take_line(struct mw_where *w, const char *ctl, size_t clen, const char *path,
		      size_t plen)
{
	snprintf(w->cgroup, sizeof(w->cgroup), "%.*s", (int)plen, path);
	snprintf(w->cgroup_from, sizeof(w->cgroup_from), "%.*s", (int)clen, ctl);
}

/* How telling a line is: a path other than "/" first, and among those
 * v2, then name=systemd, then the first v1 hierarchy listed. */
static int line_rank(const char *ctl, size_t clen, const char *path, size_t plen)
{
	int root = plen == 1 && path[0] == '/';

	if (clen == 0)
		return root ? 2 : 5;
	if (clen == 12 && !memcmp(ctl, "name=systemd", 12))
		return root ? 1 : 4;
	return root ? 1 : 3;
}

void mw_where_parse_cgroup(const char *text, struct mw_where *w)
{
	int rank = 0;	/* of what w->cgroup holds */

	w->cgroup[0] = w->cgroup_from[0] = '\0';
	for (const char *l = text; *l;) {
		size_t len = strcspn(l, "\n");
		const char *c1 = memchr(l, ':', len), *c2;

		c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - l)) : NULL;
		if (c2) {
			const char *path = c2 + 1;
			size_t plen = len - (size_t)(path - l), clen = (size_t)(c2 - c1 - 1);
			int r = line_rank(c1 + 1, clen, path, plen);

			if (r > rank) {
				take_line(w, clen ? c1 + 1 : "v2", clen ? clen : 2, path, plen);
				rank = r;
			}
		}
		l += len + (l[len] == '\n');
	}
	guess_container(w);
}

/* The inode of /proc/PID/ns/NAME, 0 when it cannot be seen. */
static uint64_t ns_inode(const char *pid, const char *name)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/%s", pid, name);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static void read_ns(pid_t pid, struct mw_where *w)
{
	char p[24];
	uint64_t my_pid = ns_inode("self", "pid"), my_mnt = ns_inode("self", "mnt");

	snprintf(p, sizeof(p), "%d", (int)pid);
	w->pid_ns = ns_inode(p, "pid");
	w->mnt_ns = ns_inode(p, "mnt");
	w->pid_ns_other = w->pid_ns && my_pid ? w->pid_ns != my_pid : -1;
	w->mnt_ns_other = w->mnt_ns && my_mnt ? w->mnt_ns != my_mnt : -1;
}

/* "NSpid:\t8123\t7\n" out of /proc/PID/status; -1 when the process is gone. */
static int read_nspid(pid_t pid, struct mw_where *w)
{
	char path[64], buf[8192], *l, *end;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) < 0)
		return -1;
	l = strstr(buf, "\nNSpid:");
	if (!l)
		return 0;
	l += 7;
	while (w->nnspid < MW_WHERE_MAX_NSPID) {
		long v;

		errno = 0;
		v = strtol(l, &end, 10);
		if (end == l || errno || v <= 0 || v > INT32_MAX)
			break;
		w->nspid[w->nnspid++] = (pid_t)v;
		l = end;
		if (*l == '\n')
			break;
	}
	return 0;
}

int mw_proc_where(pid_t pid, struct mw_where *w, char *err, size_t errlen)
{
	char path[64], buf[16384];

	memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->pid_ns_other = w->mnt_ns_other = -1;
	if (read_nspid(pid, w) < 0) {
		snprintf(err, errlen, "no process %d", (int)pid);
		return -1;
	}
	read_ns(pid, w);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) >= 0)
		mw_where_parse_cgroup(buf, w);
	return 0;
}

pid_t mw_where_inner_pid(const struct mw_where *w)
{
	return w->nnspid ? w->nspid[w->nnspid - 1] : 0;
}
