/* pidset.c - add and remove pids in a running session's set; see
 * pidset.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "clock.h"
#include "pidset.h"
#include "procmem.h"
#include "protocol.h"

struct mw_pidset {
	enum mw_runtime rt;
	int map_fd;		/* bpf: the map of mw_pids */
	char path[PATH_MAX];	/* kernel: the procfs write file */
};

/* The id of the next bpf map among tracer's descriptors, reading on in
 * its /proc/TRACER/fdinfo directory d; 0 at the end. */
static uint32_t next_map_id(DIR *d, pid_t tracer)
{
	struct dirent *e;
	char path[96], buf[1024], *m;
	unsigned long id;

	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%.20s", (int)tracer, e->d_name);
		if (mw_read_small(path, 0, buf, sizeof(buf)) <= 0)
			continue;
		if (!(m = strstr(buf, "\nmap_id:")))
			continue;
		id = strtoul(m + 8, NULL, 10);
		if (id && id <= UINT32_MAX)
			return (uint32_t)id;
	}
	return 0;
}

/* bpf: the one map of tracer's with mw_pids's shape, opened; -1 with err. */
static int find_map(pid_t tracer, char *err, size_t errlen)
{
	char dir[64];
	DIR *d;
	uint32_t id, found_id = 0;
	int found = -1, n = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)tracer);
	if (!(d = opendir(dir))) {
		snprintf(err, errlen, "cannot read '%s': %s", dir, strerror(errno));
		return -1;
	}
	while ((id = next_map_id(d, tracer))) {
		struct bpf_map_info info;
		uint32_t len = sizeof(info);
		int fd;

		if (id == found_id)	/* the same map on two fds */
			continue;
		if ((fd = bpf_map_get_fd_by_id(id)) < 0)
			continue;	/* gone meanwhile */
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
		    info.max_entries == MW_MAP_PIDS && info.key_size == 8 &&
		    info.value_size == 8) {
			n++;
			if (found >= 0)
				close(found);
			found = fd;
			found_id = id;
			continue;
		}
		close(fd);
	}
	closedir(d);
	if (n == 1)
		return found;
	if (found >= 0)
		close(found);
	snprintf(err, errlen, "the tracer (pid %d) has %s map of %d entries for its set of "
		 "processes", (int)tracer, n ? "more than one" : "no", MW_MAP_PIDS);
	return -1;
}

/* how long the kernel runtime's session may take to run after the ready
 * line: milliseconds on hardware, seconds in make check-vm's emulated
 * guest */
#define MW_PIDSET_WAIT_MS 10000

/* The kernel runtime's module runs its begin probe (the ready line), then
 * makes its procfs files, starts its task finder, and only then runs
 * other handlers (systemtap_module_init in stap -p3's C: a handler
 * returns at once while the session is STARTING): a pid written before
 * that is dropped.  The script's read probe of the file (gen_end.c)
 * answers "1" once handlers run; wait for it, as the program waits,
 * held.  0, or -1 with err. */
static int wait_running(const char *path, char *err, size_t errlen)
{
	long long until = mw_now_ms() + MW_PIDSET_WAIT_MS;

	for (;;) {
		char buf[8] = { 0 };
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		int e = errno;

		if (fd >= 0)
			close(fd);
		if (n > 0 && strcmp(buf, "1\n") == 0)
			return 0;
		if ((fd < 0 && e != ENOENT) || mw_now_ms() >= until) {
			snprintf(err, errlen, "the tracer's '%s' %s", path, fd < 0 ?
				 strerror(e) : "did not answer: its session is not running");
			return -1;
		}
		usleep(2000);
	}
}

struct mw_pidset *mw_pidset_open(enum mw_runtime rt, pid_t tracer, const char *module,
				 char *err, size_t errlen)
{
	struct mw_pidset *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->rt = rt;
	s->map_fd = -1;
	if (rt == MW_RT_BPF) {
		if ((s->map_fd = find_map(tracer, err, errlen)) < 0) {
			free(s);
			return NULL;
		}
		return s;
	}
	if (mw_runtime_procfs_path(rt, module, MW_PIDS_FILE, s->path, sizeof(s->path)) < 0) {
		snprintf(err, errlen, "no procfs file for the set of processes");
		free(s);
		return NULL;
	}
	if (wait_running(s->path, err, errlen) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* kernel: "PID\n" or "-PID\n" into the script's procfs file. */
static int write_pid(struct mw_pidset *s, long v)
{
	char line[32];
	int fd = open(s->path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int len = snprintf(line, sizeof(line), "%ld\n", v), ret = 0;

	if (fd < 0)
		return -1;
	if (write(fd, line, (size_t)len) != len)
		ret = -1;
	close(fd);
	return ret;
}

/* pid's value in the set: under bpf v written with flags, under the
 * kernel runtime the line "line\n" (the probe's encoding of the same). */
static int put(struct mw_pidset *s, pid_t pid, uint64_t v, uint64_t flags, long line)
{
	uint64_t key = (uint64_t)pid;

	if (pid <= 0) {
		errno = EINVAL;
		return -1;
	}
	if (s->rt != MW_RT_BPF)
		return write_pid(s, line);
	return bpf_map_update_elem(s->map_fd, &key, &v, flags) < 0 ? -1 : 0;
}

int mw_pidset_add(struct mw_pidset *s, pid_t pid)
{
	return put(s, pid, 1, BPF_ANY, pid);
}

int mw_pidset_mark(struct mw_pidset *s, pid_t pid)
{
	return put(s, pid, MW_PIDS_MARKED, BPF_EXIST, (long)(pid + MW_PIDS_MARK));
}

int mw_pidset_del(struct mw_pidset *s, pid_t pid)
{
	uint64_t key = (uint64_t)pid;

	if (pid <= 0) {
		errno = EINVAL;
		return -1;
	}
	if (s->rt != MW_RT_BPF)
		return write_pid(s, -(long)pid);
	return bpf_map_delete_elem(s->map_fd, &key) < 0 ? -1 : 0;
}

void mw_pidset_close(struct mw_pidset *s)
{
	if (!s)
		return;
	if (s->map_fd >= 0)
		close(s->map_fd);
	free(s);
}
