/* stacks.h - user call stacks of the rare allocator events (--stacks).
 *
 * stapbpf has no ubacktrace(), so the stacks come from beside the
 * tracer: for each rare probe site of the traced libc (arena_new,
 * arena_reuse*, heap_new, heap_free, sbrk_more, the threshold change,
 * mallopt*, the retries, tcache_double_free) a perf event of the
 * kernel's "uprobe" PMU (/sys/bus/event_source/devices/uprobe/type;
 * config1 the file's path, config2 the site's file offset) is opened on
 * every CPU, with PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER (16
 * KiB of stack).  The events are system-wide (pid -1): on this machine's
 * kernel a per-task uprobe event opened on more than one CPU gave no
 * samples at all, and a per-task event on every CPU cannot be mmapped
 * with inherit (threads made later); so samples are kept only from the
 * processes watched: mallocwatch's own descendants (-c, -c -f) and the
 * pids given (-p).  The uprobes coexist with the tracer's on the same
 * sites (both are consumers of one uprobe).
 *
 * A reader thread, woken every 16 samples or 50 ms, drains the per-CPU
 * ring buffers (perf_event_open(2), "MMAP layout") and takes their
 * records in time order.  Each watched process's module map comes from
 * the side-band records of the rings' first events (MMAP2 with build-ids
 * and COMM of execs: stacks_live.c) from its exec on, else from its
 * /proc/PID/maps (a process running before the events: read again when a
 * stack runs into an address no module holds); each map is an image, one
 * per program the process runs.  Each sample is unwound at once with
 * libdwfl (unwind.h) in the image it ran in and only its program
 * counters are kept, not the stack copy.  Symbols are looked up when a
 * report asks.
 */
#ifndef MALLOCWATCH_STACKS_H
#define MALLOCWATCH_STACKS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind.h"

/* One probe hit with its stack. */
struct mw_stack_event {
	int probe;			/* enum mw_probe_id */
	pid_t pid, tid;
	uint64_t time_ns;		/* CLOCK_MONOTONIC */
	int64_t args[3];		/* the probe's first arguments, read from
					 * the sampled registers and stack */
	unsigned args_known;		/* bit i: args[i] could be read (a
					 * register, a constant or a stack slot;
					 * not other memory) */
	int image;			/* the module map of its process it was
					 * unwound with (an index); -1 none */
	int npcs;			/* 0..MW_MAX_FRAMES */
	uint64_t pcs[MW_MAX_FRAMES];	/* innermost first: the probe site */
};

struct mw_stacks_stats {
	unsigned long sites;		/* probe sites with an event */
	unsigned long cpus;		/* CPUs with events */
	unsigned long samples;		/* kept */
	unsigned long foreign;		/* of processes not watched, dropped */
	unsigned long lost;		/* PERF_RECORD_LOST: the rings were full */
	unsigned long unwound;		/* samples with more than one frame */
	unsigned long stale;		/* read after their process left the
					 * image they ran in (an exec): unwound
					 * in the libc alone, placed where the
					 * probe site says */
	double unwind_us;		/* mean time to unwind one, microseconds */
	unsigned long heap_period;	/* memory_heap_more: 1 in this many hits
					 * per CPU sampled (0: not stacked) */
};

struct mw_stacks;	/* opaque */

/* Is probe id (enum mw_probe_id) one of the rare probes stacked?  1 or 0. */
int mw_stacks_probe_stacked(int id);

/* memory_heap_more is hot (every growth of a non-main heap): its event
 * has a perf sample_period, so the kernel samples 1 in this many hits
 * per CPU and only counts the others.  MW_STACKS_HEAP_PERIOD in the
 * environment (0 to 1000000; 0: heap_more not stacked) overrides the
 * default, MW_STACKS_HEAP_PERIOD_DEFAULT (bench/stacks.sh). */
#define MW_STACKS_HEAP_PERIOD_DEFAULT 64

/* Open the events on the rare probes of the libc file at libc_path (a
 * path valid in mallocwatch's mount namespace, to the inode the traced
 * processes map) and start the reader.  Returns NULL with a one-line
 * reason in err: no uprobe PMU, perf_event_open(2) refused (not root), no
 * rare probe site in the file. */
struct mw_stacks *mw_stacks_start(const char *libc_path, char *err, size_t errlen);

/* --stacks under the kernel runtime: no perf events; the stacks come
 * from the script's Q records (ubacktrace(), docs/protocol.md), given to
 * mw_stacks_script_line.  libc_path as for mw_stacks_start.  Never NULL. */
struct mw_stacks *mw_stacks_new_script(const char *libc_path);

/* One Q record of the script ("Q ID PID TID NS A1 A2 A3 0xPC ..."): the
 * event kept with its program counters, placed in its process's module
 * map (read from /proc when none holds its first address).  0, or -1 when
 * the line is garbled (nothing kept).  Never run against a real tracer:
 * the kernel runtime cannot load here. */
int mw_stacks_script_line(struct mw_stacks *s, const char *line);

/* Keep the samples of pid too (besides mallocwatch's descendants); its
 * module map is read now from /proc/PID/maps (a process that exits
 * before its samples are drained is still unwound in it). */
void mw_stacks_watch(struct mw_stacks *s, pid_t pid);

/* Drain the rings now, from the calling thread: call it while a traced
 * process still exists (its exit stop), so its last samples find its
 * maps. */
void mw_stacks_sync(struct mw_stacks *s);

/* Stop the reader, close the events, drain what is left. */
void mw_stacks_stop(struct mw_stacks *s);

/* After the stop: drop the events of every process but pid (-c without
 * -f: mallocwatch's other children, short-lived helpers that run under
 * the same libc, are descendants too), counted as foreign. */
void mw_stacks_only(struct mw_stacks *s, pid_t pid);

/* The same for a run of several processes (-f, -p A,B): keep the events
 * of the n processes of pids. */
void mw_stacks_only_set(struct mw_stacks *s, const pid_t *pids, size_t n);

/* The events kept, in the order read (per CPU in time order). */
size_t mw_stacks_count(const struct mw_stacks *s);
const struct mw_stack_event *mw_stacks_event(const struct mw_stacks *s, size_t i);

/* Symbolize frame i of e into f (libdwfl, the module map of e's process
 * as last read). */
void mw_stacks_frame(struct mw_stacks *s, const struct mw_stack_event *e, int i,
		     struct mw_frame *f);

void mw_stacks_get_stats(const struct mw_stacks *s, struct mw_stacks_stats *st);

/* The same, samples, unwound and stale counted over process pid's events
 * alone (0: every process's, as mw_stacks_get_stats); the rest are the
 * run's. */
void mw_stacks_get_stats_of(struct mw_stacks *s, pid_t pid, struct mw_stacks_stats *st);

/* Write the stacks as records of a saved stream (stacks_save.c, docs/
 * protocol.md "Stacks"): the module maps the events were unwound with
 * (L), the events with their raw program counters (X), the counts (Z).
 * Call it after mw_stacks_stop.  0, or -1 on a write error. */
int mw_stacks_save(struct mw_stacks *s, FILE *f);

/* Is line one of those records (its letter and a space)?  1 or 0. */
int mw_stacks_record(const char *line);

/* One such record of a saved stream into *sp (made at the first: a set
 * of stacks with no events open, symbolized from the files the L records
 * name when they are there with the recorded build-id, or from files of
 * the same base name beside libc, the path of the libc traced (NULL
 * none); else from the map alone).  0, or -1 when the line is garbled
 * (nothing kept). */
int mw_stacks_load_line(struct mw_stacks **sp, const char *line, const char *libc);

/* Free everything (stops first if needed).  NULL allowed. */
void mw_stacks_free(struct mw_stacks *s);

#endif /* MALLOCWATCH_STACKS_H */
