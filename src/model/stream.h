/* stream.h - parse mallocwatch's line protocol (protocol.h, version 1;
 * docs/protocol.md), and read and write saved streams.
 *
 * A recorded stream, from a two-thread run:
 *
 *	P 0 memory_arena_new 2
 *	MW 1 ready
 *	E 5 4242 139830511960064 135168
 *	E 0 4242 139830511960096 135168
 *	N 0 4242 1
 *	H 139830511960064 139830511960096 200704 200704 1 0
 *	S 135168 0 1 0 135168 94059417452544 94059417587712 0
 *	B 139830518587392
 *	MW 1 end
 *
 * Each line goes to the state model (state.h).  A line that does not
 * parse is counted as garbled (and warned about once, control bytes
 * escaped), never fatal.
 */
#ifndef MALLOCWATCH_STREAM_H
#define MALLOCWATCH_STREAM_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "state.h"

struct mw_stacks;	/* stacks.h */

/* Parse one line (without newline) into st.  Returns 0, or -1 when the
 * line was garbled (it is then counted in st). */
int mw_stream_line(struct mw_state *st, const char *line);

/* The numbers of a record after its tag (p: where they start), each
 * decimal or "HI:LO" (two 32-bit halves, as stapbpf prints them), into
 * v (at most max).  How many, or -1 when anything is not a number or
 * there are more than max. */
int mw_stream_numbers(const char *p, int64_t *v, int max);

/* The time traced, ns ("# traced_ns N", in the footer; with protocol.h's
 * MW_META_* keys, kept here while src/trace moves). */
#define MW_META_TRACED_NS "traced_ns"

/* What a saved stream says besides its records: "# KEY VALUE" lines
 * (protocol.h names the keys).  Strings are bounded copies. */
struct mw_stream_meta {
	char libc[PATH_MAX];		/* "?" when absent */
	char runtime[16];		/* "kernel", "bpf"; "?" when absent */
	uint64_t main_arena;		/* link-time address; 0 unknown */
	char libm[PATH_MAX];		/* "" when no libm was traced */
	int libm_sites;
	char **argv;			/* the command, NULL-terminated; NULL for -p */
	int argc;
	int pid;
	int have_status, wait_status;	/* waitpid() status of the program */
	int tracer_died;
	char comm[64];			/* -p: the process's name; "" unknown */
	int stopped;			/* -p ended by ^C/SIGTERM, normally */
	unsigned long long tracer_lost;
	char tracer_msg[512];
	struct mw_stacks *stacks;	/* --stacks' records (stacks.h); NULL
					 * none; owned */
	uint64_t traced_ns;		/* how long the probes were traced
					 * (mw_run_info); 0 not known */
	char *findings;			/* the findings' text, lines ending in '\n'
					 * (the run read them from the process);
					 * NULL none; owned */
	/* Set by the caller before mw_stream_replay, and kept: called for
	 * each MW_META_SNAPSHOT line where it comes (an attach snapshot
	 * seeds the model before the events after it), with which
	 * ("attach", "end", "exit") and the JSON text (not checked here).
	 * NULL: such lines are skipped. */
	void (*on_snapshot)(void *ctx, struct mw_state *st, const char *which,
			    const char *json);
	void *ctx;
};

/* One MW_META_SNAPSHOT line: which ("attach", "end", "exit") and json, a
 * JSON text on one line (jansson's compact output never breaks one). */
void mw_stream_write_snapshot(FILE *f, const char *which, const char *json);

/* One MW_META_ATTACH_REFUSED line: no snapshot at attach, and why (a
 * replay marks the same figures unknown, state.h). */
void mw_stream_write_attach_refused(FILE *f, const char *why);
/* The same for the figures that mix the process's images from ns
 * (MW_META_IMAGES_MIXED; state.h mw_state_images_mixed). */
void mw_stream_write_images_mixed(FILE *f, uint64_t ns, const char *why);

/* Write the header (magic line and what is known before the run) and
 * the footer (how it ended).  Arguments and the tracer's message are
 * C-escaped so that nothing in them can start a line of its own. */
void mw_stream_write_header(FILE *f, const struct mw_stream_meta *m);
void mw_stream_write_footer(FILE *f, const struct mw_stream_meta *m);

/* Read a saved stream from f: its records into st, its metadata into m
 * (m is reset first but for on_snapshot and ctx; free it with
 * mw_stream_meta_free).  Returns 0, or
 * -1 with a one-line reason in err when f does not start with
 * MW_STREAM_MAGIC ("not a mallocwatch stream") or cannot be read. */
int mw_stream_replay(FILE *f, struct mw_state *st, struct mw_stream_meta *m,
		     char *err, size_t errlen);

/* Free what mw_stream_replay allocated in m. */
void mw_stream_meta_free(struct mw_stream_meta *m);

#endif /* MALLOCWATCH_STREAM_H */
