/* procwhere.h - where a process lives: its pid and mount namespaces, its
 * pid inside its own pid namespace, its cgroup.
 *
 * Read from /proc only (proc(5)), never by entering a namespace:
 *
 *	/proc/PID/ns/pid, /proc/PID/ns/mnt	stat(2): st_ino is the
 *						namespace's inode, as
 *						`readlink` shows "pid:[4026531836]"
 *	/proc/PID/status	"NSpid:\t8123\t7" (outermost first; the
 *				last is the pid inside its own namespace)
 *	/proc/PID/cgroup	"0::/system.slice/docker-3f2a...e1.scope"
 *				(cgroup v2), "4:memory:/docker/3f2a...e1"
 *				(v1: hierarchy id, controllers, path)
 *
 * Everything in them belongs to the process (a cgroup path is named by
 * whoever made the cgroup, which may be the process itself): print it
 * quoted (msg.h mw_quote, jsonout.h mw_json_str).  Usable by every
 * command; nothing here prints.
 */
#ifndef MALLOCWATCH_PROCWHERE_H
#define MALLOCWATCH_PROCWHERE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MW_WHERE_MAX_NSPID 32	/* the kernel's nesting limit is 32 levels */

struct mw_where {
	pid_t pid;			/* as we see it */
	/* namespace inodes (st_ino of /proc/PID/ns/...), 0 when unknown */
	uint64_t pid_ns, mnt_ns;
	/* 1: the process's namespace is not ours; 0: it is; -1 unknown */
	int pid_ns_other, mnt_ns_other;
	/* NSpid: pids from ours (nspid[0] == pid) to its own namespace's
	 * (nspid[nnspid - 1]); nnspid 0 when the line was not there */
	pid_t nspid[MW_WHERE_MAX_NSPID];
	int nnspid;
	/* the cgroup: of the lines whose path is not "/" (if any is), the
	 * v2 one ("0::"), else name=systemd's, else the first v1 one listed;
	 * "" when /proc/PID/cgroup could not be read.  cgroup_from says which
	 * line: "v2", or the v1 controllers ("name=systemd", "memory") */
	char cgroup[PATH_MAX];
	char cgroup_from[64];
	/* a container guessed from the cgroup path ("docker:3f2a1b9c0d4e",
	 * "podman:...", "containerd:...", "crio:...", "lxc:web",
	 * "kubepods"), "" when none is recognised.  A guess: a cgroup's
	 * name is chosen by whoever made it */
	char container[80];
};

/* Fill w for pid.  0, also when only some of it could be read (what
 * could not be read is left unknown: 0, -1 or ""); -1 with a one-line
 * reason in err ("no process 42") when the process is gone. */
int mw_proc_where(pid_t pid, struct mw_where *w, char *err, size_t errlen);

/* The pid inside the process's own pid namespace (the last NSpid
 * entry), or 0 when NSpid was not read. */
pid_t mw_where_inner_pid(const struct mw_where *w);

/* Parse the text of a /proc/PID/cgroup file into w's cgroup,
 * cgroup_from and container (as mw_proc_where does); text is not
 * changed.  For tests and for callers that read the file themselves. */
void mw_where_parse_cgroup(const char *text, struct mw_where *w);

#endif /* MALLOCWATCH_PROCWHERE_H */
