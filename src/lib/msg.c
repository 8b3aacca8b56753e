/* msg.c - one-line messages on stderr; see msg.h. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"

static int quiet;

void mw_quiet(int on)
{
	quiet = on;
}

int mw_is_quiet(void)
{
	return quiet;
}

/* Format into a buffer first so the whole line goes out in one write.
 * Whatever a caller forgot to quote, no control byte reaches the
 * terminal: the line is made safe (mw_quote's rules, backslashes left
 * as they are, since quoted parts carry them already). */
static void vsay(const char *kind, const char *fmt, va_list ap, const char *after)
{
	char buf[1024], safe[1024 + 8], tmp[8];
	size_t k = 0, used;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (const char *p = buf; *p && k + 8 < sizeof(safe); p += used) {
		size_t n = mw_quote_char(p, tmp, &used, 0);

		memcpy(safe + k, tmp, n);
		k += n;
	}
	safe[k] = '\0';
	fprintf(stderr, "mallocwatch: %s%s\n%s", kind, safe, after);
}

void mw_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap, "");
	va_end(ap);
}

void mw_warn(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vsay("warning: ", fmt, ap, "");
	va_end(ap);
}

void mw_note(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vsay("", fmt, ap, "");
	va_end(ap);
}

size_t mw_utf8_len(const char *p, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)p;
	uint32_t c;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07u;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	/* overlong forms, UTF-16 surrogates, past U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) ||
	    c > 0x10ffff)
		return 0;
	if (cp)
		*cp = c;
	return n;
}

/* Characters a terminal acts on, or that reorder what is shown: C1
 * controls (U+009B is CSI, like ESC [) and the bidirectional overrides
 * and isolates (CVE-2021-42574). */
static int unsafe_char(uint32_t c)
{
	return c < 0xa0 || (c >= 0x200e && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069);
}

size_t mw_quote_char(const char *s, char out[8], size_t *used, int backslash)
{
	unsigned char c = (unsigned char)*s;
	uint32_t cp;
	size_t n;

	*used = 1;
	if (c == '\\' && backslash) {
		memcpy(out, "\\\\", 2);
		return 2;
	}
	if (c >= 0x20 && c < 0x7f) {
		out[0] = (char)c;
		return 1;
	}
	if ((n = mw_utf8_len(s, &cp)) && !unsafe_char(cp)) {
		memcpy(out, s, n);
		*used = n;
		return n;
	}
	return (size_t)snprintf(out, 8, "\\x%02x", c);
}

const char *mw_quote(const char *s, char *buf, size_t len)
{
	size_t k = 0, used;
	char tmp[8];

	if (!s)
		s = "?";
	while (*s) {
		size_t n = mw_quote_char(s, tmp, &used, 1);

		if (k + n + 4 > len) {
			memcpy(buf + k, "...", 4);
			return buf;
		}
		memcpy(buf + k, tmp, n);
		k += n;
		s += used;
	}
	buf[k] = '\0';
	return buf;
}

int mw_fputs_quoted(const char *s, FILE *f)
{
	size_t used;
	char tmp[8];

	if (!s)
		s = "?";
	while (*s) {
		size_t n = mw_quote_char(s, tmp, &used, 1);

		if (fwrite(tmp, 1, n, f) != n)
			return EOF;
		s += used;
	}
	return 0;
}

noreturn void mw_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap, "");
	va_end(ap);
	exit(status);
}

static const char *usage_cmd;

void mw_usage_command(const char *name)
{
	usage_cmd = name;
}

noreturn void mw_usage_error(const char *fmt, ...)
{
	char hint[64];
	va_list ap;

	snprintf(hint, sizeof(hint), "Try 'mallocwatch %s%s--help'.\n", usage_cmd ? usage_cmd : "",
		 usage_cmd ? " " : "");
	va_start(ap, fmt);
	vsay("", fmt, ap, hint);
	va_end(ap);
	exit(MW_EXIT_USAGE);
}

noreturn void mw_bad_option(int c, char *const *argv)
{
	const char *arg = optind > 0 && argv[optind - 1] ? argv[optind - 1] : "";

	if (c == ':')
		mw_usage_error("option '%s' needs an argument", arg);
	/* a long one: unknown, ambiguous (a prefix of two), or given an
	 * argument it does not take; getopt says not which */
	if (strncmp(arg, "--", 2) == 0 && strchr(arg, '='))
		mw_usage_error("bad option '%s' (unknown, or it takes no argument)", arg);
	if (strncmp(arg, "--", 2) == 0)
		mw_usage_error("unknown option '%s'", arg);
	if (optopt > 0 && optopt < 128 && isgraph(optopt))
		mw_usage_error("unknown option '-%c'", optopt);
	mw_usage_error("unknown option '%s'", arg);
}
