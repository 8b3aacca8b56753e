/* protocol.h - mallocwatch's line protocol, version 1: the one place its
 * words are spelled (docs/protocol.md describes it).
 *
 * The generated script (gen.c) prints these records, the tracer driver
 * (tracer.c) waits for the ready line, the parser (stream.c) reads them,
 * and a saved stream (--save-stream) frames them with "# KEY VALUE"
 * metadata lines that `replay` reads back:
 *
 *	# mallocwatch-stream 1
 *	# libc /var/cache/mallocwatch/glibc/lib/libc.so.6
 *	P 0 memory_arena_new 2
 *	MW 1 ready
 *	E 0 10986 32751:-939524048 0:640
 *	MW 1 end
 *	# pid 10986
 */
#ifndef MALLOCWATCH_PROTOCOL_H
#define MALLOCWATCH_PROTOCOL_H

#define MW_PROTOCOL_VERSION 1

/* Handshake lines: begin probe done (every uprobe attached), end probe done. */
#define MW_LINE_READY "MW 1 ready"
#define MW_LINE_END "MW 1 end"

/* "MW 1 skipped N", kernel runtime only, printed with the aggregates
 * just before MW_LINE_END: the probe hits stap's runtime skipped so far
 * (a handler that could not take a global's lock in MAXTRYLOCK tries, a
 * reentrant or low-stack hit; stap's skipped_count(), which stap itself
 * reports only when the module unloads, after the report).  The tracer
 * counts them as lost (tracer_read.c), as it counts stapbpf's "lost N". */
#define MW_LINE_SKIPPED "MW 1 skipped"

/* The script's procfs probe that prints the aggregates and MW_LINE_END
 * before the tracer detaches (gen.c): under the bpf runtime a FIFO,
 * MW_STAPBPF_TMP/systemtap-USER/MODULE/flush (stapbpf: runtime.h), under the kernel
 * runtime /proc/systemtap/MODULE/flush; reading it runs the probe. */
#define MW_FLUSH_FILE "flush"

/* The kernel runtime's procfs file that takes "PID\n" (add) or "-PID\n"
 * (remove) for the script's set of processes (gen.h, MW_MAP_PIDS), and
 * reads "1\n" once the module's session runs (pidset.c); the bpf
 * runtime's map is updated directly (pidset.h). */
#define MW_PIDS_FILE "pids"
/* "PID + MW_PIDS_MARK\n" into it marks PID (value MW_PIDS_MARKED in the
 * map, where a member's is 1; the bpf runtime's written directly) for the
 * exec probe below */
#define MW_PIDS_MARK 4294967296LL
#define MW_PIDS_MARKED 2
/* --linger (gen.h opts->linger): reading it prints the aggregates of
 * every process, empties them and prints MW_LINE_END; the tracer goes on
 * for the next run. */
#define MW_DRAIN_FILE "drain"
/* -c, and -f's processes: a process replaced the program it started
 * (execve(2) after its first: the program's from mallocwatch, a forked
 * process's own start), and mallocwatch holds
 * it at that exec's ptrace stop, where no probe of the old image can fire
 * any more.  Reading this file prints the old image's aggregates (as at
 * the end, without MW_LINE_END), empties them and prints MW_LINE_EXEC;
 * the model then starts the new image's from nothing (stream.c,
 * mw_state_exec), so the report is of the last image, as its exit
 * snapshot is.  In a script of one process, of the process; in a script
 * of a changing set (gen.h opts->dynamic), of the processes marked in
 * the set (pidset.h, mw_pidset_mark), each record and each exec line
 * prefixed with its process, and the marks taken off. */
#define MW_EXEC_FILE "exec"
#define MW_LINE_EXEC "MW 1 exec"
/* The script's procfs probe that prints the lock waits counted so far (a
 * C record) without ending anything; read at every --interval sample. */
#define MW_SAMPLE_FILE "sample"

/* `mallocwatch serve` (gen.h, opts->live): reading this procfs file
 * makes the script print, between these two lines, the aggregates of
 * every process so far (G, A and S records, prefixed), which the model
 * keeps as the latest reading (procs.h) instead of adding them up. */
#define MW_LIVE_FILE "live"
#define MW_LINE_LIVE "MW 1 live"
#define MW_LINE_LIVE_END "MW 1 live end"

/* Record tags, the first byte of a line (fields in docs/protocol.md). */
#define MW_REC_DECLARE 'P'	/* P ID NAME NARGS [MASK] */
#define MW_REC_EVENT 'E'	/* E ID TID A1..An (streams before T) */
#define MW_REC_TIMED 'T'	/* T ID TID NS A1..An: E with its time,
				 * CLOCK_MONOTONIC ns */
#define MW_REC_ORIGIN 'O'	/* O NS: the program started (mallocwatch) */
#define MW_REC_SAMPLE 'Y'	/* Y NS MMAP TRIM SBRK_BASE MAIN_END NARENAS
				 * [MMAPPED NMMAPS RSS]: the state reader's
				 * sample (mallocwatch); the mmapped chunks'
				 * bytes and count and the process's RSS
				 * (bytes, 0 unknown) since issue 25 */
#define MW_REC_SARENA 'U'	/* U ARENA SYSTEM NHEAPS HEAP_BYTES: one of
				 * the sample's arenas, NARENAS of them */
#define MW_REC_SWAITS 'C'	/* C WAITS: lock waits counted so far, for the
				 * last sample (the script's sample probe) */
#define MW_REC_HITS 'N'		/* N ID TID COUNT */
#define MW_REC_HEAP 'H'		/* H HEAP ARENA SIZE PEAK GREW SHRANK */
#define MW_REC_HEAPHITS 'G'	/* G: H, and GREW/SHRANK are also the hits
				 * of memory_heap_more/less (no N for them) */
#define MW_REC_WAIT 'W'		/* W TID ARENA COUNT */
#define MW_REC_SBRK 'S'		/* S GROWN TRIMMED NMORE NLESS PEAK FIRST LAST
				 * FAILED [FAILED_LESS]: with FAILED_LESS, the
				 * hits of memory_sbrk_more/less (no N) */
#define MW_REC_JUMP 'J'		/* J ID KIND KEY COUNT */
#define MW_REC_JUMPS 'K'	/* K ID TID BUF VALUE RET COUNT: one map
				 * entry of a setjmp/longjmp probe; its
				 * hits, and J of each kind, summed */
#define MW_REC_WAITS 'A'	/* A ID TID ARENA COUNT: W, and as many
				 * hits of probe ID (memory_arena_reuse_wait) */
#define MW_REC_BIAS 'B'		/* B BIAS */
#define MW_REC_GONE 'V'		/* V TID NS: a thread the stream named was no
				 * longer in /proc/PID/task at the sample
				 * taken at NS (mallocwatch; it exited in the
				 * interval before) */
#define MW_REC_STACKMAP 'L'	/* L PID IMAGE START END OFFSET BUILDID PATH:
				 * --stacks, written by mallocwatch into a
				 * saved stream (stacks_save.c) */
#define MW_REC_STACK 'X'	/* X PROBE PID TID IMAGE NS KNOWN A1 A2 A3 PC.. */
#define MW_REC_STACKSTATS 'Z'	/* Z SITES CPUS SAMPLES UNWOUND LOST FOREIGN
				 * STALE UNWIND_NS [HEAP_PERIOD] */
#define MW_REC_USTACK 'Q'	/* Q ID PID TID NS A1 A2 A3 0xPC...: a stacked
				 * probe's hit with ubacktrace() (kernel
				 * runtime, --stacks; never run here) */
#define MW_REC_PROCESS '@'	/* @PID RECORD: RECORD (any of the above but P)
				 * is process PID's; only in runs of several
				 * processes (procs.h) */

/* Field counts after the tag of the fixed-size records. */
#define MW_NF_HITS 3
#define MW_NF_HEAP 6
#define MW_NF_WAIT 3
#define MW_NF_SBRK 8
#define MW_NF_SBRK_HITS 9
#define MW_NF_JUMP 4
#define MW_NF_JUMPS 6
#define MW_NF_WAITS 4
#define MW_NF_BIAS 1
#define MW_NF_ORIGIN 1
#define MW_NF_SAMPLE 6
#define MW_NF_SAMPLE_MEM 9
#define MW_NF_SARENA 4
#define MW_NF_SWAITS 1
#define MW_NF_GONE 2

/* Saved streams: the first line, and the metadata keys. */
#define MW_STREAM_MAGIC "# mallocwatch-stream 1"
#define MW_META_LIBC "libc"		/* path traced */
#define MW_META_RUNTIME "runtime"	/* kernel | bpf */
#define MW_META_MAIN_ARENA "main_arena"	/* link-time address, decimal */
#define MW_META_LIBM "libm"		/* SITES PATH */
#define MW_META_ARG "arg"		/* one per word of the command, C-escaped */
#define MW_META_PID "pid"
#define MW_META_WAIT_STATUS "wait_status"	/* waitpid() status */
#define MW_META_TRACER_DIED "tracer_died"	/* 0 | 1 */
#define MW_META_TRACER_LOST "tracer_lost"	/* events the tracer said it lost */
#define MW_META_TRACER_MSG "tracer_msg"	/* its first error line, C-escaped */
#define MW_META_STOPPED "stopped"	/* 1: -p ended by ^C/SIGTERM, normally */
#define MW_META_COMM "comm"		/* -p: the process's name, C-escaped */
#define MW_META_FINDING "finding"	/* one line of the findings' text (findings.h),
					 * C-escaped; at most MW_META_FINDINGS_MAX bytes */
#define MW_META_FINDINGS_MAX 65536
#define MW_META_SNAPSHOT "snapshot"	/* WHICH JSON: the allocator read from the
					 * process (attach: -p's, where it came,
					 * before the events it seeds; end: -p's;
					 * exit: -c's), report_snap.h's object on
					 * one line */
#define MW_META_ATTACH_REFUSED "attach_refused"	/* -p: no snapshot at attach,
					 * why (C-escaped): the figures that need
					 * the allocator as tracing found it are
					 * unknown (state.h mw_state_attach_unknown) */
#define MW_META_IMAGES_MIXED "images_mixed"	/* NS WHY (C-escaped): the process
					 * exec'd at NS and the figures of the
					 * tracer mix its images from there
					 * (state.h mw_state_images_mixed) */

/* Sizes of the script's global arrays (BPF maps under stapbpf): the
 * generator (gen.c) declares them, the stream parser (state_model.c)
 * knows a table that came back this full was cut short.  An update past
 * a full map fails silently in the script, so the parser reports it. */
#define MW_MAP_HITS 65536	/* mw_n[probe, tid] */
#define MW_MAP_HEAPS 16384	/* mw_h[heap] and friends */
/* mw_wait[tid, arena]: nearly every hit is a new key (a thread waits for
 * an arena's lock at its first allocation), so umulti-shim.so leaves this
 * map preallocated, as it does hash maps of at most
 * MW_UMULTI_PREALLOC_MAX entries (uprobe_multi.h; gen.c holds this size to it):
 * a new key costs some 250 ns less than from the BPF memory allocator,
 * and 8192 entries take 0.25 ms to fill at the start */
#define MW_MAP_WAITS 8192
#define MW_MAP_JUMPS 16384	/* mw_jbuf, mw_jret, mw_jval */
/* mw_msamp[probe] (a script of one process; emptied at its exec) or
 * mw_msamp[pid, probe] (of several; MW_MAP_HITS entries, never more than
 * mw_n has, so it is full only when mw_n is): the slow-math hits
 * streamed, the first MW_MATH_SAMPLES of each probe, process and program
 * image.  The model expects exactly that many of a probe's T records
 * (state.h mw_state_missing): one that does not come is counted lost and
 * shown missing, never left out without a word. */
#define MW_MSAMP_ONE 256
#define MW_MATH_SAMPLES 4
/* mw_pids[pid] of a run whose processes change while it runs (gen.h,
 * opts->dynamic): a size no other map of the script has, so that
 * mallocwatch finds this map among the tracer's (pidset.h).  The kernel
 * runtime's procfs file for that map: MW_PIDS_FILE. */
#define MW_MAP_PIDS 4093
/* The drain's and the exec probe's key maps, mw_k1..mw_k6 and
 * mw_x1..mw_x6 (gen.h, mw_gen_drain_clear): a map's keys are copied and
 * deleted this many at a time, which keeps those maps small enough to be
 * preallocated at no cost worth counting (umulti-shim.c). */
#define MW_DRAIN_CHUNK 1024

#endif /* MALLOCWATCH_PROTOCOL_H */
