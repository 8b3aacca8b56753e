/* msg.c - one-line messages on stderr; see msg.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

static int quiet;

void mw_quiet(int on)
{
	quiet = on;
}

/* Format into a buffer first so the whole line goes out in one write. */
static void vsay(const char *kind, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "mallocwatch: %s%s\n", kind, buf);
}

void mw_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

void mw_warn(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vsay("warning: ", fmt, ap);
	va_end(ap);
}

void mw_note(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

const char *mw_quote(const char *s, char *buf, size_t len)
{
	size_t k = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char tmp[8];
		int n = c == '\\' ? snprintf(tmp, sizeof(tmp), "\\\\") :
			c >= 0x20 && c < 0x7f ? snprintf(tmp, sizeof(tmp), "%c", c) :
			snprintf(tmp, sizeof(tmp), "\\x%02x", c);

		if (k + (size_t)n + 4 > len) {
			memcpy(buf + k, "...", 4);
			return buf;
		}
		memcpy(buf + k, tmp, (size_t)n);
		k += (size_t)n;
	}
	buf[k] = '\0';
	return buf;
}

noreturn void mw_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
	exit(status);
}

noreturn void mw_usage_error(const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "mallocwatch: %s\nTry 'mallocwatch --help'.\n", buf);
	exit(MW_EXIT_USAGE);
}
