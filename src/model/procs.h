/* procs.h - the processes of a run: for each, an object with what
 * mallocwatch knows of it (pid, parent, command line, the libc and libm
 * it maps as files, where it lives, the snapshots read from it) and its
 * allocator model (state.h).  Every traced run, of one process or of
 * several, goes through one: the stream's records reach a process's
 * model through it, and the reports are written per process.
 *
 * A run traces one process (-c PROGRAM, -p PID) or several (-p
 * PID,PID,...).  With one, the tracer's records are protocol version 1
 * lines (protocol.h), all of that process, and go to its model as they
 * are: streams recorded before this existed replay unchanged.  With
 * several, every record of a process comes prefixed with its pid
 * (MW_REC_PROCESS, docs/protocol.md):
 *
 *	@4242 E 0 4243 139830511960064 135168
 *	@4250 N 0 4250 1
 *
 * and goes, without the prefix, to that process's model.  Lines of the
 * run - declarations (P), the handshake (MW), the origin (O), metadata
 * (#) - reach every model.  A prefixed line naming a process not in the run, or one that
 * does not parse, is counted as garbled in the first model.
 */
#ifndef MALLOCWATCH_PROCS_H
#define MALLOCWATCH_PROCS_H

#include <stddef.h>
#include <stdint.h>

#include "ledger.h"
#include "mapped.h"
#include "procwhere.h"
#include "state.h"

struct mw_snapshot;

/* What the probes counted in one process since it was traced, for
 * `mallocwatch serve --probes`, as its live readings give them: the
 * script's aggregates (protocol.h, MW_LINE_LIVE).  The counters serve
 * shows are the view's (view.h, mw_view_counters): these and the streamed
 * events the model received.  A live reading fills the lock waits, the
 * heaps' resizes and the sbrk figures; the rest are the view's, from the
 * model.  Counts of probe hits but the sbrk bytes. */
struct mw_counters {
	uint64_t arenas_created;	/* memory_arena_new */
	uint64_t arenas_reused;		/* memory_arena_reuse (the limit reached) */
	uint64_t arenas_reused_free_list;	/* memory_arena_reuse_free_list */
	uint64_t lock_waits;		/* memory_arena_reuse_wait */
	uint64_t retries;		/* memory_{arena,malloc,calloc,realloc,
					 * memalign}_retry */
	uint64_t heaps_created, heaps_freed;	/* memory_heap_new, _free */
	uint64_t heap_grows, heap_shrinks;	/* memory_heap_more, _less */
	uint64_t sbrk_more, sbrk_less;	/* memory_sbrk_more, _less (failed ones
					 * included) */
	uint64_t sbrk_grown, sbrk_trimmed;	/* bytes they moved the break by */
};

/* The most counters of a process serve gives out (view.h's MW_VK_COUNT
 * at most). */
#define MW_PROCS_SHOWN 16

/* One traced process: what mallocwatch knows of it besides its model. */
struct mw_process {
	int pid;
	int ppid;			/* its parent when it was observed; 0 unknown */
	char comm[64];			/* its command name then; "" unknown */
	char **argv;			/* its command line then (owned, NULL-
					 * terminated); NULL unknown */
	char *title;			/* its /proc/PID/cmdline read later, at its
					 * exit (or the end), words joined by
					 * blanks, when it differs from argv: a
					 * title it gave itself ("postgres:
					 * checkpointer"; owned); NULL none */
	int title_at_end;		/* title was read at the end, not at exit */
	struct mw_mapped libc, libm;	/* the files it maps (mapped.h) */
	int have_libc, have_libm;
	struct mw_where where;		/* where it lives (procwhere.h) */
	int have_where;
	struct mw_state *st;		/* its allocator model (owned) */
	/* the allocator read from it (snapshot.h; owned, NULL: none): when
	 * tracing started (-p), at the end (-p), at its exit (-c) */
	struct mw_snapshot *at_attach, *at_end, *at_exit;
	/* the RSS ledgers (ledger.h; owned, NULL: none) read with at_exit
	 * and at_end */
	struct mw_ledger *ledger_exit, *ledger_end;
	/* -f: the process it was created by (0: the program itself), its
	 * end as waitpid(2) gave it (have_status) */
	int parent;
	int have_status, status;
	unsigned execs;			/* -f: its execs (ptrace_tree.h's count) */
	/* -f: mw_now_ns() when it was let go on request (`mallocwatch
	 * release`): traced no more from then, no exit stop; 0: not */
	uint64_t released_ns;
	/* serve: the aggregates of the newest complete live reading (have_live
	 * once there was one), the one being read, and the counters last
	 * given out (mw_process_keep_max keeps them from going down) */
	struct mw_counters live, pending;
	uint64_t shown[MW_PROCS_SHOWN];
	int have_live;
};

struct mw_procs;

/* A run of the n processes pids (copied), each with a new, empty model;
 * the first is the run's main process.  With n == 1 records are
 * unprefixed (version 1); n == 0 makes an empty run whose records are
 * prefixed, for processes added later (serve).  NULL when out of
 * memory. */
struct mw_procs *mw_procs_new(const int *pids, size_t n);

/* Free p and every process's model in it; NULL allowed. */
void mw_procs_free(struct mw_procs *p);

/* The i-th process (i < count); the run owns it. */
struct mw_process *mw_procs_process(const struct mw_procs *p, size_t i);

/* Fill pr's ppid, comm, argv, libc, libm and where from /proc now (what
 * cannot be read stays unknown: the process may be gone).  For a process
 * that is being traced: call it when tracing starts. */
void mw_process_observe(struct mw_process *pr);

/* Read pr's /proc/PID/cmdline now into pr->title (at_end: the end of
 * tracing, else its exit stop) when it differs from the command line
 * observed (a title the process set over its arguments, as setproctitle()
 * does); left as it was when it cannot be read. */
void mw_process_read_title(struct mw_process *pr, int at_end);

/* From now on records are prefixed (several processes) even while the
 * run has one: a run whose set of processes changes (-f, --cgroup). */
void mw_procs_set_multi(struct mw_procs *p);

/* Add process pid to a run whose records are prefixed, with a new model
 * that has seen the run's lines so far (its declarations, handshake and
 * origin): a process that joins the run (-f: created in the tree;
 * --cgroup: joined it).  The process object (owned by the run), or NULL
 * when the records are not prefixed, pid is already in the run, or
 * memory ran out. */
struct mw_process *mw_procs_add(struct mw_procs *p, int pid);
/* The same for a pid already in the run, reused by a new process (the
 * old one exited): a second process object, which mw_procs_by_pid finds
 * from now on (the newest first).  NULL when the records are not
 * prefixed or memory ran out. */
struct mw_process *mw_procs_add_reused(struct mw_procs *p, int pid);

/* pr (of p) runs a new program (execve): a new, empty model that has seen
 * the run's lines so far (and counts the old one's streamed hits received:
 * mw_state_keep_received), and no snapshot at attach.  0, or -1 when
 * memory ran out (pr is left as it was). */
int mw_procs_renew(struct mw_procs *p, struct mw_process *pr);

/* Drop process pid from the run (it exited, or is no longer selected):
 * its model and what was read of it are freed; later records of it are
 * garbled.  0, or -1 when it is not in the run. */
int mw_procs_remove(struct mw_procs *p, int pid);

/* serve: counters v[0..n-1] of process pr (n at most MW_PROCS_SHOWN;
 * view.h's mw_view_counters) each raised to the highest given out for pr
 * before, and kept as the highest: they never go down (a heap's count
 * moves from the live reading to the model when it is freed, and the two
 * may arrive in either order). */
void mw_process_keep_max(struct mw_process *pr, uint64_t *v, size_t n);

/* How many processes; the i-th one's pid and model (i < count). */
size_t mw_procs_count(const struct mw_procs *p);
int mw_procs_pid(const struct mw_procs *p, size_t i);
struct mw_state *mw_procs_state(const struct mw_procs *p, size_t i);

/* Process pid of the run (the run owns it), or NULL when it is not in it. */
struct mw_process *mw_procs_by_pid(const struct mw_procs *p, int pid);

/* The model of process pid, or NULL when it is not in the run. */
struct mw_state *mw_procs_find(const struct mw_procs *p, int pid);

/* Is the run of several processes (records prefixed)?  1 or 0. */
int mw_procs_multi(const struct mw_procs *p);

/* One tracer line (without its newline) into the models as above.  A
 * process's exec line (protocol.h, MW_LINE_EXEC, prefixed in a run of
 * several) starts its model again (mw_state_exec) and drops its snapshot
 * at attach, of the image it replaced; unprefixed in a run of several,
 * it is garbled.  0, or -1 when it was garbled (counted). */
int mw_procs_line(struct mw_procs *p, const char *line);

#endif /* MALLOCWATCH_PROCS_H */
