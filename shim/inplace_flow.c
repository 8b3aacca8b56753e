/* inplace_flow.c - what the rewrite's proofs (inplace.c) read of a
 * program, without running it: what the straight-line code before a
 * call leaves in r1-r4 and in the stack's 8-byte chunks (the map and the
 * key of a lookup or an update), the control flow (each instruction's
 * successors; an order that puts each instruction after every one that
 * can lead to it, or the cycle that forbids one), and the lowest stack
 * offset the program uses, below which the rewrite keeps its slots.
 *
 * Take stapbpf's key store and lookup before the heap handlers' update
 * (inplace.c has the whole shape):
 *
 *	*(u64 *)(r10 - 8) = r9; r2 = r10; r2 += -8; r1 = map
 *	call map_lookup_elem
 *
 * The block before the call leaves r1 = map's descriptor, r2 = r10 - 8,
 * and the chunk at r10 - 8 holding callee-saved r9 (SYM_REG 9): the key,
 * named so that the same store before the update is seen to be the same
 * key.  The encoding is the kernel's Documentation/bpf/standardization/
 * instruction-set.rst.
 */
#include <stdlib.h>
#include <string.h>

#include "inplace_int.h"

static const struct sym none;

/* the state of one block: what each register and chunk holds, which
 * registers are r10 + fp[r] (1: not known), which hold a known imm */
struct blk {
	struct sym rs[11];
	long fp[11];
	int known[11];
	long imm[11];
};

/* Register r changed: what named its old value names nothing now. */
static void kill_reg(struct call_in *ci, struct blk *b, int r)
{
	for (int c = 0; c < NCHUNK; c++)
		if (ci->ch[c].kind == SYM_REG && ci->ch[c].reg == r)
			ci->ch[c] = none;
	for (int i = 0; i < 11; i++)
		if (b->rs[i].kind == SYM_REG && b->rs[i].reg == r)
			b->rs[i] = none;
}

/* [off, off + size) of the stack written: its chunks, and what named the
 * slots it overlaps, name nothing now.  size 0: all of the stack. */
static void kill_stack(struct call_in *ci, struct blk *b, long off, int size)
{
	for (int c = 0; c < NCHUNK; c++) {
		long lo = -8L * (c + 1);

		if (!size || (off < lo + 8 && off + size > lo))
			ci->ch[c] = none;
		if (ci->ch[c].kind == SYM_SLOT &&
		    (!size || (off < ci->ch[c].slot + 8 && off + size > ci->ch[c].slot)))
			ci->ch[c] = none;
	}
	for (int i = 0; i < 11; i++)
		if (b->rs[i].kind == SYM_SLOT &&
		    (!size || (off < b->rs[i].slot + 8 && off + size > b->rs[i].slot)))
			b->rs[i] = none;
}

/* What register s holds, as a symbol: a callee-saved register by its
 * name (the same however it was set, in this block or another), unless
 * this block loaded it from a stack slot it has not written since (then,
 * as any register, by that slot: a key reloaded chunk by chunk through
 * one register, as stapbpf does for a key of four locals, names its
 * slots, which a later write of the register does not change); another
 * register by what it was loaded or copied from */
static struct sym sym_of(const struct blk *b, int s)
{
	if (s >= 6 && s <= 9 && b->rs[s].kind != SYM_SLOT)
		return (struct sym){ .kind = SYM_REG, .reg = (uint8_t)s };
	return b->rs[s];
}

/* A store into the stack or through a pointer (no register written but
 * a fetching atomic's); -1 if it cannot be followed. */
static int blk_store(struct call_in *ci, struct blk *b, const struct bpf_insn *x)
{
	uint8_t code = x->code, cl = BPF_CLASS(code);
	int d = x->dst_reg, s = x->src_reg, sz = store_size(code), k;

	if (BPF_MODE(code) == BPF_ATOMIC && (x->imm & BPF_FETCH)) {
		int w = x->imm == BPF_CMPXCHG ? 0 : s;

		kill_reg(ci, b, w);
		b->rs[w] = none, b->fp[w] = 1, b->known[w] = 0;
	}
	if (d != 10) {
		/* through a pointer: it may be one into the stack */
		if (BPF_MODE(code) != BPF_MEM || b->fp[d] == 1)
			kill_stack(ci, b, 0, 0);
		else
			kill_stack(ci, b, b->fp[d] + x->off, sz);
		return 0;
	}
	if (BPF_MODE(code) != BPF_MEM)
		return -1;	/* atomics on the stack: not stapbpf's */
	kill_stack(ci, b, x->off, sz);
	if (sz == 8 && (k = chunk_of(x->off)) >= 0) {
		if (cl == BPF_ST)
			ci->ch[k] = (struct sym){ .kind = SYM_IMM, .imm = x->imm };
		else
			ci->ch[k] = sym_of(b, s);
	}
	return 0;
}

/* An instruction that writes register d (ALU, ALU64, LDX) */
static void blk_write(struct call_in *ci, struct blk *b, const struct bpf_insn *x)
{
	uint8_t code = x->code;
	int d = x->dst_reg, s = x->src_reg, k;
	struct sym v = none;
	long fp = 1, imm = 0;
	int known = 0;

	if (code == (BPF_ALU64 | BPF_MOV | BPF_X) && x->off) {
		/* a sign-extending move (or an address space cast): a new value */
	} else if (code == (BPF_ALU64 | BPF_MOV | BPF_X) && s == 10) {
		fp = 0;
	} else if (code == (BPF_ALU64 | BPF_MOV | BPF_X)) {
		v = sym_of(b, s);
		fp = b->fp[s], known = b->known[s], imm = b->imm[s];
	} else if (code == (BPF_ALU64 | BPF_ADD | BPF_K) && b->fp[d] != 1) {
		fp = b->fp[d] + x->imm;
		if (fp > 0 || fp < -512)
			fp = 1;
	} else if (code == (BPF_ALU64 | BPF_MOV | BPF_K)) {
		v = (struct sym){ .kind = SYM_IMM, .imm = x->imm };
		known = 1, imm = x->imm;
	} else if (code == (BPF_LDX | BPF_MEM | BPF_DW) && s == 10 &&
		   (k = chunk_of(x->off)) >= 0) {
		/* the chunk's symbol, or the slot itself: when nothing of
		 * the chunk is known, and when it holds d's own value (d
		 * stored and read back: d is still the slot's content,
		 * which its old name no longer says once d is written) */
		v = ci->ch[k].kind != SYM_NONE &&
		    !(ci->ch[k].kind == SYM_REG && ci->ch[k].reg == d) ? ci->ch[k] :
		    (struct sym){ .kind = SYM_SLOT, .slot = x->off };
	}
	kill_reg(ci, b, d);
	if (v.kind == SYM_REG && v.reg == d)
		v = none;	/* its old value, gone */
	b->rs[d] = v, b->fp[d] = fp, b->known[d] = known, b->imm[d] = imm;
}

int mw_inplace_before_call(const struct bpf_insn *in, const unsigned char *tgt, unsigned c,
			   struct call_in *ci)
{
	struct blk b;
	unsigned start = c;

	/* the block: back to a jump, call or exit; no jump into it but at
	 * its start */
	while (start > 0) {
		if (IS_JMP(in[start - 1].code) || tgt[start])
			break;
		/* the second half of an ld_imm64 looks like any instruction */
		if (start >= 2 && in[start - 2].code == LD64)
			start -= 2;
		else
			start--;
	}
	memset(ci, 0, sizeof(*ci));
	memset(&b, 0, sizeof(b));
	for (int r = 0; r < 11; r++)
		b.fp[r] = 1;
	b.fp[10] = 0;
	ci->map = -1;
	for (unsigned i = start; i < c; i++) {
		const struct bpf_insn *x = &in[i];
		uint8_t cl = BPF_CLASS(x->code);
		int d = x->dst_reg;

		if (d > 10 || x->src_reg > 10)
			return -1;
		if (x->code == LD64) {
			if (i + 1 >= c || d > 9)
				return -1;
			kill_reg(ci, &b, d);
			b.rs[d] = none, b.fp[d] = 1, b.known[d] = 0;
			if (d == 1) {
				ci->map = x->src_reg == BPF_PSEUDO_MAP_FD ? x->imm : -1;
				ci->map_ld = i;
			}
			i++;
			continue;
		}
		if (cl == BPF_ST || cl == BPF_STX) {
			if (blk_store(ci, &b, x) < 0)
				return -1;
			continue;
		}
		if (cl == BPF_LDX || cl == BPF_ALU || cl == BPF_ALU64) {
			if (d > 9)
				return -1;
			if (d == 1)
				ci->map = -1;	/* r1 is no map now */
			blk_write(ci, &b, x);
			continue;
		}
		return -1;
	}
	ci->r2 = b.fp[2] == 1 ? 1 : (int)b.fp[2];
	ci->r3 = b.fp[3] == 1 ? 1 : (int)b.fp[3];
	ci->r4 = b.known[4] && b.imm[4] == 0 ? 0 : 1;
	return 0;
}

int mw_inplace_key_at(const struct call_in *ci, uint32_t ks, struct sym *key)
{
	if (ci->r2 == 1 || ks == 0 || ks % 8 || ks > 8 * KEY_CHUNKS)
		return -1;
	for (uint32_t j = 0; j < ks / 8; j++) {
		int k = chunk_of(ci->r2 + 8 * (long)j);

		if (k < 0 || ci->ch[k].kind == SYM_NONE)
			return -1;
		key[j] = ci->ch[k];
	}
	return 0;
}

int mw_inplace_successors(const struct bpf_insn *in, unsigned n, unsigned i, unsigned *next)
{
	uint8_t code = in[i].code, op = BPF_OP(code);
	long t = (long)i + 1 + in[i].off;

	if (code == LD64) {
		next[0] = i + 2;
		return i + 2 <= n ? 1 : -1;
	}
	if (!IS_JMP(code) || op == BPF_CALL) {
		next[0] = i + 1;
		return 1;
	}
	if (op == BPF_EXIT)
		return 0;
	if (BPF_CLASS(code) == BPF_JMP32 && op == BPF_JA)
		return -1;
	if (t < 0 || t >= (long)n)
		return -1;
	next[0] = (unsigned)t;
	if (op == BPF_JA)
		return 1;
	next[1] = i + 1;
	return 2;
}

int mw_inplace_flow_order(const struct bpf_insn *in, unsigned n, unsigned *order, unsigned *no)
{
	unsigned char *color = calloc(n + 1, 1);	/* 0 new, 1 on the path, 2 done */
	unsigned *stack = malloc((n + 1) * sizeof(*stack)), *edge = malloc((n + 1) * sizeof(*edge));
	unsigned sp = 0;
	int ret = 0;

	*no = 0;
	if (!color || !stack || !edge) {
		ret = -1;
		goto out;
	}
	stack[sp] = 0, edge[sp++] = 0;
	color[0] = 1;
	while (sp && !ret) {
		unsigned i = stack[sp - 1], next[2];
		int k = i < n ? mw_inplace_successors(in, n, i, next) : 0;

		if (k < 0) {
			ret = 1;
		} else if (edge[sp - 1] < (unsigned)k) {
			unsigned t = next[edge[sp - 1]++];

			if (t < n && color[t] == 1)
				ret = 1;
			else if (t < n && color[t] == 0)
				color[t] = 1, stack[sp] = t, edge[sp++] = 0;
		} else {
			color[i] = 2;
			order[(*no)++] = i;
			sp--;
		}
	}
out:
	free(color);
	free(stack);
	free(edge);
	return ret;
}

/* mw_inplace_frame_bottom's state at an instruction: which registers and 8-byte
 * stack chunks hold r10 + K (K), none (NOFP) or either, by the path
 * (MIXED) */
#define NOFP 1L
#define MIXED 2L

struct fstate {
	long fp[11], slot[NCHUNK];
	int set;
};

static void fmerge(struct fstate *to, const struct fstate *from)
{
	if (!to->set) {
		*to = *from;
		return;
	}
	for (int r = 0; r < 11; r++)
		if (to->fp[r] != from->fp[r])
			to->fp[r] = MIXED;
	for (int c = 0; c < NCHUNK; c++)
		if (to->slot[c] != from->slot[c])
			to->slot[c] = MIXED;
}

/* One instruction on the state; *lo the least stack address seen; -1
 * where a pointer is used or changed in a way not followed. */
static int fstep(struct fstate *st, const struct bpf_insn *x, long *lo)
{
	uint8_t code = x->code, cl = BPF_CLASS(code);
	int d = x->dst_reg, s = x->src_reg, k;
	long at;

	if (code == LD64) {
		st->fp[d] = NOFP;
		return 0;
	}
	if (cl == BPF_ST || cl == BPF_STX) {
		if (st->fp[d] == MIXED || (cl == BPF_STX && st->fp[s] == MIXED))
			return -1;
		at = st->fp[d] == NOFP ? NOFP : st->fp[d] + x->off;
		if (at != NOFP && at < *lo)
			*lo = at;
		if (d == 10 && (k = chunk_of(x->off)) >= 0)
			st->slot[k] = code == (BPF_STX | BPF_MEM | BPF_DW) ? st->fp[s] : NOFP;
		else if (d == 10)
			for (int c = 0; c < NCHUNK; c++)
				if (x->off < -8L * c && x->off + 8 > -8L * (c + 1))
					st->slot[c] = NOFP;
		return 0;
	}
	if (cl == BPF_LDX) {
		if (st->fp[s] == MIXED)
			return -1;
		at = st->fp[s] == NOFP ? NOFP : st->fp[s] + x->off;
		if (at != NOFP && at < *lo)
			*lo = at;
		k = s == 10 ? chunk_of(x->off) : -1;
		st->fp[d] = k >= 0 && code == (BPF_LDX | BPF_MEM | BPF_DW) ? st->slot[k] : NOFP;
		return 0;
	}
	if (cl == BPF_ALU || cl == BPF_ALU64) {
		int src_fp = BPF_SRC(code) == BPF_X && st->fp[s] != NOFP;

		if (code == (BPF_ALU64 | BPF_MOV | BPF_X) && !x->off)
			st->fp[d] = st->fp[s];
		else if (BPF_OP(code) == BPF_MOV && BPF_SRC(code) == BPF_K)
			st->fp[d] = NOFP;	/* a new value, whatever d held */
		else if (code == (BPF_ALU64 | BPF_ADD | BPF_K) && st->fp[d] != NOFP &&
			 st->fp[d] != MIXED)
			st->fp[d] += x->imm;
		else if (code == (BPF_ALU64 | BPF_SUB | BPF_K) && st->fp[d] != NOFP &&
			 st->fp[d] != MIXED)
			st->fp[d] -= x->imm;
		else if (st->fp[d] != NOFP || src_fp)
			return -1;	/* other arithmetic on a stack pointer */
		if (st->fp[d] != NOFP && st->fp[d] != MIXED) {
			if (st->fp[d] > 0 || st->fp[d] < -512)
				return -1;
			if (st->fp[d] < *lo)
				*lo = st->fp[d];
		}
		return 0;
	}
	if (code == (BPF_JMP | BPF_CALL))
		for (int r = 0; r <= 5; r++)
			st->fp[r] = NOFP;
	return 0;
}

int mw_inplace_frame_bottom(const struct bpf_insn *in, unsigned n, const unsigned *order,
			    unsigned no)
{
	struct fstate *st = calloc(n + 1, sizeof(*st));
	long lo = 0;
	int ret = -520;

	if (!st)
		goto out;
	for (int r = 0; r < 11; r++)
		st[0].fp[r] = NOFP;
	for (int c = 0; c < NCHUNK; c++)
		st[0].slot[c] = NOFP;
	st[0].fp[10] = 0;
	st[0].set = 1;
	while (no--) {
		unsigned i = order[no], next[2];
		struct fstate cur = st[i];
		int k;

		if (!cur.set || in[i].dst_reg > 10 || in[i].src_reg > 10 ||
		    fstep(&cur, &in[i], &lo) < 0)
			goto out;
		k = mw_inplace_successors(in, n, i, next);
		for (int j = 0; j < k; j++)
			if (next[j] < n)
				fmerge(&st[next[j]], &cur);
	}
	if (lo >= -512)
		ret = (int)(lo - (((lo % 8) + 8) % 8));
out:
	free(st);
	return ret;
}
