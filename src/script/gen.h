/* gen.h - generate the SystemTap script for one run.
 *
 * The script is built from the fixed sources under stp/ (embedded at build
 * time) and, for every memory_* probe present in the target's libc, a
 * handler that reports it the way probes.def says: streamed one line per
 * hit, or aggregated in script globals and printed by `probe end`.  What
 * the script prints is mallocwatch's line protocol, docs/protocol.md.
 *
 * Under the kernel runtime arguments are stap's own $argN.  Under
 * --runtime=bpf, where stap 4.8 cannot expand $argN on marks, the
 * generator turns each site's argument specs into register and memory
 * reads (stp/bpf.stp).  A probe with several sites whose specs differ
 * dispatches on the probe address's offset within its page, which the
 * load bias (a multiple of the page size) does not change.
 */
#ifndef MALLOCWATCH_GEN_H
#define MALLOCWATCH_GEN_H

#include <stdio.h>

#include "runtime.h"
#include "sdtnote.h"

struct mw_gen_opts {
	enum mw_runtime runtime;	/* MW_RT_KERNEL or MW_RT_BPF */
	const char *libc_path;		/* path put into process("...") */
	unsigned families;		/* bit per enum mw_family; 0 = all */
	const struct mw_elf *libm;	/* its slow-math probes; NULL = none */
	const char *libm_path;
	/* -p PID,PID,...: the processes traced (npids >= 2; each must map
	 * libc_path's file).  The handlers take hits of these pids only, and
	 * every record of a process goes out prefixed "@PID " (protocol.h,
	 * MW_REC_PROCESS); the aggregates are kept per process.  npids 0:
	 * one process, stap's target(), records unprefixed. */
	const int *pids;
	size_t npids;
	/* The set of processes changes while the tracer runs (-f, --cgroup):
	 * records are prefixed as with several processes, the set starts as
	 * pids (or stap's target() when npids is 0) and mallocwatch adds and
	 * removes pids in the map of MW_MAP_PIDS entries (pidset.h). */
	int dynamic;
	/* With dynamic: `mallocwatch serve` reads the aggregates while the
	 * tracer runs.  A procfs probe, MW_LIVE_FILE (protocol.h), prints
	 * those that later hits add to (live heaps' G, lock waits' A, sbrk's
	 * S records, prefixed) between MW_LINE_LIVE and MW_LINE_LIVE_END,
	 * without ending anything: each reading gives the totals so far. */
	int live;
	/* With dynamic: a session that serves one -c run after another
	 * (--linger, linger.h).  A procfs probe, MW_DRAIN_FILE
	 * (protocol.h), prints the aggregates of every process (prefixed),
	 * then empties every aggregate map and prints MW_LINE_END: the
	 * driver asks it once the run's process left the set, so the next
	 * run's aggregates start from nothing.  It turns nothing off. */
	int linger;
	/* --stacks under the kernel runtime: each hit of a stacked probe
	 * (mw_stacks_probe_stacked) also prints a Q record with
	 * ubacktrace() (docs/protocol.md); ignored for the bpf runtime,
	 * which has no ubacktrace() (stacks.h takes them beside it). */
	int stacks;
	/* Where to write the file offsets of the sites the script's probes
	 * take (each process("PATH").mark("NAME") takes every site of NAME
	 * in PATH's file, as stap expands it), a line "0xOFFSET PATH" each,
	 * all or none (a site in no loaded segment: nothing); NULL none.
	 * umulti-shim.so arms them while stapbpf loads its programs
	 * (MW_UMULTI_SITES, shim/umulti-shim.c); written or not, the script
	 * is the same. */
	FILE *sites_out;
};

/* The sites file's name beside the script (trace_run.c writes it for the
 * bpf runtime; tracer.c names it to the shim). */
#define MW_GEN_SITES_FILE "mallocwatch.sites"

struct mw_gen_stats {
	int probes;		/* probe handlers generated */
	int sites;		/* SDT sites they cover */
	int unknown;		/* memory_* probes not in probes.def, traced raw */
	int math_sites;		/* slow-math sites found in libm */
	int unavailable;	/* arguments that could not be read (reported 0) */
};

/* 1 when the tracer of a script made with opts is to be started without
 * stap's -x PID, so that target() is 0: a set of processes (npids >= 2
 * or dynamic) under the kernel runtime.  Under that runtime, -x makes
 * stap's task finder place the uprobes in PID and its descendants only
 * (SystemTap's runtime/linux/task_finder2.c skips every other thread
 * group while _stp_target is set): -p A,B's B, --cgroup's joiners,
 * serve's processes and --repeat's later runs would take no hits.  The
 * script's handlers then take the hits of its set alone (mw_pids),
 * which starts empty whatever opts->pids: every process, the -c program
 * and -p's included, joins it through MW_PIDS_FILE before it is released
 * or its reading at attach taken (tracer.c), and the script, so its
 * module, does not change with the pids.  The bpf runtime places its
 * uprobes in the file whatever -x says: 0 there. */
int mw_gen_untargeted(const struct mw_gen_opts *opts);

/* Write the script for the sites of libc (and opts->libm) to out.  Problems with single
 * arguments (unknown symbol, unsupported operand) are warned about and
 * that argument is reported as 0; the probe is still traced.  Returns 0,
 * or -1 with a reason in err when there is nothing to trace or out fails. */
int mw_gen_script(const struct mw_elf *libc, const struct mw_gen_opts *opts,
		  FILE *out, struct mw_gen_stats *stats, char *err, size_t errlen);

/* gen_drain.c: the statements that empty every aggregate map of a
 * script of several processes whose probes are of the modes in modes
 * (a bit per enum mw_mode), for the drain probe (opts->linger), to out.
 * stap forbids a delete in a foreach over the same map, and stapbpf
 * has no delete of a whole map: each map's keys are copied, at most
 * MW_DRAIN_CHUNK at a time (foreach ... limit), into the maps
 * mw_k1..mw_k6 (declared by mw_gen_drain_globals) and deleted one by
 * one, until none is left (MW_DRAIN_CHUNK: protocol.h). */
void mw_gen_drain_globals(FILE *out, unsigned modes);
void mw_gen_drain_clear(FILE *out, unsigned modes);

/* gen_drain.c: the statements that empty every aggregate of a script of
 * one process (its maps and the sbrk account's scalars), for the exec
 * probe (protocol.h, MW_EXEC_FILE), to out: under the kernel runtime a
 * delete of each whole map, under the bpf runtime as the drain does,
 * through mw_x1..mw_x5 (declared by mw_gen_exec_globals, multi 0).  And
 * the exec probe's of a script of a changing set: the entries of the
 * processes marked in mw_pids (value 2) only, through mw_x1..mw_x6
 * (multi 1), under either runtime. */
void mw_gen_exec_globals(FILE *out, unsigned modes, int multi);
void mw_gen_exec_clear_marked(FILE *out, unsigned modes);
void mw_gen_exec_clear(FILE *out, unsigned modes, int bpf);

#endif /* MALLOCWATCH_GEN_H */
