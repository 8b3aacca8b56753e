/* procmem.c - checked reads of another process's memory; see procmem.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "procmem.h"
#include "xalloc.h"

int mw_proc_kind(pid_t pid)
{
	char path[64], buf[1024], *rp;
	unsigned long flags = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return MW_PROC_EXITED;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the command's ")": state (field 3), then ppid, pgrp,
	 * session, tty_nr, tpgid, flags (field 9) */
	rp = strrchr(buf, ')');
	if (!rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X')
		return MW_PROC_EXITED;
	if (sscanf(rp + 3, "%*d %*d %*d %*d %*d %lu", &flags) == 1 && (flags & 0x00200000))
		return MW_PROC_KTHREAD;	/* PF_KTHREAD (include/linux/sched.h) */
	return MW_PROC_USER;
}

void mw_proc_no_memory(pid_t pid, char *err, size_t errlen)
{
	int k = mw_proc_kind(pid);

	if (k == MW_PROC_EXITED)
		snprintf(err, errlen, "process %d has exited", (int)pid);
	else if (k == MW_PROC_KTHREAD)
		snprintf(err, errlen, "process %d is a kernel thread: it has no memory of its own",
			 (int)pid);
	else
		snprintf(err, errlen, "process %d has no memory mappings", (int)pid);
}

int mw_proc_refresh(struct mw_proc *p, char *err, size_t errlen)
{
	char path[64], line[4096 + 256];
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	if (!(f = fopen(path, "re"))) {
		if (errno == ENOENT)
			snprintf(err, errlen, "no process %d", (int)p->pid);
		else
			snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	mw_proc_copy_drop(p);	/* copied under the old mappings */
	p->nmaps = 0;
	p->hint = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, inode = 0;
		char perms[8];

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %" SCNu64, &start, &end, perms,
			   &inode) < 3 || end <= start)
			continue;
		if (p->nmaps == cap)
			xgrow((void **)&p->maps, p->nmaps, &cap, sizeof(*p->maps));
		p->maps[p->nmaps++] = (struct mw_map){ .start = start, .end = end,
						       .readable = perms[0] == 'r',
						       .exec = perms[2] == 'x', .inode = inode };
	}
	fclose(f);
	if (!p->nmaps) {	/* a zombie or a kernel thread has none */
		mw_proc_no_memory(p->pid, err, errlen);
		return -1;
	}
	return 0;
}

int mw_proc_open(struct mw_proc *p, pid_t pid, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->memfd = -1;
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		snprintf(err, errlen, "no process %d", (int)pid);
		return -1;
	}
	return mw_proc_refresh(p, err, errlen);
}

/* Is [addr, addr+len) inside readable mappings, from mapping i on? */
static int mapped_from(const struct mw_proc *p, size_t i, uint64_t addr, uint64_t len)
{
	for (; i < p->nmaps; i++) {	/* the range may span adjacent mappings */
		const struct mw_map *m = &p->maps[i];

		if (addr < m->start || addr >= m->end || !m->readable)
			return 0;
		if (addr + len <= m->end)
			return 1;
		len -= m->end - addr;
		addr = m->end;
	}
	return 0;
}

ssize_t mw_proc_map_index(const struct mw_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps, h = p->hint;

	if (h < p->nmaps && addr >= p->maps[h].start && addr < p->maps[h].end)
		return (ssize_t)h;
	while (lo < hi) {	/* the last mapping starting at or below addr */
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= p->maps[lo - 1].end)
		return -1;
	((struct mw_proc *)p)->hint = lo - 1;	/* a cache, not the state */
	return (ssize_t)(lo - 1);
}

int mw_proc_mapped(const struct mw_proc *p, uint64_t addr, uint64_t len)
{
	ssize_t i;

	if (!len || addr + len < addr || (i = mw_proc_map_index(p, addr)) < 0)
		return 0;
	return mapped_from(p, (size_t)i, addr, len);
}

ssize_t mw_proc_raw(struct mw_proc *p, uint64_t addr, void *buf, size_t len)
{
	if (!p->use_mem) {
		struct iovec local = { .iov_base = buf, .iov_len = len };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
		ssize_t n = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);

		if (n >= 0 || (errno != ENOSYS && errno != EPERM))
			return n;
		p->use_mem = 1;	/* e.g. seccomp or an old kernel: try /proc */
	}
	if (p->memfd < 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/mem", (int)p->pid);
		if ((p->memfd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return -1;
	}
	return pread(p->memfd, buf, len, (off_t)addr);
}

int mw_proc_read(struct mw_proc *p, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	if (p->copy && p->copying) {
		int r = mw_proc_copy_read(p, addr, buf, len);

		if (r <= 0)
			return r;	/* served, or the process is gone */
	}
	if (!mw_proc_mapped(p, addr, len)) {
		errno = EFAULT;
		return -1;
	}
	if ((n = mw_proc_raw(p, addr, buf, len)) == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = EFAULT;	/* a part only: unmapped meanwhile */
	return -1;
}

int mw_proc_word(struct mw_proc *p, uint64_t addr, uint64_t *v)
{
	return mw_proc_read(p, addr, v, sizeof(*v));
}

void mw_proc_close(struct mw_proc *p)
{
	mw_proc_copy_free(p);
	if (p->memfd >= 0)
		close(p->memfd);
	free(p->maps);
	memset(p, 0, sizeof(*p));
	p->memfd = -1;
}

ssize_t mw_read_small(const char *path, int flags, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

ssize_t mw_proc_stat(pid_t pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return mw_read_small(path, 0, buf, len);
}

const char *mw_proc_stat_fields(pid_t pid, char *buf, size_t len)
{
	char *s;

	if (mw_proc_stat(pid, buf, len) < 0)
		return NULL;
	s = strrchr(buf, ')');	/* after "PID (comm)" */
	return s && s[1] == ' ' ? s + 2 : NULL;
}

/* The state letter in /proc/PID/stat ('R', 'S', 'Z', ...), 0 when gone. */
static char state_of(pid_t pid)
{
	char buf[512];
	const char *f = mw_proc_stat_fields(pid, buf, sizeof(buf));

	return f ? f[0] : 0;
}

int mw_process_alive(pid_t pid)
{
	char st;

	if (pid <= 0)
		return 0;
	st = state_of(pid);
	return st ? st != 'Z' && st != 'X' : kill(pid, 0) == 0 || errno == EPERM;
}

void mw_process_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	mw_read_small(path, 0, buf, len);
	buf[strcspn(buf, "\n")] = '\0';
}

uint64_t mw_process_rss(pid_t pid)
{
	char path[64], buf[256];
	unsigned long long size, resident;
	long page = sysconf(_SC_PAGESIZE);

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) < 0 || page <= 0 ||
	    sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return 0;
	return (uint64_t)resident * (uint64_t)page;
}
