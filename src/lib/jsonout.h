/* jsonout.h - building and writing JSON with jansson, every failure
 * caught.
 *
 * jansson's json_string() and json_pack()'s "s" take UTF-8 only and
 * return NULL for anything else; json_object_set_new() and
 * json_array_append_new() then drop the member silently.  A process's
 * name, a path or a probe name from a stream is bytes, so it goes in
 * through mw_json_str(), and a report is built with mw_json_set() and
 * mw_json_append(), which turn any failure into a NULL document that
 * the writer reports:
 *
 *	json_t *arr = json_array();
 *
 *	for (...)
 *		mw_json_append(&arr, json_pack("{s:o}", "name", mw_json_str(name)));
 *	return arr;			(NULL when anything failed)
 *
 * json_pack()'s "o" fails on a NULL value and releases the other "o"
 * values, so a failure deep inside reaches the top.
 */
#ifndef MALLOCWATCH_JSONOUT_H
#define MALLOCWATCH_JSONOUT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* s as a JSON string (a new reference).  UTF-8 is kept as it is;  a
 * string that is not valid UTF-8 is written with each byte that is not
 * part of a valid sequence as the four characters \xNN and each
 * backslash as \\ (docs/json.md, "Strings"), so the bytes can be told
 * back.  NULL s gives JSON null.  NULL only when out of memory. */
json_t *mw_json_str(const char *s);

/* An address as the string "0x..." (JSON numbers lose precision past
 * 2^53), a new reference; mw_json_addr_known: null when a is 0
 * (unknown).  NULL only when out of memory. */
json_t *mw_json_addr(uint64_t a);
json_t *mw_json_addr_known(uint64_t a);

/* Set obj[key] = v, v a new reference that is stolen.  When v is NULL
 * or setting fails, *obj is released and set to NULL; when *obj is NULL
 * already, v is released.  A key that is not UTF-8 is escaped like a
 * value.  0, or -1 (and *obj NULL). */
int mw_json_set(json_t **obj, const char *key, json_t *v);

/* Append v (stolen) to *arr, with mw_json_set()'s rules. */
int mw_json_append(json_t **arr, json_t *v);

/* Write doc to f with flags (json_dumpf) and JSON_ENSURE_ASCII (every
 * character past U+007F as \uXXXX, so that nothing in it acts on a
 * terminal), then a newline, and flush.  0,
 * or -1 with errno set: ENOMEM when doc is NULL (it could not be built),
 * else the write's error (EIO when none is known).  doc is not
 * released. */
int mw_json_write(const json_t *doc, FILE *f, size_t flags);

#endif /* MALLOCWATCH_JSONOUT_H */
