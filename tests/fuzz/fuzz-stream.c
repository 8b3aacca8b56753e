/* fuzz-stream.c - libFuzzer harness for saved streams: header check,
 * metadata, the line protocol parser (src/model/stream.c), the state model
 * (src/model/state_model.c) and both reports (src/report/report.c,
 * src/report/report_json.c), all on one input.
 * Seeds: corpus-stream/ (the recorded streams of tests/streams, and
 * regressions). */
#include <stdint.h>
#include <stdio.h>

#include "msg.h"
#include "report.h"
#include "state.h"
#include "stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct mw_stream_meta m;
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
		mw_report_text(null, st, &ri);
		mw_report_json(null, st, &ri);
	}
	fclose(f);
	mw_stream_meta_free(&m);
	mw_state_free(st);
	return 0;
}
