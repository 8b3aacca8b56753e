/* fuzz-stream.c - libFuzzer harness for saved streams: header check,
 * metadata, the line protocol parser (src/model/stream.c), the snapshots
 * a stream keeps (mw_snapshot_from_json, seeding the model as a replay
 * does), the state model (src/model/state_model.c) and both reports
 * (src/report/report.c, src/report/report_json.c), all on one input.
 * Seeds: corpus-stream/ (the recorded streams of tests/streams, and
 * regressions). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "msg.h"
#include "report.h"
#include "report_snap.h"
#include "state.h"
#include "stream.h"
#include "view.h"

/* As mallocwatch replay does: the attach snapshot seeds the model, the
 * others are kept for the reports (one each). */
static struct mw_snapshot *snaps[3];

static void on_snapshot(void *ctx, struct mw_state *st, const char *which, const char *text)
{
	int i = strcmp(which, "attach") == 0 ? 0 : strcmp(which, "end") == 0 ? 1 : 2;
	json_t *j = snaps[i] ? NULL : json_loads(text, 0, NULL);
	char err[256];

	(void)ctx;
	if (j && (snaps[i] = mw_snapshot_from_json(j, err, sizeof(err))) && i == 0)
		mw_state_seed(st, snaps[i]);
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct mw_stream_meta m = { .on_snapshot = on_snapshot };
	struct mw_state *st;
	struct mw_run_info ri = { .libc = "?", .runtime = "?" };
	char err[256];
	FILE *f;

	if (!size)
		return 0;
	if (!null && !(null = fopen("/dev/null", "we")))
		return 0;
	mw_quiet(1);
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	st = mw_state_new(0);
	if (mw_stream_replay(f, st, &m, err, sizeof(err)) == 0) {
		mw_state_tracer_lost(st, m.tracer_lost);
		mw_state_finish(st);
		ri.argv = (const char *const *)m.argv;
		ri.snap_attach = snaps[0];
		ri.snap_end = snaps[1];
		ri.snap_exit = snaps[2];
		struct mw_view *v = mw_view_make(st, &ri);

		mw_report_text(null, v);
		mw_report_json(null, v);
		mw_view_free(v);
	}
	fclose(f);
	mw_stream_meta_free(&m);
	mw_state_free(st);
	for (int i = 0; i < 3; i++) {
		mw_snapshot_free(snaps[i]);
		snaps[i] = NULL;
	}
	return 0;
}
