/* output.c - output files; see output.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "msg.h"
#include "output.h"

FILE *mw_output_create(const char *path, int dash_ok)
{
	FILE *f;

	if (dash_ok && strcmp(path, "-") == 0)
		return stdout;
	if (!(f = fopen(path, "we")))
		mw_error("cannot create '%s': %s", path, strerror(errno));
	return f;
}

int mw_output_close(FILE *f, const char *path, int err)
{
	int bad;

	errno = 0;
	bad = fflush(f) != 0 || ferror(f);
	err = err ? err : errno;
	if (f != stdout && f != stderr) {
		bad |= fclose(f) != 0;
		err = err ? err : errno;
	}
	if (bad || err) {
		mw_error("cannot write '%s': %s", path, strerror(err ? err : EIO));
		return -1;
	}
	return 0;
}

void mw_xml_escape(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default: fputc(*s, out);
		}
	}
}
