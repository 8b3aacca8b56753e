/* proclist.h - which processes a command is about: a list given on the
 * command line ("4242,4243"), every process in a cgroup directory and
 * its child cgroups (cgroup v1 or v2: each directory's cgroup.procs, one
 * pid a line), or every process on the host that maps a glibc
 * (/proc/PID/maps names a libc.so.6 or libc-2.N.so).  Nothing here
 * prints.
 */
#ifndef MALLOCWATCH_PROCLIST_H
#define MALLOCWATCH_PROCLIST_H

#include <stddef.h>
#include <sys/types.h>

#define MW_CGROUP_MAX_DEPTH 64	/* child cgroups followed at most this deep */

/* Parse a process id: decimal digits only, 1 to INT_MAX (Linux's
 * pid_max is at most 2^22).  0, or -1 for anything else ("abc", "-5",
 * "4294967297"); *pid is set only on success. */
int mw_parse_pid(const char *s, pid_t *pid);

/* A list of process ids; start it zeroed ({0}).  Owns pids. */
struct mw_pidlist {
	pid_t *pids;
	size_t n, cap;
};

/* Append the pids of arg, "PID[,PID...]" (decimal, 1..INT_MAX, no
 * spaces), to l, keeping l's order; a pid already in l is not added
 * again.  0, or -1 with a one-line reason in err ("-p needs process ids
 * separated by commas, not '4x'"); l then holds what came before the
 * bad one. */
int mw_pidlist_parse(struct mw_pidlist *l, const char *arg, char *err, size_t errlen);

/* Append every process of the cgroup directory dir (cgroup v1 or v2)
 * and of its child cgroups, MW_CGROUP_MAX_DEPTH levels at most, to l,
 * sorted, each once.  Child directories are opened without following
 * symbolic links; a child that vanishes meanwhile is skipped.  0, or -1
 * with a one-line reason in err ("'DIR' is not a cgroup directory (no
 * cgroup.procs)", "cannot open 'DIR': ..."). */
int mw_pidlist_cgroup(struct mw_pidlist *l, const char *dir, char *err, size_t errlen);

/* Append every process on the host (every /proc/PID we can see) that
 * maps a glibc, except mallocwatch itself, to l, in pid order; also
 * those whose maps we may not read (EACCES, EPERM: they may map one, and
 * the caller can say it could not read them).  Processes gone meanwhile
 * are left out; *seen (when not NULL) gets the number of processes
 * looked at.  0, or -1 with a reason in err when /proc cannot be
 * listed. */
int mw_pidlist_all(struct mw_pidlist *l, size_t *seen, char *err, size_t errlen);

/* mw_pidlist_all, looking at processes only until deadline (mw_now_s(),
 * clock.h; 0 none): those past it are counted in *unlisted (when not
 * NULL), not in *seen, and not listed (whether they map a glibc is not
 * known). */
int mw_pidlist_all_by(struct mw_pidlist *l, size_t *seen, size_t *unlisted, double deadline,
		      char *err, size_t errlen);

/* Does process pid map a glibc (a file named libc.so.6 or libc-2.N.so,
 * also "(deleted)")?  1 or 0; -1 with errno set when its maps cannot be
 * read (ENOENT: gone; EACCES: not permitted). */
int mw_maps_glibc(pid_t pid);

/* Release l's memory and zero it. */
void mw_pidlist_free(struct mw_pidlist *l);

#endif /* MALLOCWATCH_PROCLIST_H */
