/* pidset.h - the set of processes a running tracer session takes hits
 * of, changed while it runs (-f's new processes, --cgroup's joiners).
 *
 * The script (gen.h, opts->dynamic) keeps the set in its global mw_pids,
 * a map of MW_MAP_PIDS entries keyed by pid.  Under the bpf runtime that
 * is a BPF hash map of stapbpf's (8-byte keys and values, the pid and 1);
 * it is found among the maps the tracer process holds
 * (/proc/TRACER/fdinfo's map_id, the kernel's bpf(2) map info through
 * libbpf) by its size, which no other map of the script has, and written
 * with bpf_map_update_elem/bpf_map_delete_elem.  Under the kernel
 * runtime the script's procfs write probe MW_PIDS_FILE takes "PID\n"
 * and "-PID\n".
 *
 * A pid is added before the process it names can run (-f: its parent's
 * fork stop), so none of its hits is missed, and removed once the process
 * has been reaped, so that a later process given the same pid is not
 * traced.
 */
#ifndef MALLOCWATCH_PIDSET_H
#define MALLOCWATCH_PIDSET_H

#include <stddef.h>
#include <sys/types.h>

#include "runtime.h"

struct mw_pidset;

/* The set of the session of tracer (the stapbpf process under bpf), whose
 * stap module name is module (runtime.h), once it printed its ready line
 * (its maps exist).  Under the kernel runtime, waits up to 10 s for the
 * module's session to run (its procfs file reads "1"): the module prints
 * that line from its begin probe, then makes its procfs files and starts
 * its task finder, and drops what is written before.  NULL with a
 * one-line reason in err: no such map (not a script with a changing
 * set), several, bpf(2) refused, or no running session in time. */
struct mw_pidset *mw_pidset_open(enum mw_runtime rt, pid_t tracer, const char *module,
				 char *err, size_t errlen);

/* Add pid (> 0) to the set / remove it.  0, or -1 with errno set (ENOSPC:
 * the map is full, MW_MAP_PIDS processes at once; ENOENT on removal: not
 * in the set). */
int mw_pidset_add(struct mw_pidset *s, pid_t pid);
int mw_pidset_del(struct mw_pidset *s, pid_t pid);

/* Mark pid, which is in the set, for the script's exec probe (protocol.h,
 * MW_EXEC_FILE: its value MW_PIDS_MARKED, which the probe sets back to 1).  0, or -1
 * with errno set (ENOENT: not in the set, bpf runtime). */
int mw_pidset_mark(struct mw_pidset *s, pid_t pid);

/* Close what mw_pidset_open opened; NULL is fine. */
void mw_pidset_close(struct mw_pidset *s);

#endif /* MALLOCWATCH_PIDSET_H */
