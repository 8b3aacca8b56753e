/* view_timeline.c - the run over time (view.h's struct mw_view_timeline),
 * copied from the model once, for the HTML page: the allocator's
 * readings and their arenas, the timeline's markers, and each arena's
 * threads attached.  E.g. tests/golden/html/lanes.mw's main_arena has
 * { tid 4242, how new, ns ... } first.
 */
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "view.h"
#include "view_int.h"
#include "xalloc.h"

_Static_assert((int)MW_VIEW_ATTACH_NEW == (int)MW_ATTACH_NEW &&
	       (int)MW_VIEW_ATTACH_REUSE == (int)MW_ATTACH_REUSE &&
	       (int)MW_VIEW_ATTACH_FREE_LIST == (int)MW_ATTACH_FREE_LIST &&
	       (int)MW_VIEW_ATTACH_IMPLICIT == (int)MW_ATTACH_IMPLICIT,
	       "the view's attach kinds are the model's");

/* The readings and their arenas. */
static void readings(struct mw_view_timeline *tl, const struct mw_state *st)
{
	const struct mw_sample *s = mw_state_samples(st, &tl->nr);
	const struct mw_sample_arena *sa = mw_state_sample_arenas(st, &tl->narenas);

	tl->r = xcalloc(tl->nr + 1, sizeof(*tl->r));
	for (size_t i = 0; i < tl->nr; i++)
		tl->r[i] = (struct mw_view_reading){ .ns = s[i].ns, .sbrk_base = s[i].sbrk_base,
			.main_end = s[i].main_end, .first = s[i].first, .n = s[i].n,
			.waits = s[i].waits, .have_waits = s[i].have_waits,
			.have_mem = s[i].have_mem, .mmapped = s[i].mmapped,
			.n_mmaps = s[i].n_mmaps, .rss = s[i].rss };
	tl->arenas = xcalloc(tl->narenas + 1, sizeof(*tl->arenas));
	for (size_t i = 0; i < tl->narenas; i++)
		tl->arenas[i] = (struct mw_view_reading_arena){ .arena = sa[i].arena,
								.system = sa[i].system };
}

void mw_view_timeline_make(struct mw_view *v)
{
	struct mw_view_timeline *tl = &v->tl;
	const struct mw_mark *m = mw_state_marks(v->st, &tl->nm);
	size_t na = (size_t)v->fig[MW_VF_arenas].v;

	readings(tl, v->st);
	tl->m = xcalloc(tl->nm + 1, sizeof(*tl->m));
	for (size_t i = 0; i < tl->nm; i++) {
		tl->m[i] = (struct mw_view_mark){ .ns = m[i].ns, .known = m[i].known,
						  .name = m[i].name, .tid = m[i].tid };
		memcpy(tl->m[i].arg, m[i].arg, sizeof(tl->m[i].arg));
	}
	tl->att = xcalloc(na + 1, sizeof(*tl->att));
	for (size_t a = 0; a < na; a++) {
		const struct mw_arena *ar = &v->ar[a];

		tl->att[a] = xcalloc(ar->natt + 1, sizeof(*tl->att[a]));
		for (size_t j = 0; j < ar->natt; j++)
			tl->att[a][j] = (struct mw_view_attach){ .tid = ar->att[j].tid,
				.how = (enum mw_view_attach_how)ar->att[j].how,
				.seq = ar->att[j].seq, .ns = ar->att[j].ns };
	}
	tl->natt_rows = na;
}

void mw_view_timeline_free(struct mw_view_timeline *tl)
{
	for (size_t a = 0; tl->att && a < tl->natt_rows; a++)
		free(tl->att[a]);
	free(tl->att);
	free(tl->r);
	free(tl->arenas);
	free(tl->m);
}
