/* cmd_options.c - option values the commands share (cmd.h). */
#include <errno.h>
#include <stdlib.h>

#include "cmd.h"
#include "msg.h"

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
