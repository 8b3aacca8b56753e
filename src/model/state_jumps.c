/* state_jumps.c - the setjmp family's records in the model (state.h:
 * mw_state_jump, mw_state_jump_tuple): each jmp_buf, address and value
 * counted once per key, by the probe that saw it (struct mw_state in
 * state_int.h; the model is built in state_model.c).
 */
#include "idmap.h"
#include "probetab.h"
#include "state.h"
#include "state_int.h"
#include "xalloc.h"

/* Shared with state_model.c (state_int.h), by their short names here. */
#define probe(st, id) mw_state_probe((st), (id))
#define jump_slot(k) mw_state_jump_slot(k)

/* count more for key of kind: the same key's entry when there is one */
static int add_jump(struct mw_state *st, const struct mw_probe_count *p, int id, int kind,
		    int64_t key, uint64_t count)
{
	int slot = jump_slot(p->known);
	struct mw_idmap *ix = slot >= 0 ? &st->jump_ix[slot][kind] : NULL;
	size_t i = ix ? mw_idmap_get(ix, (uint64_t)key) : MW_IDMAP_NONE;

	if (i != MW_IDMAP_NONE) {
		st->jumps[i].count += count;
		return 0;
	}
	XGROW(st->jumps, st->njumps, st->cjumps);
	if (ix)
		mw_idmap_put(ix, (uint64_t)key, st->njumps);
	st->jumps[st->njumps++] = (struct mw_jump){ .id = id, .name = p->name,
		.kind = (enum mw_jump_kind)kind, .key = key, .count = count };
	return 0;
}

int mw_state_jump(struct mw_state *st, int id, int kind, int64_t key, uint64_t count)
{
	struct mw_probe_count *p = probe(st, id);

	if (!p || kind < MW_JUMP_BUF || kind > MW_JUMP_VALUE)
		return -1;
	st->n_jumps[kind]++;
	return add_jump(st, p, id, kind, key, count);
}

int mw_state_jump_tuple(struct mw_state *st, int id, int tid, int64_t buf, int64_t val,
			int64_t ret, uint64_t count)
{
	struct mw_probe_count *p = probe(st, id);

	if (!p || mw_state_hits(st, id, tid, count) < 0)
		return -1;
	st->n_tuples++;
	add_jump(st, p, id, MW_JUMP_BUF, buf, count);
	add_jump(st, p, id, MW_JUMP_ADDR, ret, count);
	if (p->known != MW_P_setjmp)	/* setjmp's second argument is its mask */
		add_jump(st, p, id, MW_JUMP_VALUE, val, count);
	return 0;
}
