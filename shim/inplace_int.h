/* inplace_int.h - what inplace.c (the rewrite) and inplace_flow.c (what
 * the rewrite's proofs read of a program) share.  Not a public interface:
 * inplace.h is.  Built into umulti-shim.so, whose exports these are not. */
#ifndef MALLOCWATCH_INPLACE_INT_H
#define MALLOCWATCH_INPLACE_INT_H

#include <linux/bpf.h>
#include <stdint.h>

#define IS_JMP(c) (BPF_CLASS(c) == BPF_JMP || BPF_CLASS(c) == BPF_JMP32)
#define LD64 (BPF_LD | BPF_IMM | BPF_DW)
#define KEY_CHUNKS 8		/* keys up to 64 bytes */
#define NCHUNK 64		/* 8-byte stack chunks: r10 - 512 .. r10 - 8 */

/* What a register or an 8-byte stack chunk holds, as far as the
 * straight-line code before a call shows it: the value a callee-saved
 * register r6-r9 holds now (SYM_REG), an immediate (SYM_IMM), or the 8
 * bytes a stack slot holds now (SYM_SLOT, the content of r10 + slot). */
enum { SYM_NONE, SYM_REG, SYM_IMM, SYM_SLOT };

struct sym {
	uint8_t kind, reg;
	int16_t slot;
	int32_t imm;
};

/* what the straight-line code before a call left in r1-r4 and the stack */
struct call_in {
	int map;		/* r1's map descriptor, -1 unknown */
	unsigned map_ld;	/* the ld_imm64 that set r1 */
	int r2, r3, r4;		/* r2, r3: r10 + this; r4: this; 1 unknown */
	struct sym ch[NCHUNK];	/* the stack's 8-byte chunks */
};

static inline int chunk_of(long off)
{
	return off < -512 || off > -8 || off % 8 ? -1 : (int)(-off / 8) - 1;
}

static inline int store_size(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_DW: return 8;
	case BPF_W: return 4;
	case BPF_H: return 2;
	default: return 1;
	}
}

#pragma GCC visibility push(hidden)	/* not exported from the preloaded shim */

/* Runs the straight-line code that ends at the call at index c (entered
 * only at its first instruction; tgt[i]: some jump goes to i) and fills
 * *ci.  Returns 0, or -1 when the block cannot be read. */
int mw_inplace_before_call(const struct bpf_insn *in, const unsigned char *tgt, unsigned c,
			   struct call_in *ci);

/* The key at a call: its chunks, what each holds known, into key[]; 0 or
 * -1. */
int mw_inplace_key_at(const struct call_in *ci, uint32_t ks, struct sym *key);

/* The instructions control goes to after i: into next[0..1]; their
 * number, or -1 for what is not followed (a gotol, a jump out of the
 * program). */
int mw_inplace_successors(const struct bpf_insn *in, unsigned n, unsigned i, unsigned *next);

/* The instructions reachable from 0 in depth-first postorder, into
 * order[] (room for n), their number in *no: read backwards, each comes
 * after every instruction that can lead to it.  1 when the control flow
 * has a cycle (an edge back to an instruction on the search's path) or
 * cannot be followed, else 0; -1 without memory. */
int mw_inplace_flow_order(const struct bpf_insn *in, unsigned n, unsigned *order, unsigned *no);

/* The lowest stack offset the program uses, a multiple of 8, <= 0; or
 * -520 (no slot fits) where a pointer into the stack is used in a way not
 * followed.  Read along the control flow (the program has no cycle:
 * mw_inplace_flow_order), instructions in an order that puts each after
 * all that can come before it, the states of paths that meet merged:
 * r10-based loads and stores, and pointers r10 + K however made (copies,
 * sums, spills and reloads), the least of each.  order[0..no):
 * mw_inplace_flow_order()'s.  stapbpf keeps its pointers into the stack
 * inside its temporaries, which it zeroes at entry. */
int mw_inplace_frame_bottom(const struct bpf_insn *in, unsigned n, const unsigned *order,
			    unsigned no);

#pragma GCC visibility pop

#endif /* MALLOCWATCH_INPLACE_INT_H */
