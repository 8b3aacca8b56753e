/* idmap.c - 64-bit key to index map; see idmap.h. */
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "xalloc.h"

/* splitmix64's finalizer: thread ids and page-aligned addresses differ
 * mostly in a few bits; this spreads them over the whole word. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t slot(const struct mw_idmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = (size_t)mix(key) & mask;

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

size_t mw_idmap_get(const struct mw_idmap *m, uint64_t key)
{
	size_t i;

	if (!m->n)
		return MW_IDMAP_NONE;
	i = slot(m, key);
	return m->vals[i] ? m->vals[i] - 1 : MW_IDMAP_NONE;
}

static void rehash(struct mw_idmap *m, size_t ncap)
{
	struct mw_idmap old = *m;

	m->keys = xcalloc(ncap, sizeof(*m->keys));
	m->vals = xcalloc(ncap, sizeof(*m->vals));
	m->cap = ncap;
	for (size_t i = 0; i < old.cap; i++) {
		if (old.vals[i]) {
			size_t j = slot(m, old.keys[i]);

			m->keys[j] = old.keys[i];
			m->vals[j] = old.vals[i];
		}
	}
	free(old.keys);
	free(old.vals);
}

void mw_idmap_put(struct mw_idmap *m, uint64_t key, size_t index)
{
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3)
		rehash(m, m->cap ? m->cap * 2 : 64);
	i = slot(m, key);
	if (!m->vals[i]) {
		m->keys[i] = key;
		m->n++;
	}
	m->vals[i] = index + 1;
}

void mw_idmap_clear(struct mw_idmap *m)
{
	if (m->cap)
		memset(m->vals, 0, m->cap * sizeof(*m->vals));
	m->n = 0;
}

void mw_idmap_free(struct mw_idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
