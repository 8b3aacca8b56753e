/* jsonout.c - JSON building and writing with every failure caught; see
 * jsonout.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "msg.h"

/* Is s valid UTF-8 (what jansson accepts)? */
static int utf8_valid(const char *s)
{
	while (*s) {
		size_t n = (unsigned char)*s < 0x80 ? 1 : mw_utf8_len(s, NULL);

		if (!n)
			return 0;
		s += n;
	}
	return 1;
}

/* A copy of s (not valid UTF-8) with the bytes of invalid sequences as
 * \xNN and backslashes as \\; NULL when out of memory. */
static char *escape_utf8(const char *s)
{
	char *out = malloc(strlen(s) * 4 + 1), *o = out;

	if (!out)
		return NULL;
	while (*s) {
		size_t n = mw_utf8_len(s, NULL);

		if (*s == '\\') {
			*o++ = '\\';
			*o++ = *s++;
		} else if ((unsigned char)*s < 0x80 || n) {
			n = n ? n : 1;
			memcpy(o, s, n);
			o += n;
			s += n;
		} else {
			o += sprintf(o, "\\x%02x", (unsigned char)*s++);
		}
	}
	*o = '\0';
	return out;
}

json_t *mw_json_str(const char *s)
{
	json_t *j;
	char *e;

	if (!s)
		return json_null();
	if (utf8_valid(s))
		return json_string(s);
	if (!(e = escape_utf8(s)))
		return NULL;
	j = json_string(e);
	free(e);
	return j;
}

int mw_json_set(json_t **obj, const char *key, json_t *v)
{
	char *e = NULL;
	int ret = -1;

	if (*obj && v && !utf8_valid(key))
		key = e = escape_utf8(key);
	if (*obj && v && key) {
		ret = json_object_set_new(*obj, key, v);	/* releases v when it fails */
		v = NULL;
	}
	free(e);
	json_decref(v);
	if (ret < 0) {
		json_decref(*obj);
		*obj = NULL;
	}
	return ret < 0 ? -1 : 0;
}

int mw_json_append(json_t **arr, json_t *v)
{
	int ret = -1;

	if (*arr && v) {
		ret = json_array_append_new(*arr, v);	/* releases v when it fails */
		v = NULL;
	}
	json_decref(v);
	if (ret < 0) {
		json_decref(*arr);
		*arr = NULL;
	}
	return ret < 0 ? -1 : 0;
}

int mw_json_write(const json_t *doc, FILE *f, size_t flags)
{
	if (!doc) {
		errno = ENOMEM;
		return -1;
	}
	errno = 0;
	/* ASCII only: a C1 control (U+009B is CSI) in a name would reach a
	 * terminal raw from `--json -` otherwise */
	if (json_dumpf(doc, f, flags | JSON_ENSURE_ASCII) == 0 && fputc('\n', f) != EOF && fflush(f) == 0 &&
	    !ferror(f))
		return 0;
	if (!errno)
		errno = EIO;
	return -1;
}

json_t *mw_json_addr(uint64_t a)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, a);
	return json_string(buf);
}

json_t *mw_json_addr_known(uint64_t a)
{
	return a ? mw_json_addr(a) : json_null();
}
