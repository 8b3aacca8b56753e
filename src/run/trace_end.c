/* trace_end.c - how a traced run ends (trace_run.h), for one run
 * (trace_sink.c), several (trace_multi_report.c), -p without probes
 * (trace_snaps.c) and a replay (cmd_trace.c): the model finished, the
 * notes on how it ended and the exit status, the reports written, its
 * time traced, -p's snapshot at the end, --stacks' folded file, why
 * there is no exit status.
 *
 * Split out of trace_run.c, which prepares a run and runs it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "clock.h"
#include "explain.h"
#include "msg.h"
#include "procmem.h"
#include "report.h"
#include "report_stacks.h"
#include "snapshot.h"
#include "state.h"
#include "trace_run.h"
#include "view.h"

/* Write the summary, the JSON and the page, of the run's one view.  A
 * write error is found and named (path and errno) when the file is
 * closed (mw_outputs_close); -1 here only for the summary on stderr,
 * which is not closed. */
static int write_reports(struct outputs *out, const struct mw_view *v)
{
	if (mw_report_text(out->summary, v) < 0)
		out->summary_errno = errno ? errno : EIO;
	if (out->json && mw_report_json(out->json, v) < 0)
		out->json_errno = errno ? errno : EIO;
	if (out->html && mw_report_html(out->html, v) < 0)
		out->html_errno = errno ? errno : EIO;
	return out->summary == stderr && out->summary_errno ? -1 : 0;
}

/* The exit status, and the one-line notes about how things ended. */
static int finish_status(const char *name, const struct mw_trace_result *r,
			 struct mw_run_info *ri, const struct mw_state *st)
{
	uint64_t total, lost, garbled;
	int ended, status = MW_EXIT_OK;

	mw_state_totals(st, &total, &lost, &garbled, &ended);
	if (lost)
		mw_warn("%" PRIu64 " events lost (see the summary)", lost);
	if (mw_state_full_tables(st)[0])
		mw_warn("the script's tables were full, later entries dropped: %s",
			mw_state_full_tables(st));
	if (r->have_status) {
		ri->have_status = 1;
		if (WIFSIGNALED(r->status)) {
			ri->term_signal = WTERMSIG(r->status);
			ri->exit_status = -1;
			char q[256];

			if (!ri->in_tree && !ri->status_not_ours)
				mw_error("'%s' killed by signal %d (%s)", mw_quote(name, q,
					 sizeof(q)), ri->term_signal, strsignal(ri->term_signal));
			status = 128 + ri->term_signal;
		} else {
			ri->exit_status = WEXITSTATUS(r->status);
			status = ri->exit_status;
		}
		if (ri->status_not_ours)	/* -p -f: said, not passed on */
			status = MW_EXIT_OK;
	} else if (!ri->status_why && r->tracer_died) {
		ri->status_why = "the tracer ended before the process did";
	}
	if (r->tracer_died || !ended) {
		char q[600];

		mw_error("the tracer ended early%s%s; the report is incomplete",
			 r->tracer_msg[0] ? ": " : "", mw_quote(r->tracer_msg, q, sizeof(q)));
		status = MW_EXIT_RUNTIME;
	}
	return status;
}

/* After the stream: finish the model, say how it ended, make the view
 * (trace_run.h). */
struct mw_view *mw_run_finish(struct mw_state *st, const struct mw_trace_result *r,
			      struct mw_run_info *ri, int *status)
{
	mw_state_set_pid(st, r->pid);
	mw_state_tracer_lost(st, r->lost);
	mw_state_finish(st);
	ri->pid = r->pid;
	ri->tracer_died = r->tracer_died;
	*status = finish_status(ri->argv && ri->argv[0] ? ri->argv[0] : "process", r, ri, st);
	return mw_view_make(st, ri);	/* the run's one view, every format's */
}

int mw_run_write_reports(struct outputs *out, const struct mw_view *v)
{
	return write_reports(out, v);
}

int mw_run_conclude(struct outputs *out, struct mw_state *st,
		    const struct mw_trace_result *r, struct mw_run_info *ri,
		    struct mw_view **view)
{
	int status;
	struct mw_view *v = mw_run_finish(st, r, ri, &status);

	if (write_reports(out, v) < 0)
		status = MW_EXIT_RUNTIME;
	if (view)
		*view = v;
	else
		mw_view_free(v);
	return status;
}

uint64_t mw_run_traced_ns(uint64_t origin, const struct mw_trace_result *r)
{
	uint64_t end = r->exit_ms > 0 ? (uint64_t)r->exit_ms * 1000000 : mw_now_ns();

	if (!origin || end <= origin || (!r->exit_ms && r->have_status))
		return 0;	/* never started, or its exit's time not kept */
	return end - origin;
}

/* -p: the snapshot at the end, when the process is still there
 * (trace_run.h). */
struct mw_snapshot *mw_run_end_snapshot(pid_t pid, struct mw_glibc *g, long timeout_ms,
					struct mw_ledger **ledger)
{
	struct mw_snapshot *s = NULL;
	struct mw_explained e;
	char err[512];

	if (ledger)
		*ledger = NULL;
	if (!g || !mw_process_alive(pid))
		return NULL;
	if (ledger) {
		if (mw_explain_read(pid, g, timeout_ms, &e, err, sizeof(err)) < 0) {
			mw_warn("no snapshot at the end: %s", err);
			return NULL;
		}
		if (!e.l)
			mw_note("no RSS ledger at the end: %s", e.lerr);
		free(e.f);	/* made again by the reports, with the lock waits */
		*ledger = e.l;
		return e.s;
	}
	if (mw_snapshot_read(pid, g, timeout_ms, &s, err, sizeof(err)) < 0) {
		mw_warn("no snapshot at the end: %s", err);
		return NULL;
	}
	return s;
}

void mw_run_write_folded(struct outputs *out, struct mw_stacks *s)
{
	if (out->folded && mw_report_stacks_folded(out->folded, s) < 0 && !out->folded_errno)
		out->folded_errno = errno ? errno : EIO;
}

const char *mw_run_status_why(int attached, int ptraced, int running)
{
	if (running)
		return "tracing was stopped (^C, SIGTERM or --duration) while it ran";
	if (attached && !ptraced)
		return "-p without -f does not ptrace the process: its exit status went to its "
		       "parent alone";
	return NULL;
}
