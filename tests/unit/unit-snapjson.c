/* unit-snapjson.c - a snapshot (snapshot.h) through the JSON a saved
 * stream keeps (report_snap.h: mw_snapshot_json_value, then
 * mw_snapshot_from_json): the same JSON again, and objects that are not
 * such a snapshot refused with a reason, never a crash. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report_snap.h"
#include "snapshot.h"
#include "unit.h"
#include "xalloc.h"

static struct mw_snapshot *made(void)
{
	struct mw_snapshot *s = xcalloc(1, sizeof(*s));

	s->pid = 4242;
	snprintf(s->libc, sizeof(s->libc), "/lib/libc.so.6");
	snprintf(s->dwarf_file, sizeof(s->dwarf_file), "/usr/lib/debug/libc.so.6.debug");
	s->glibc_minor = 36;
	s->taken_ns = 1790000000123456789ULL;
	s->duration_ns = 1234567;
	s->tries = 2;
	s->consistent = 1;
	s->stops = 1;
	s->stopped_ns = 89000;
	s->settle_rounds = 3;
	s->narenas = 2;
	s->arenas = xcalloc(2, sizeof(*s->arenas));
	s->arenas[0] = (struct mw_snap_arena){ .addr = 0x7f0000001c60, .is_main = 1,
		.system_mem = 135168, .max_system_mem = 200704, .top = 0x55550000a000,
		.top_size = 4096, .fast_count = 3, .fast_bytes = 96, .rest_count = 5,
		.rest_bytes = 9000, .free_bytes = 9096, .trimmable = 4096, .attached_threads = 1 };
	s->arenas[1] = (struct mw_snap_arena){ .addr = 0x7f0008000030, .system_mem = 270336,
		.max_system_mem = 270336, .top = 0x7f0008012340, .top_size = 8192,
		.free_bytes = 8192, .attached_threads = 0, .on_free_list = 1, .nheaps = 2,
		.heap_bytes = 3 * 65536, .heap_mprotect = 2 * 65536 };
	s->arenas[1].heaps = xcalloc(2, sizeof(*s->arenas[1].heaps));
	s->arenas[1].heaps[0] = (struct mw_snap_heap){ 0x7f0008000000, 131072, 65536 };
	s->arenas[1].heaps[1] = (struct mw_snap_heap){ 0x7f0004000000, 65536, 65536 };
	s->narenas_glibc = 2;
	s->trim_threshold = 131072;
	s->top_pad = 131072;
	s->mmap_threshold = 131072;
	s->arena_max = 0;
	s->arena_test = 8;
	s->n_mmaps = 4;
	s->n_mmaps_max = 65536;
	s->max_n_mmaps = 6;
	s->no_dyn_threshold = 1;
	s->mmapped_mem = 4 << 20;
	s->max_mmapped_mem = 6 << 20;
	s->sbrk_base = 0x555500000000;
	s->main_end = 0x555500021000;
	s->brk = 0x555500021000;
	s->system_bytes = 405504;
	s->free_bytes = 17288;
	s->in_use_bytes = 405504 - 17288;
	s->trimmable = 4096;
	return s;
}

/* o with key (a path of object keys, '.' between) replaced by v (NULL:
 * removed); a new object. */
static json_t *with(const json_t *o, const char *key, json_t *v)
{
	json_t *c = json_deep_copy(o), *at = c;
	char k[64], *dot;

	snprintf(k, sizeof(k), "%s", key);
	while ((dot = strchr(key, '.'))) {
		snprintf(k, sizeof(k), "%.*s", (int)(dot - key), key);
		at = json_object_get(at, k);
		key = dot + 1;
		snprintf(k, sizeof(k), "%s", key);
	}
	if (v)
		json_object_set_new(at, k, v);
	else
		json_object_del(at, k);
	return c;
}

static void refused(const json_t *o, const char *what)
{
	char err[256] = "";
	struct mw_snapshot *s = mw_snapshot_from_json(o, err, sizeof(err));

	CHECK(!s && err[0], "%s: taken as a snapshot", what);
	mw_snapshot_free(s);
}

int main(void)
{
	struct mw_snapshot *s = made(), *back;
	json_t *j = mw_snapshot_json_value(s, "?"), *j2, *bad;
	char err[256] = "";

	CHECK(j != NULL, "the JSON of a snapshot");
	back = mw_snapshot_from_json(j, err, sizeof(err));
	CHECK(back != NULL, "read back: %s", err);
	if (back) {
		j2 = mw_snapshot_json_value(back, "?");
		CHECK(json_equal(j, j2), "the same JSON again");
		CHECK(back->narenas == 2 && back->arenas[1].nheaps == 2 &&
		      back->arenas[1].heaps[1].addr == 0x7f0004000000 &&
		      back->arenas[1].on_free_list && back->no_dyn_threshold &&
		      back->taken_ns == s->taken_ns, "the fields");
		json_decref(j2);
	}
	refused(json_null(), "null");
	refused(json_string("x"), "a string");
	bad = with(j, "arenas", NULL);
	refused(bad, "no arenas");
	json_decref(bad);
	bad = with(j, "thresholds.mmap", json_string("128K"));
	refused(bad, "a threshold of another type");
	json_decref(bad);
	bad = with(j, "main_heap.brk", json_string("0xZZ"));
	refused(bad, "an address that is not hex");
	json_decref(bad);
	bad = with(j, "main_heap.brk", json_string("0x"));
	refused(bad, "an empty address");
	json_decref(bad);
	bad = with(j, "totals.free_bytes", json_integer(-1));
	refused(bad, "a negative count");
	json_decref(bad);
	bad = json_deep_copy(j);
	json_object_set_new(json_array_get(json_object_get(bad, "arenas"), 1), "heaps",
			    json_string("many"));
	refused(bad, "heaps that are not an array");
	json_decref(bad);
	bad = json_deep_copy(j);
	{
		json_t *h = json_object_get(json_array_get(json_object_get(bad, "arenas"), 1),
					    "heaps");

		json_object_del(json_array_get(h, 1), "size");
	}
	refused(bad, "a heap without its size");
	json_decref(bad);
	json_decref(j);
	mw_snapshot_free(s);
	mw_snapshot_free(back);
	if (!failed)
		printf("all passed\n");
	return failed ? 1 : 0;
}
