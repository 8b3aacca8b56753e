/* cmd_options.c - option values the commands share (cmd.h). */
#include <errno.h>
#include <stdlib.h>

#include "cmd.h"
#include "msg.h"
#include "snapshot.h"

long mw_seconds_option(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v > 0) || v > 86400)
		mw_usage_error("%s needs a number of seconds (up to 86400), not '%s'", opt, s);
	return (long)(v * 1000 + 0.5) ? (long)(v * 1000 + 0.5) : 1;
}

/* A number of ms, 1 to 86400000, for opt; else a usage error. */
static long ms_option(const char *opt, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < 1 || v > 86400000)
		mw_usage_error("%s needs a number of milliseconds (1 to 86400000), not '%s'", opt, s);
	return v;
}

void mw_stop_option(int c, const char *arg)
{
	char *end;
	double v;

	switch (c) {
	case MW_OPT_MAX_STOP:
		mw_snapshot_stop_bounds(ms_option("--max-stop", arg), 0, -1);
		break;
	case MW_OPT_MAX_STOPPED:
		mw_snapshot_stop_bounds(0, ms_option("--max-stopped", arg), -1);
		break;
	default:
		errno = 0;
		v = strtod(arg, &end);
		if (end == arg || *end || errno || !(v >= 0) || v > 100)
			mw_usage_error("--max-stopped-share needs a percentage (0 to 100), not '%s'",
				       arg);
		mw_snapshot_stop_bounds(0, 0, v);
	}
}
