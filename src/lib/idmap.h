/* idmap.h - a map from 64-bit keys to array indexes.
 *
 * The state model keeps its threads, arenas, heaps and probes in arrays
 * (the reports read them as arrays); an idmap finds an element by its
 * key - thread id, arena or heap address, probe id - in constant time
 * instead of a scan, so a stream with many short-lived threads costs
 * linear, not quadratic, time.  Open addressing with linear probing,
 * sized in powers of two, kept at most 3/4 full.  Any key is allowed,
 * 0 included.  Not thread-safe.
 */
#ifndef MALLOCWATCH_IDMAP_H
#define MALLOCWATCH_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define MW_IDMAP_NONE SIZE_MAX	/* "no such key" */

struct mw_idmap {
	uint64_t *keys;
	size_t *vals;		/* index + 1; 0 marks an empty slot */
	size_t cap, n;		/* slots (a power of two, or 0) and keys held */
};

/* An empty map needs no allocation: struct mw_idmap m = { 0 }. */

/* The index stored for key, or MW_IDMAP_NONE. */
size_t mw_idmap_get(const struct mw_idmap *m, uint64_t key);

/* Store index for key, replacing what key had.  index < SIZE_MAX.
 * Exits on out-of-memory (xalloc.h). */
void mw_idmap_put(struct mw_idmap *m, uint64_t key, size_t index);

/* Forget every key; the map stays usable. */
void mw_idmap_clear(struct mw_idmap *m);

/* Free the map's memory; it is empty and usable afterwards. */
void mw_idmap_free(struct mw_idmap *m);

#endif /* MALLOCWATCH_IDMAP_H */
