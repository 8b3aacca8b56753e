/* state_finish.c - the model finished at the stream's end (state.h:
 * mw_state_finish, mw_state_full_tables): the script's tables that were
 * full named, merged arenas dropped, each arena's heaps counted, the main
 * thread attached to main_arena (struct mw_state in state_int.h; the
 * model is built in state_model.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "probetab.h"
#include "protocol.h"
#include "state.h"
#include "state_int.h"
#include "units.h"

/* Shared with state_model.c (state_int.h), by their short names here. */
#define probe_known(st, k) mw_state_probe_known((st), (k))
#define attach(st, tid, addr, how) mw_state_attach((st), (tid), (addr), (how))

/* Note table name when count reached its size. */
static void full_table(struct mw_state *st, size_t count, size_t size, const char *name)
{
	size_t n = strlen(st->full);

	if (count >= size)
		snprintf(st->full + n, sizeof(st->full) - n, "%s%s (%zu)", n ? ", " : "", name,
			 size);
}

const char *mw_state_full_tables(const struct mw_state *st)
{
	return st->full;
}

/* Name the script's tables that were full (st->full). */
static void note_full_tables(struct mw_state *st)
{
	struct mw_probe_count *freed;
	uint64_t nfreed;

	st->full[0] = '\0';
	full_table(st, st->n_hits, MW_MAP_HITS, "hits per probe and thread");
	/* H/G records: one streamed with each memory_heap_free, the rest
	 * from the end's table of heaps.  A stream may hold more frees than
	 * H records (a free with no H record after it): none from the end,
	 * not 2^64 of them */
	freed = probe_known(st, MW_P_memory_heap_free);
	nfreed = freed ? freed->received : 0;
	full_table(st, st->n_heap_records > nfreed ? st->n_heap_records - (size_t)nfreed : 0,
		   MW_MAP_HEAPS, "heaps");
	full_table(st, st->n_waits, MW_MAP_WAITS, "waits per thread and arena");
	full_table(st, st->n_jumps[1], MW_MAP_JUMPS, "jmp_bufs");
	full_table(st, st->n_jumps[2], MW_MAP_JUMPS, "setjmp/longjmp addresses");
	full_table(st, st->n_jumps[3], MW_MAP_JUMPS, "longjmp values");
	full_table(st, st->n_tuples, MW_MAP_JUMPS, "setjmp/longjmp (thread, jmp_buf, value, "
		   "address) tuples");
}

/* Each arena's heaps and heap bytes: main_arena's from sbrk, the others'
 * from their live heaps, a heap no record attributed going to the arena
 * of its creating thread (rule 3). */
static void count_heaps(struct mw_state *st)
{
	for (size_t i = 0; i < st->nheaps; i++)
		if (!st->heap_rule[i] && st->heap_guess[i])
			st->heaps[i].arena = st->heap_guess[i];
	for (size_t i = 0; i < st->narenas; i++) {
		struct mw_arena *a = &st->arenas[i];

		a->nheaps = 0;
		a->heap_bytes = 0;
		if (a->is_main) {
			a->heap_bytes = a->bytes_at_attach + st->sbrk.grown - st->sbrk.trimmed;
			continue;
		}
		for (size_t j = 0; j < st->nheaps; j++)
			if (!st->heaps[j].freed && st->heaps[j].arena == a->addr) {
				a->nheaps++;
				/* held (units.h): a hostile stream's sizes */
				a->heap_bytes = mw_count_add(a->heap_bytes, st->heaps[j].size);
			}
	}
}

/* The main thread starts on main_arena without any probe: attach it
 * there, first in the list, when it was seen and attached nowhere. */
static void main_thread_attach(struct mw_state *st)
{
	struct mw_thread *main_t = NULL;

	for (size_t i = 0; i < st->nthreads; i++)
		if (st->threads[i].tid == st->pid)
			main_t = &st->threads[i];
	if (main_t && !main_t->arena && main_t->hits) {
		struct mw_arena *m = &st->arenas[0];

		main_t->arena = m->addr;
		attach(st, st->pid, m->addr, MW_ATTACH_IMPLICIT);
		if (m->natt > 1) {	/* it came first: list it first */
			struct mw_attachment first = m->att[m->natt - 1];

			memmove(m->att + 1, m->att, (m->natt - 1) * sizeof(*m->att));
			first.seq = 0;
			m->att[0] = first;
		}
	}
}

void mw_state_finish(struct mw_state *st)
{
	size_t k = 0;

	mw_state_samples_finish(st);
	note_full_tables(st);
	for (size_t i = 0; i < st->narenas; i++)	/* drop merged duplicates */
		if (st->arenas[i].addr != UINT64_MAX)
			st->arenas[k++] = st->arenas[i];
		else
			free(st->arenas[i].att);
	st->narenas = k;
	mw_idmap_clear(&st->arena_ix);
	for (size_t i = 0; i < st->narenas; i++)
		if (st->arenas[i].addr)
			mw_idmap_put(&st->arena_ix, st->arenas[i].addr, i);
	count_heaps(st);
	main_thread_attach(st);
}
