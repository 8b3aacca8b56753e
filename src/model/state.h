/* state.h - the allocator state model built from the tracer's stream.
 *
 * Per process: the arenas (main_arena and those memory_arena_new made),
 * which threads attached to each and how, the heaps (heap_info regions)
 * of each non-main arena with current and peak size, the main arena's
 * sbrk account, the mmap and trim thresholds and every change to them,
 * lock waits, retries, mallopt calls, and how many events were lost.
 *
 * The stream parser (stream.c) feeds it; the reports (report.c,
 * report_json.c, report_html.c) read it through the accessors below.
 * All sizes are bytes, addresses are the traced process's virtual
 * addresses.
 */
#ifndef MALLOCWATCH_STATE_H
#define MALLOCWATCH_STATE_H

#include <stddef.h>
#include <stdint.h>

/* glibc's defaults (malloc/malloc.c): DEFAULT_MMAP_THRESHOLD_MIN and
 * DEFAULT_TRIM_THRESHOLD, both 128 KiB. */
#define MW_DEFAULT_MMAP_THRESHOLD (128 * 1024)
#define MW_DEFAULT_TRIM_THRESHOLD (128 * 1024)

enum mw_attach { MW_ATTACH_NEW, MW_ATTACH_REUSE, MW_ATTACH_FREE_LIST, MW_ATTACH_IMPLICIT };

struct mw_attachment {
	int tid;
	enum mw_attach how;
	uint64_t seq;		/* stream order */
	uint64_t ns;		/* when (CLOCK_MONOTONIC ns; 0: untimed stream) */
};

struct mw_arena {
	uint64_t addr;		/* 0 when unknown (main_arena, no symbol) */
	int is_main;
	int at_attach;		/* there when tracing started (-p, from a snapshot) */
	uint64_t threads_at_attach;	/* attached_threads then */
	uint64_t bytes_at_attach;	/* main: system bytes then (sbrk net adds) */
	int created_by_tid;	/* 0 for main_arena */
	uint64_t create_size;	/* memory_arena_new's size argument */
	struct mw_attachment *att;	/* threads attached, in order */
	size_t natt, catt;		/* used and allocated entries of att */
	uint64_t waits;		/* memory_arena_reuse_wait on this arena */
	/* filled by mw_state_finish(): */
	size_t nheaps;		/* live heaps */
	uint64_t heap_bytes;	/* their current sizes; main: sbrk net */
};

struct mw_heap {
	uint64_t addr;
	uint64_t arena;		/* owning arena's address, 0 if unknown */
	uint64_t size, peak;	/* current and peak heap_info.size */
	uint64_t grew, shrank;	/* memory_heap_more/less counts */
	int created_by_tid;
	int freed;
	int at_attach;		/* there when tracing started */
	uint64_t new_ns, free_ns;	/* when memory_heap_new and _free fired
					 * (T records; CLOCK_MONOTONIC ns), 0
					 * untimed or not seen (the --html
					 * page's heaps over time) */
};

struct mw_threshold_change {
	uint64_t seq;
	int tid;
	const char *source;	/* "dynamic" (free of a large chunk), "mallopt",
				 * "tunable" (GLIBC_TUNABLES at start-up) */
	uint64_t mmap, trim;	/* thresholds after the change */
};

struct mw_thread {
	int tid;
	uint64_t arena;		/* the arena it last attached to (0: main/unknown) */
	uint64_t waits;		/* lock waits */
	uint64_t wait_hits;	/* its memory_arena_reuse_wait hits (N or A
				 * records): the most waits it can have had */
	uint64_t retries;
	uint64_t hits;		/* probe hits, all probes but memory_heap_more/less
				 * and memory_sbrk_more/less (counted per heap and
				 * for main_arena, not per thread) */
	uint64_t jumps[3];	/* hits of setjmp, longjmp, longjmp_target */
	uint64_t first_ns, last_ns;	/* its first and last timed event (T records;
					 * CLOCK_MONOTONIC ns), 0 when none */
	uint64_t gone_ns;	/* the first sample that found it gone (V
				 * records): it exited before; 0 unknown */
};

/* A timed event for the timeline's markers (T records): mallopt calls,
 * threshold and tunable settings, retries, tcache checks, slow math;
 * not arena and heap events, which the timeline draws otherwise. */
struct mw_mark {
	uint64_t ns;		/* CLOCK_MONOTONIC ns */
	int known;		/* MW_P_* */
	const char *name;	/* probe name (owned by the state) */
	int tid;
	int64_t arg[3];		/* its first three arguments */
};

/* One sample of the allocator (Y and U records, made by mallocwatch
 * from the state reader, snapshot.h, every --interval; not probes). */
struct mw_sample_arena {
	uint64_t arena;		/* malloc_state address */
	uint64_t system;	/* malloc_state.system_mem, bytes */
	uint64_t nheaps, heap_bytes;	/* its heaps (non-main) and their sizes */
};

struct mw_sample {
	uint64_t ns;		/* CLOCK_MONOTONIC ns when read */
	uint64_t mmap_threshold, trim_threshold;	/* mp_'s, bytes */
	uint64_t sbrk_base, main_end;	/* the main heap's extent (addresses) */
	size_t first, n;	/* its arenas: mw_state_sample_arenas()[first..first+n) */
	uint64_t waits;		/* arena lock waits so far (C record), */
	int have_waits;		/* when the tracer answered */
	int have_mem;		/* the Y record had the three below (streams
				 * saved before them did not) */
	uint64_t mmapped, n_mmaps;	/* mmapped chunks: mp_.mmapped_mem, n_mmaps */
	uint64_t rss;		/* the process's resident bytes; 0 unknown */
};

/* A streamed event kept as is, for mallopt/tunable/retry/tcache/unknown. */
struct mw_event {
	uint64_t seq;
	int id;			/* probe id in the stream */
	int known;		/* in probes.def (MW_P_*), or MW_P_UNKNOWN */
	const char *name;	/* the probe name (owned by the state) */
	int tid;
	int nargs;
	int64_t arg[12];
	unsigned unavail;	/* bit i: arg[i] could not be read */
};

struct mw_sbrk {
	uint64_t grown, trimmed;	/* bytes */
	uint64_t nmore, nless, failed;	/* calls; failed: sbrk_more's */
	uint64_t failed_less;		/* sbrk_less with no break (0 in old streams) */
	int64_t peak;			/* highest net (grown - trimmed) */
	uint64_t first_brk, last_brk;	/* first break seen, current end */
};

struct mw_probe_count {
	const char *name;
	int id;			/* in the stream */
	int known;		/* in probes.def (MW_P_*), or MW_P_UNKNOWN */
	int nargs;
	uint64_t hits;		/* what the script counted */
	uint64_t received;	/* streamed lines received (stream mode) */
	unsigned unavail;	/* bit i: argument i+1 cannot be read */
	int streamed;		/* mode is stream: received should equal hits */
	uint64_t hits_before;	/* what the script counted in the program's
				 * images before the last (mw_state_exec) */
	uint64_t owed;		/* of those, streamed and not yet received
				 * (mw_state_owed) */
	int math;		/* mode is math: its first MW_MATH_SAMPLES
				 * hits streamed (mw_probe_samples_due) */
	uint64_t samples;	/* of its events, kept in the events log */
};

/* A slow-math probe's T records the script streamed (protocol.h,
 * MW_MATH_SAMPLES: the first hits of the image), which received should
 * reach; 0 for any other probe.  Those that did not come are missing
 * (mw_state_missing: counted lost), and the reports show how many. */
uint64_t mw_probe_samples_due(const struct mw_probe_count *p);

/* setjmp/longjmp aggregates (J records): kind 1 = per jmp_buf, 2 = per
 * return address (setjmp) or target (longjmp), 3 = per longjmp value. */
enum mw_jump_kind { MW_JUMP_BUF = 1, MW_JUMP_ADDR = 2, MW_JUMP_VALUE = 3 };

struct mw_jump {
	int id;			/* probe id */
	const char *name;	/* probe name (owned by the state) */
	enum mw_jump_kind kind;
	int64_t key;		/* jmp_buf address, code address, or value */
	uint64_t count;
};

/* One allocator setting: a mallopt() call, paired with the do_set_* probe
 * that followed it in the same thread, or a tunable applied at start-up
 * (a do_set_* probe without a mallopt call before it). */
struct mw_setting {
	uint64_t seq;
	int tid;
	int from_mallopt;	/* 1: mallopt(); 0: a GLIBC_TUNABLES tunable */
	int param;		/* mallopt parameter number (from_mallopt) */
	const char *name;	/* "M_ARENA_MAX", or the tunable's name; "?" */
	int64_t value;
	int has_previous;	/* a do_set_* probe gave the previous value */
	int64_t previous;
	int previous_unavailable;	/* ... but it could not be read (no symbols) */
};

/* A retried allocation: memory_{malloc,calloc,realloc,memalign}_retry or
 * memory_arena_retry. */
struct mw_retry {
	int tid;
	const char *probe;
	uint64_t bytes;
	uint64_t arena;		/* memory_arena_retry: the arena that failed */
};

struct mw_state;

/* A new, empty model for process pid.  NULL on out-of-memory. */
struct mw_state *mw_state_new(int pid);
/* Free st and everything it holds (strings it returned included); NULL
 * allowed. */
void mw_state_free(struct mw_state *st);

/* The libm traced for slow-math probes and how many sites it has (0: a
 * libm without them, e.g. glibc 2.34 and later).  path is copied. */
void mw_state_set_libm(struct mw_state *st, const char *path, int sites);
/* NULL when no libm was traced. */
const char *mw_state_libm(const struct mw_state *st, int *sites);

/* Set the traced process's pid (known only once it was started). */
void mw_state_set_pid(struct mw_state *st, int pid);

/* The libc's link-time address of main_arena, when its symbol resolved. */
void mw_state_set_main_arena_sym(struct mw_state *st, uint64_t sym);

struct mw_snapshot;

/* -p: start from the allocator as a snapshot found it when the probes
 * were armed (snapshot.h): its arenas, their heaps, main_arena's bytes
 * and the thresholds, each marked as there at attach.  Events update
 * the model from there.  Call before the stream's events. */
void mw_state_seed(struct mw_state *st, const struct mw_snapshot *s);

/* Was the model seeded from a snapshot? */
int mw_state_seeded(const struct mw_state *st);

/* -p (and a process joining or created under -f, --cgroup): the process
 * was there before tracing and no snapshot of its allocator could be
 * read then (why, copied: "no snapshot at attach: ...").  Events see
 * only what changes from now on, so the figures that need the allocator
 * as tracing found it (metrics.def's "attach" column: the arenas and
 * heaps at the end, their bytes, the thresholds) are unknown, and the
 * reports say so instead of counting from nothing.  A later
 * mw_state_seed or mw_state_exec (a new image starts from nothing)
 * makes them known again. */
void mw_state_attach_unknown(struct mw_state *st, const char *why);

/* Why the allocator at attach is unknown (mw_state_attach_unknown), or
 * NULL when it is known (seeded, or traced from the program's start). */
const char *mw_state_attach_refused(const struct mw_state *st);

/* Stream input (stream.c).  name is copied. */
/* unavail: bit i set when argument i+1 cannot be read (it arrives as 0). */
void mw_state_declare(struct mw_state *st, int id, const char *name, int nargs,
		      unsigned unavail);
/* A streamed event; -1 (nothing recorded) when id was not declared or
 * nargs differs from the declaration. */
int mw_state_event(struct mw_state *st, int id, int tid, const int64_t *args, int nargs);
/* An N record: count more hits of probe id by thread tid (the thread is
 * made when new; an undeclared id adds to the thread alone): 0; -1
 * (nothing counted) when the image's total of hits, or the thread's,
 * would pass INT64_MAX (garbled: no tracer counts that many). */
int mw_state_hits(struct mw_state *st, int id, int tid, uint64_t count);
/* An H record; with hits (a G record) grew and shrank are also added to
 * the hits of memory_heap_more and memory_heap_less, which then have no
 * N records (their hits are not per thread): 0; -1 (nothing taken) when
 * they would take the image's total of hits past INT64_MAX (garbled, as
 * mw_state_hits).  A heap's grew and shrank are held at UINT64_MAX. */
int mw_state_heap(struct mw_state *st, uint64_t heap, uint64_t arena, uint64_t size,
		  uint64_t peak, uint64_t grew, uint64_t shrank, int hits);
/* A W record: count memory_arena_reuse_wait hits of thread tid on the
 * arena at address arena (the arena is made when new): 0; -1 (nothing
 * taken; mw_state_why says why) when the thread's waits would pass its
 * hits of that probe received so far (a wait is a hit: the N records of
 * those hits came first, an A record carries its own).  The thread's and
 * the arena's waits are held at UINT64_MAX (units.h: past INT64_MAX the
 * view's cells are unknown). */
int mw_state_wait(struct mw_state *st, int tid, uint64_t arena, uint64_t count);
/* An A record: count hits of probe id (memory_arena_reuse_wait) by
 * thread tid, as mw_state_hits, and as many waits on the arena at
 * address arena, as mw_state_wait: 0; -1 (nothing taken) when id is no
 * memory_arena_reuse_wait of the stream's or the hits would not fit. */
int mw_state_wait_hits(struct mw_state *st, int id, int tid, uint64_t arena, uint64_t count);
/* An S record; with hits (nine fields) nmore + failed and nless +
 * failed_less are the hits of memory_sbrk_more and memory_sbrk_less,
 * which then have no N records: 0; -1 (nothing taken) when they would
 * take the image's total of hits past INT64_MAX (garbled). */
int mw_state_sbrk(struct mw_state *st, const struct mw_sbrk *s, int hits);
/* A B record: the libc's load bias (bytes; 0 is ignored).  With
 * main_arena's symbol (mw_state_set_main_arena_sym) it names main_arena's
 * address, and an arena the events made at that address before is merged
 * into it. */
void mw_state_bias(struct mw_state *st, uint64_t bias);
/* One setjmp/longjmp map entry (K record): count hits of probe id by
 * thread tid with jmp_buf buf, return address ret and (longjmp,
 * longjmp_target) value val; adds to the thread's hits and to the
 * jump counts of each key, merged with earlier ones.  0, or -1 for an
 * undeclared probe. */
int mw_state_jump_tuple(struct mw_state *st, int id, int tid, int64_t buf, int64_t val,
			int64_t ret, uint64_t count);
/* A J record: count more of probe id's key (a jmp_buf, a return address
 * or a value: kind, enum mw_jump_kind); -1 when id is undeclared or kind
 * unknown. */
int mw_state_jump(struct mw_state *st, int id, int kind, int64_t key, uint64_t count);
/* A T record: mw_state_event at time ns (CLOCK_MONOTONIC). */
int mw_state_event_at(struct mw_state *st, int id, int tid, uint64_t ns, const int64_t *args,
		      int nargs);
/* O, Y, U, C records: the origin; a sample's header (narenas U records
 * follow); one arena of the last sample; the lock waits counted so far,
 * for the last sample.  -1 for a U or C without a sample, or a U past
 * the announced count. */
void mw_state_origin_set(struct mw_state *st, uint64_t ns);
void mw_state_sample(struct mw_state *st, const struct mw_sample *s, size_t narenas);
int mw_state_sample_arena(struct mw_state *st, const struct mw_sample_arena *a);
int mw_state_sample_waits(struct mw_state *st, uint64_t waits);

/* Thread tid was gone at the sample at ns (a V record): kept once, for a
 * thread the model knows (others are ignored).  0; -1 for ns 0. */
int mw_state_thread_gone(struct mw_state *st, int tid, uint64_t ns);
/* The script's ready line (MW_LINE_READY: its probes armed), its end
 * line (MW_LINE_END: its dumps complete), and one line the parser could
 * not read (counted, shown in the report as garbled). */
void mw_state_ready(struct mw_state *st);
void mw_state_end(struct mw_state *st);
void mw_state_garbled(struct mw_state *st);

/* Why the last record refused was refused, when its check said (one
 * line, static), and forget it; NULL when it did not. */
const char *mw_state_why(struct mw_state *st);

/* The process replaced its program image (MW_LINE_EXEC, protocol.h;
 * the old image's aggregates came just before it): everything known of
 * the allocator starts again from nothing, as in a new process (arenas,
 * heaps, threads, events, sbrk, thresholds, settings, retries, jumps,
 * samples and timeline marks, the libc's load bias), so that the report
 * is of the last image.  Kept: the probes' declarations (each probe's
 * hits so far move to its hits_before), the origin, the garbled and
 * lost counts, the libc's main_arena symbol and the libm's facts. */
void mw_state_exec(struct mw_state *st);
/* The old image's streamed records still to come after its exec line
 * (mw_state_exec: each streamed probe's hits less those received, and
 * each slow-math probe's samples due less those received).
 * Under the bpf runtime they travel through stapbpf's perf buffer and
 * the exec line does not, so they may come after it (an arena a forked
 * child's copy made just before its exec: t-fork-exec).  While any is
 * owed, the process is held at its exec stop (tracer.h, exec_owed: none
 * of the new image can have come), so every T, E, G or H record is the
 * old image's: mw_state_owed_take drops it (1; a T or E counted off its
 * probe's owed), else 0.  mw_state_missing counts them too. */
uint64_t mw_state_owed(const struct mw_state *st);
int mw_state_owed_take(struct mw_state *st, char tag, int id);
/* st replaces old, the model of the same process before it replaced its
 * image, without the tracer's totals of old's image being emptied: they
 * count old's streamed hits, so st counts them received (by probe id, for
 * the probes st declares), and none is taken for lost. */
void mw_state_keep_received(struct mw_state *st, const struct mw_state *old);
/* The process replaced its image (exec) at ns (CLOCK_MONOTONIC; 0
 * unknown) and the tracer's totals of the old one could not be emptied
 * for the new one (why, copied: "the tracer did not answer in 3000 ms"),
 * or the new one was not traced at all (it maps no traced libc): every
 * figure counted from the tracer (metrics.def's traced figures: arenas,
 * heaps, threads, sbrk, waits, retries, thresholds, the events) mixes
 * two programs, or is another program's, and is refused: the reports
 * show it as unknown with why, every --check rule on it fails.  The
 * snapshot at exit, of the last image, stays.  The first reason stands;
 * a later drained exec (mw_state_exec) starts anew, known again. */
void mw_state_images_mixed(struct mw_state *st, const char *why, uint64_t ns);
/* Why the figures are refused (mw_state_images_mixed), *ns when (ns may
 * be NULL); NULL when they are not. */
const char *mw_state_images_refused(const struct mw_state *st, uint64_t *ns);
/* How many times the process replaced its image while traced; in
 * *hits_before, the probe hits of the images before the last (held at
 * UINT64_MAX; past INT64_MAX, a hostile stream's: the view says unknown). */
unsigned mw_state_execs(const struct mw_state *st, uint64_t *hits_before);

/* Tables of the script that came back full (their later entries were
 * dropped by the script): a ", "-separated list, "" when none.  Valid
 * after mw_state_finish(). */
const char *mw_state_full_tables(const struct mw_state *st);

/* Add events the tracer itself reported lost. */
void mw_state_tracer_lost(struct mw_state *st, uint64_t n);

/* Attribute heaps, add up arenas; call once after the stream ended. */
void mw_state_finish(struct mw_state *st);

/* Read access for reports; arrays stay owned by the state. */
int mw_state_pid(const struct mw_state *st);
const struct mw_arena *mw_state_arenas(const struct mw_state *st, size_t *n);
const struct mw_heap *mw_state_heaps(const struct mw_state *st, size_t *n);
const struct mw_thread *mw_state_threads(const struct mw_state *st, size_t *n);
const struct mw_event *mw_state_events(const struct mw_state *st, size_t *n);

/* The streamed events kept for the reports (mw_state_events), mallopt and
 * tunable settings, retries and threshold changes are lists of at most
 * MW_STATE_KEEP entries each, so that memory follows arenas, heaps and
 * threads, not the number of events (a storm of retries is counted in
 * full everywhere else: probe hits, per-thread retries, thresholds now).
 * What did not fit is counted here. */
#define MW_STATE_KEEP 10000
struct mw_state_omitted {
	uint64_t events, settings, retries, thresholds, marks;
};

/* The timeline (T, O, Y, U, C records; docs/protocol.md).  origin: when
 * the program started (-c: released; -p: tracing started), CLOCK_MONOTONIC
 * ns, 0 when the stream has none.  Samples are at most MW_STATE_SAMPLES:
 * past that, every other one is dropped and only every second one after
 * is kept (the interval doubles), so memory stays bounded. */
#define MW_STATE_SAMPLES 2048
uint64_t mw_state_origin(const struct mw_state *st);
const struct mw_mark *mw_state_marks(const struct mw_state *st, size_t *n);
const struct mw_sample *mw_state_samples(const struct mw_state *st, size_t *n);
const struct mw_sample_arena *mw_state_sample_arenas(const struct mw_state *st, size_t *n);
/* The lock waits of the newest C record (whether or not its sample is
 * one of those kept), 0 before the first. */
uint64_t mw_state_waits_latest(const struct mw_state *st);
const struct mw_state_omitted *mw_state_omitted_get(const struct mw_state *st);
const struct mw_threshold_change *mw_state_thresholds(const struct mw_state *st, size_t *n,
						      uint64_t *mmap, uint64_t *trim);
const struct mw_sbrk *mw_state_sbrk_get(const struct mw_state *st);
const struct mw_probe_count *mw_state_probes(const struct mw_state *st, size_t *n);
const struct mw_jump *mw_state_jumps(const struct mw_state *st, size_t *n);
const struct mw_setting *mw_state_settings(const struct mw_state *st, size_t *n);
const struct mw_retry *mw_state_retries(const struct mw_state *st, size_t *n);
/* Streamed events the aggregates count (N records) that have not been
 * received (E records), slow-math samples due included
 * (mw_probe_samples_due): 0 before the aggregates arrive.  While a run is
 * live they may still be on their way (the flush waits for them); at the
 * end they are lost. */
uint64_t mw_state_missing(const struct mw_state *st);

/* The probe hits counted with no thread (G and nine-field S records:
 * memory_heap_more/less per heap, memory_sbrk_more/less for main_arena),
 * which no mw_thread's hits include. */
uint64_t mw_state_hits_unthreaded(const struct mw_state *st);
/* Those of one probe (MW_P_*; 0 for any other value). */
uint64_t mw_state_probe_unthreaded(const struct mw_state *st, int known);

/* Total probe hits; lost = streamed hits never received + tracer-reported
 * + garbled lines; ended = the end-of-run aggregates arrived.  Both sums
 * (and mw_state_missing, mw_state_owed) are held at UINT64_MAX; past
 * INT64_MAX they are unknown (units.h mw_count_known: a hostile stream's
 * images, each of 2^62 hits never received). */
void mw_state_totals(const struct mw_state *st, uint64_t *total, uint64_t *lost,
		     uint64_t *garbled, int *ended);

#endif /* MALLOCWATCH_STATE_H */
