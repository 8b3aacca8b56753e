/* procstat.c - a process's /proc entries read whole: what it is (stat),
 * its command name (comm), its resident set (statm); see procmem.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procmem.h"

/* Task flags in a stat file's field 9 (include/linux/sched.h). */
#define PF_EXITING 0x00000004	/* in do_exit(), not yet a zombie */
#define PF_KTHREAD 0x00200000

/* A stat file (proc(5): /proc/PID/stat, /proc/PID/task/TID/stat) read
 * into buf as mw_read_small does: its fields after "PID (comm) ", the
 * state letter first; NULL when it cannot be read. */
static const char *stat_fields(const char *path, char *buf, size_t len)
{
	char *s;

	if (mw_read_small(path, 0, buf, len) < 0)
		return NULL;
	s = strrchr(buf, ')');
	return s && s[1] == ' ' ? s + 2 : NULL;
}

/* The flags (field 9: after state, ppid, pgrp, session, tty_nr, tpgid)
 * of fields from stat_fields: 1, or 0 when they are not there. */
static int stat_flags(const char *f, unsigned long *flags)
{
	return sscanf(f + 1, "%*d %*d %*d %*d %*d %lu", flags) == 1;
}

/* Does a thread of pid's other than its main thread run: neither a
 * zombie nor in its exit (PF_EXITING: an exit_group takes them all)?
 * 1 or 0. */
static int other_thread_runs(pid_t pid)
{
	char path[64], buf[1024], *end;
	const char *f;
	unsigned long flags;
	struct dirent *d;
	DIR *dir;
	int runs = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path)))
		return 0;
	while (!runs && (d = readdir(dir))) {
		long tid = strtol(d->d_name, &end, 10);

		if (*end || tid <= 0 || tid == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", (int)pid, tid);
		runs = (f = stat_fields(path, buf, sizeof(buf))) && f[0] != 'Z' && f[0] != 'X' &&
		       stat_flags(f, &flags) && !(flags & PF_EXITING);
	}
	closedir(dir);
	return runs;
}

int mw_proc_kind(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long flags;
	const char *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = stat_fields(path, buf, sizeof(buf))))
		return MW_PROC_EXITED;
	if (f[0] == 'Z' && other_thread_runs(pid))
		return MW_PROC_LEADER_GONE;	/* its main thread called pthread_exit */
	if (f[0] == 'Z' || f[0] == 'X')
		return MW_PROC_EXITED;
	if (!stat_flags(f, &flags))
		return MW_PROC_USER;
	if (flags & PF_KTHREAD)
		return MW_PROC_KTHREAD;
	if (flags & PF_EXITING)
		return MW_PROC_EXITING;
	return MW_PROC_USER;
}

void mw_proc_no_memory(pid_t pid, char *err, size_t errlen)
{
	int k = mw_proc_kind(pid);

	if (k == MW_PROC_EXITED)
		snprintf(err, errlen, "process %d has exited", (int)pid);
	else if (k == MW_PROC_EXITING)
		snprintf(err, errlen, "process %d is exiting: its address space is gone", (int)pid);
	else if (k == MW_PROC_KTHREAD)
		snprintf(err, errlen, "process %d is a kernel thread: it has no memory of its own",
			 (int)pid);
	else if (k == MW_PROC_LEADER_GONE)
		snprintf(err, errlen, "process %d's main thread has exited while its other threads "
			 "run: its memory is not read through them", (int)pid);
	else
		snprintf(err, errlen, "process %d has no memory mappings", (int)pid);
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

const char *mw_proc_stat_fields(pid_t pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return stat_fields(path, buf, len);
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

int mw_process_uid(pid_t pid, uid_t *uid)
{
	char path[64], buf[2048];
	const char *l;
	unsigned long u;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) < 0 || !(l = strstr(buf, "\nUid:\t")) ||
	    sscanf(l + 6, "%lu", &u) != 1 || u >= (unsigned long)(uid_t)-1)
		return -1;
	*uid = (uid_t)u;
	return 0;
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
