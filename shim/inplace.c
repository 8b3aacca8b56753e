/* inplace.c - stapbpf's map updates made in place in its handlers.
 *
 * stapbpf (SystemTap 4.8) compiles every assignment to a map element,
 * `m[k] = v` and `m[k]++` alike, into a BPF_FUNC_map_update_elem call.
 * On a hash map whose key is there, that call hashes the key again, takes
 * the bucket's lock, copies the key and value into a preallocated element,
 * links it in and frees the old one: most of a small handler's time (the
 * heap handlers' mw_h[a1] = packed, the setjmp family's counts).  bpftrace
 * and libbpf tools instead write through the pointer the lookup returned.
 * This file does that to stapbpf's bytecode, where it can prove the
 * update goes to the element a lookup found:
 *
 *   - `m[k]++` (inc_pattern): the value loaded, one added, stored back;
 *     becomes an atomic add through the lookup's pointer;
 *   - `m[k] = v` after `x = m[k]` (store_rewrite): the lookup's pointer is
 *     kept in a stack slot of our own, and the update becomes an 8-byte
 *     store through it when the key was found.
 *
 * A key that was not there takes stapbpf's own path (the update inserts
 * it).  No instruction moves: each changed instruction becomes a jump to
 * a stub appended to the program, which does what the instruction did and
 * jumps back, so no jump offset is touched.  The verifier checks the
 * result; mallocwatch loads the program as stapbpf made it when the
 * verifier refuses (umulti-shim.c).
 *
 * The instruction encoding is the kernel's Documentation/bpf/
 * standardization/instruction-set.rst; the helpers' contracts are
 * include/uapi/linux/bpf.h's; stapbpf's stack layout (the translator's
 * temporaries in [-max_tmp_space, 0), zeroed at entry, the register
 * allocator's spills below) is SystemTap's bpf-internal.h and
 * bpf-opt.cxx (zero_stack).
 */
#include <stdlib.h>
#include <string.h>

#include "inplace.h"

#define IS_JMP(c) (BPF_CLASS(c) == BPF_JMP || BPF_CLASS(c) == BPF_JMP32)
#define LD64 (BPF_LD | BPF_IMM | BPF_DW)

/* stapbpf's `m[k]++` (SystemTap 4.8's bpf-translate.cxx, seen in the
 * objects it makes for mallocwatch's scripts), from the lookup on:
 *
 *	i:   call map_lookup_elem		(r1 the map, r2 the key)
 *	i+1: if r0 == 0 goto MISS
 *	i+2: R = *(u64 *)(r0 + 0)
 *	i+3: r1 = R				(MISS: R = 0; goto i+3)
 *	i+4: R += 1
 *	     ...the key stored again, straight-line stack stores...
 *	     *(u64 *)(r10 + V) = R; r3 = r10; r3 += V	(R not written before)
 *	     r1 = the same map; r4 = 0
 *	k:   call map_update_elem
 *
 * A hit on a key that is there pays a second hashing and a hash map
 * element replaced (a preallocated one taken, the old one freed).  Where
 * the pattern holds exactly, i+2 becomes a jump to a stub appended to the
 * program: r1 = 1; lock *(u64 *)(r0 + 0) += r1; r0 = 0; goto k+1 (the
 * count added in place, as bpftrace does; r1-r5 are dead after the
 * update, r0 its result 0).  A key that is not there takes the path it
 * took.  INC_STUB instructions a pattern. */
#define INC_STUB 4

static int jumps_to(const struct bpf_insn *in, unsigned n, unsigned t)
{
	for (unsigned j = 0; j < n; j++) {
		uint8_t c = in[j].code;

		if (c == (BPF_LD | BPF_IMM | BPF_DW)) {
			j++;
			continue;
		}
		if (!IS_JMP(c) || BPF_OP(c) == BPF_CALL || BPF_OP(c) == BPF_EXIT)
			continue;
		if ((long)j + 1 + in[j].off == (long)t)
			return 1;
	}
	return 0;
}

static int is_map_ld(const struct bpf_insn *x, int fd)
{
	return x[0].code == (BPF_LD | BPF_IMM | BPF_DW) && x[0].dst_reg == 1 &&
	       x[0].src_reg == BPF_PSEUDO_MAP_FD && x[0].imm == fd;
}

/* i: a lookup call; the update call's index if the pattern holds, else 0 */
static unsigned inc_pattern(const struct bpf_insn *in, unsigned n, unsigned i)
{
	unsigned r, miss, k, v_ok = 0;
	int fd, slot = 0;

	if (i < 2 || i + 5 >= n || !is_map_ld(&in[i - 2], in[i - 2].imm))
		return 0;
	fd = in[i - 2].imm;
	r = in[i + 2].dst_reg;
	if (in[i + 1].code != (BPF_JMP | BPF_JEQ | BPF_K) || in[i + 1].dst_reg != 0 ||
	    in[i + 1].imm != 0 || in[i + 1].off <= 0 ||
	    in[i + 2].code != (BPF_LDX | BPF_MEM | BPF_DW) || in[i + 2].src_reg != 0 ||
	    in[i + 2].off != 0 || r < 1 || r > 5 ||
	    in[i + 3].code != (BPF_ALU64 | BPF_MOV | BPF_X) || in[i + 3].dst_reg != 1 ||
	    in[i + 3].src_reg != r ||
	    in[i + 4].code != (BPF_ALU64 | BPF_ADD | BPF_K) || in[i + 4].dst_reg != r ||
	    in[i + 4].imm != 1)
		return 0;
	/* MISS: R = 0; goto i+3 */
	miss = i + 2 + (unsigned)in[i + 1].off;
	if (miss + 1 >= n || in[miss].code != (BPF_ALU64 | BPF_MOV | BPF_K) ||
	    in[miss].dst_reg != r || in[miss].imm != 0 ||
	    in[miss + 1].code != (BPF_JMP | BPF_JA) ||
	    miss + 2 + (unsigned)(long)in[miss + 1].off != i + 3)
		return 0;
	/* straight line to the update: stack stores and loads, arithmetic,
	 * map loads; R written by none of them */
	for (k = i + 5; k < n; k++) {
		const struct bpf_insn *x = &in[k];
		uint8_t c = x->code, cl = BPF_CLASS(c);

		if (c == (BPF_JMP | BPF_CALL))
			break;
		if (c == (BPF_LD | BPF_IMM | BPF_DW)) {
			if ((x->dst_reg == r && !slot) || k + 1 >= n)
				return 0;
			k++;
			continue;
		}
		if (cl == BPF_ALU || cl == BPF_ALU64) {
			if (x->dst_reg == r && !slot)
				return 0;
			if (c == (BPF_ALU64 | BPF_MOV | BPF_X) && x->dst_reg == 3 && x->src_reg == 10)
				v_ok |= 1;
			else if (c == (BPF_ALU64 | BPF_ADD | BPF_K) && x->dst_reg == 3 && (v_ok & 1))
				v_ok |= x->imm == slot && slot ? 2 : 0;
			continue;
		}
		if (cl == BPF_STX && BPF_MODE(c) == BPF_MEM && x->dst_reg == 10) {
			if (c == (BPF_STX | BPF_MEM | BPF_DW) && x->src_reg == r && !slot)
				slot = x->off;
			continue;
		}
		if (cl == BPF_ST && BPF_MODE(c) == BPF_MEM && x->dst_reg == 10)
			continue;
		if (cl == BPF_LDX && BPF_MODE(c) == BPF_MEM && x->src_reg == 10 &&
		    (x->dst_reg != r || slot))
			continue;
		return 0;
	}
	if (k >= n || in[k].imm != BPF_FUNC_map_update_elem || v_ok != 3 || k < i + 8 ||
	    in[k - 1].code != (BPF_ALU64 | BPF_MOV | BPF_K) || in[k - 1].dst_reg != 4 ||
	    in[k - 1].imm != 0 || !is_map_ld(&in[k - 3], fd) ||
	    jumps_to(in, n, i + 2))
		return 0;
	return k;
}

/* `m[k] = v` after a lookup of the same key in the same map.  The shape
 * stapbpf makes (the heap handlers' mw_h[a1], gen.c heap_body):
 *
 *	     *(u64 *)(r10 - 8) = r9	(the key, from a callee-saved register)
 *	     r2 = r10; r2 += -8; r1 = map
 *	L:   call map_lookup_elem
 *	L+1: if r0 == 0 goto MISS
 *	L+2: r8 = *(u64 *)(r0 + 0)
 *	     ...any code that leaves r9 and the map alone...
 *	     *(u64 *)(r10 - 8) = r9; r2 = r10; r2 += -8
 *	     *(u64 *)(r10 - 16) = r3; r3 = r10; r3 += -16
 *	     r1 = map; r4 = 0
 *	U:   call map_update_elem
 *
 * It holds when, for a hash map (BPF_MAP_TYPE_HASH) with 8-byte values:
 * the key at L and at U is stored, in the straight-line code before each
 * call, from the same registers r6-r9 (or the same immediates), chunk by
 * 8-byte chunk; and on no path from L to U is one of those registers
 * written, the map loaded (no other lookup, update or delete of it), or L
 * met again.  The element L found is then the one U replaces: glibc's
 * probes of one heap come from the thread that holds its arena's lock, so
 * no other CPU deletes that key between the two.
 *
 * L+2 becomes a jump to: *(u64 *)(r10 + SLOT) = r0; <L+2>; goto L+3.
 * U becomes a jump to: r0 = *(u64 *)(r10 + SLOT); if r0 == 0 goto CALL;
 * r5 = *(u64 *)(r10 + V); *(u64 *)(r0 + 0) = r5; r0 = 0; goto U+1;
 * CALL: call map_update_elem; goto U+1.  Instruction 0 becomes a jump to:
 * <0>; *(u64 *)(r10 + SLOT) = 0 for each slot; goto 1, so a path that
 * misses L finds 0 there.  The slots lie below the lowest stack offset
 * the program uses.  STORE_STUB and LOAD_STUB instructions a pattern. */
#define STORE_STUB 8
#define LOAD_STUB 3
#define MAX_SLOTS 16
#define KEY_CHUNKS 8		/* keys up to 64 bytes */

/* what the straight-line code before a call left in r1-r4 and the key */
struct call_in {
	int map;		/* r1's map descriptor, -1 unknown */
	unsigned map_ld;	/* the ld_imm64 that set r1 */
	int r2, r3, r4;		/* r2, r3: r10 + this; r4: this; 1 unknown */
	unsigned start;		/* the block's first instruction */
};

struct chunk {
	uint8_t kind;		/* 0 unknown, 1 register, 2 immediate */
	uint8_t reg;
	int32_t imm;
};

#define NCHUNK 64		/* 8-byte stack chunks: r10 - 512 .. r10 - 8 */

static int chunk_of(int off)
{
	return off < -512 || off > -8 || off % 8 ? -1 : (-off / 8) - 1;
}

static void forget_reg(struct chunk *ch, int reg)
{
	for (int c = 0; c < NCHUNK; c++)
		if (ch[c].kind == 1 && ch[c].reg == reg)
			ch[c].kind = 0;
}

static void forget_range(struct chunk *ch, int off, int size)
{
	for (int c = 0; c < NCHUNK; c++) {
		int lo = -8 * (c + 1);

		if (off < lo + 8 && off + size > lo)
			ch[c].kind = 0;
	}
}

static int store_size(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_DW: return 8;
	case BPF_W: return 4;
	case BPF_H: return 2;
	default: return 1;
	}
}

/* Runs the straight-line code that ends at the call at index c (entered
 * only at its first instruction; tgt[i]: some jump goes to i) and fills
 * *ci and ch[] (the stack chunks at the call).  Returns 0, or -1 when the
 * block cannot be read. */
static int before_call(const struct bpf_insn *in, const unsigned char *tgt, unsigned c,
		       struct call_in *ci, struct chunk *ch)
{
	int fp[11];		/* register = r10 + fp[r], or 1 unknown */
	long imm[11];		/* register = imm[r] when known[r] */
	int known[11];
	unsigned b = c;

	/* the block: back to a jump, call or exit; no jump into it but at b */
	while (b > 0) {
		uint8_t pc = in[b - 1].code;

		if (IS_JMP(pc) || tgt[b])
			break;
		/* the second half of an ld_imm64 looks like any instruction */
		if (b >= 2 && in[b - 2].code == LD64)
			b -= 2;
		else
			b--;
	}
	memset(ch, 0, NCHUNK * sizeof(*ch));
	for (int r = 0; r < 11; r++)
		fp[r] = 1, known[r] = 0, imm[r] = 0;
	fp[10] = 0;
	ci->map = -1;
	ci->start = b;
	for (unsigned i = b; i < c; i++) {
		const struct bpf_insn *x = &in[i];
		uint8_t code = x->code, cl = BPF_CLASS(code);
		int d = x->dst_reg;

		if (code == LD64) {
			if (i + 1 >= c || d > 9)
				return -1;
			forget_reg(ch, d);
			fp[d] = 1;
			known[d] = 0;
			if (d == 1 && x->src_reg == BPF_PSEUDO_MAP_FD) {
				ci->map = x->imm;
				ci->map_ld = i;
			} else if (d == 1) {
				ci->map = -1;
			}
			i++;
			continue;
		}
		if (cl == BPF_ST || cl == BPF_STX) {
			int sz = store_size(code), k;

			if (d != 10) {
				/* through a pointer: it may be one into the stack */
				if (fp[d] != 1 || BPF_MODE(code) != BPF_MEM)
					memset(ch, 0, NCHUNK * sizeof(*ch));
				else
					forget_range(ch, fp[d] + x->off, sz);
				continue;
			}
			if (BPF_MODE(code) != BPF_MEM)
				return -1;	/* atomics on the stack: not stapbpf's */
			forget_range(ch, x->off, sz);
			if (sz == 8 && (k = chunk_of(x->off)) >= 0) {
				if (cl == BPF_ST) {
					ch[k].kind = 2;
					ch[k].imm = x->imm;
				} else if (x->src_reg >= 6 && x->src_reg <= 9) {
					ch[k].kind = 1;
					ch[k].reg = x->src_reg;
				}
			}
			continue;
		}
		if (cl == BPF_LDX || cl == BPF_ALU || cl == BPF_ALU64) {
			if (d > 9)
				return -1;
			forget_reg(ch, d);
			if (code == (BPF_ALU64 | BPF_MOV | BPF_X) && x->src_reg == 10) {
				fp[d] = 0, known[d] = 0;
			} else if (code == (BPF_ALU64 | BPF_ADD | BPF_K) && fp[d] != 1) {
				fp[d] += x->imm;
				if (fp[d] > 0 || fp[d] < -512)
					fp[d] = 1;
			} else if (code == (BPF_ALU64 | BPF_MOV | BPF_K)) {
				fp[d] = 1, known[d] = 1, imm[d] = x->imm;
			} else {
				fp[d] = 1, known[d] = 0;
			}
			continue;
		}
		return -1;
	}
	ci->r2 = fp[2];
	ci->r3 = fp[3];
	ci->r4 = known[4] && imm[4] == 0 ? 0 : 1;
	return 0;
}

/* The key at a call: its chunks, sources known, into key[]; 0 or -1. */
static int key_at(const struct call_in *ci, const struct chunk *ch, uint32_t ks,
		  struct chunk *key)
{
	if (ci->r2 == 1 || ks == 0 || ks % 8 || ks > 8 * KEY_CHUNKS)
		return -1;
	for (uint32_t j = 0; j < ks / 8; j++) {
		int k = chunk_of(ci->r2 + 8 * (int)j);

		if (k < 0 || ch[k].kind == 0)
			return -1;
		key[j] = ch[k];
	}
	return 0;
}

/* Every path from L+1 that reaches U: none writes one of regs (a mask),
 * loads map fd (but at U's own ld, skip) or meets L again; 1 if so and U
 * is reached, else 0. */
static int region_clean(const struct bpf_insn *in, unsigned n, unsigned L, unsigned U,
			unsigned regs, int fd, unsigned skip, unsigned char *seen)
{
	unsigned *todo, nt = 0, reached = 0, ok = 1;

	if (!(todo = malloc((2 * n + 2) * sizeof(*todo))))
		return 0;
	memset(seen, 0, n);
	todo[nt++] = L + 1;
	while (nt && ok) {
		unsigned i = todo[--nt];
		const struct bpf_insn *x;
		uint8_t code, cl;

		if (i == U) {
			reached = 1;
			continue;
		}
		if (i >= n || i == L) {
			ok = 0;
			break;
		}
		if (seen[i])
			continue;
		seen[i] = 1;
		x = &in[i];
		code = x->code;
		cl = BPF_CLASS(code);
		if (code == LD64) {
			if ((x->src_reg == BPF_PSEUDO_MAP_FD && x->imm == fd && i != skip) ||
			    (regs >> x->dst_reg & 1))
				ok = 0;
			todo[nt++] = i + 2;
			continue;
		}
		if (IS_JMP(code)) {
			uint8_t op = BPF_OP(code);

			if (op == BPF_EXIT)
				continue;
			if (op == BPF_CALL) {
				if (x->src_reg != 0 || x->imm == BPF_FUNC_tail_call)
					ok = 0;	/* a subprogram or a kfunc: not read */
				todo[nt++] = i + 1;
				continue;
			}
			if (cl == BPF_JMP32 && op == BPF_JA) {
				ok = 0;
				continue;
			}
			todo[nt++] = (unsigned)((long)i + 1 + x->off);
			if (op != BPF_JA)
				todo[nt++] = i + 1;
			continue;
		}
		if ((cl == BPF_ALU || cl == BPF_ALU64 || cl == BPF_LDX) && (regs >> x->dst_reg & 1))
			ok = 0;
		if (cl == BPF_STX && BPF_MODE(code) == BPF_ATOMIC && (x->imm & BPF_FETCH) &&
		    (regs >> x->src_reg & 1))
			ok = 0;
		if (cl == BPF_LD)	/* legacy packet access: not in a uprobe */
			ok = 0;
		todo[nt++] = i + 1;
	}
	free(todo);
	return ok && reached;
}

/* The lowest stack offset the program uses (a multiple of 8, <= 0): its
 * r10-based loads and stores, and r10 + K pointers made in one block
 * (stapbpf's pointers for helpers, inside its zeroed temporaries). */
static int frame_bottom(const struct bpf_insn *in, unsigned n)
{
	int lo = 0, fpreg[11] = { 0 };

	for (unsigned i = 0; i < n; i++) {
		const struct bpf_insn *x = &in[i];
		uint8_t code = x->code, cl = BPF_CLASS(code);

		if (code == LD64) {
			fpreg[x->dst_reg % 11] = 0;
			i++;
			continue;
		}
		if ((cl == BPF_ST || cl == BPF_STX) && x->dst_reg == 10 && x->off < lo)
			lo = x->off;
		if (cl == BPF_LDX && x->src_reg == 10 && x->off < lo)
			lo = x->off;
		if (cl == BPF_ALU64 || cl == BPF_ALU || cl == BPF_LDX) {
			int d = x->dst_reg % 11;

			if (code == (BPF_ALU64 | BPF_MOV | BPF_X) && x->src_reg == 10)
				fpreg[d] = 1;
			else if (code == (BPF_ALU64 | BPF_ADD | BPF_K) && fpreg[d]) {
				if (x->imm < lo)
					lo = x->imm;
			} else
				fpreg[d] = 0;
		}
		if (IS_JMP(code))
			memset(fpreg, 0, sizeof(fpreg));
	}
	return lo - (((lo % 8) + 8) % 8);
}

struct lookup {
	unsigned at;
	struct call_in ci;
	struct chunk ch[NCHUNK];
};

struct rw {
	const struct bpf_insn *in;
	unsigned n;
	struct bpf_insn *out;
	unsigned at;
	unsigned char *taken;	/* instructions a rewrite changed or relies on */
	unsigned char *tgt;	/* instructions some jump goes to */
	unsigned char *seen;	/* region_clean's */
	struct lookup *lk;	/* the lookups whose key and map are known */
	unsigned nlk;
	unsigned slot_of[MAX_SLOTS];	/* the lookup each slot keeps */
	int nslots, bottom;
};

static void emit(struct rw *w, struct bpf_insn x)
{
	w->out[w->at++] = x;
}

static void jump_back(struct rw *w, unsigned to)
{
	emit(w, (struct bpf_insn){ .code = BPF_JMP | BPF_JA,
				   .off = (int16_t)((long)to - (long)w->at - 1) });
}

static void jump_out(struct rw *w, unsigned from)
{
	w->out[from] = (struct bpf_insn){ .code = BPF_JMP | BPF_JA,
					  .off = (int16_t)((long)w->at - (long)from - 1) };
}

static int slot_off(const struct rw *w, int s)
{
	return w->bottom - 8 * (s + 1);
}

/* The lookup L's slot, made (and L+2 rewritten) at its first use; -1 if
 * L cannot keep its pointer. */
static int slot_for(struct rw *w, unsigned L)
{
	const struct bpf_insn *in = w->in;
	uint8_t c2;

	for (int s = 0; s < w->nslots; s++)
		if (w->slot_of[s] == L)
			return s;
	if (w->nslots == MAX_SLOTS || slot_off(w, w->nslots) < -512 || L + 3 >= w->n ||
	    w->taken[L + 2] || in[L + 1].code != (BPF_JMP | BPF_JEQ | BPF_K) ||
	    in[L + 1].dst_reg != 0 || in[L + 1].imm != 0 || w->tgt[L + 2])
		return -1;
	c2 = in[L + 2].code;
	if (IS_JMP(c2) || BPF_CLASS(c2) == BPF_LD)
		return -1;
	w->slot_of[w->nslots] = L;
	w->taken[L + 2] = 1;
	jump_out(w, L + 2);
	emit(w, (struct bpf_insn){ .code = BPF_STX | BPF_MEM | BPF_DW, .dst_reg = 10,
				   .src_reg = 0, .off = (int16_t)slot_off(w, w->nslots) });
	emit(w, in[L + 2]);
	jump_back(w, L + 3);
	return w->nslots++;
}

static int is_call(const struct bpf_insn *x, int fn)
{
	return x->code == (BPF_JMP | BPF_CALL) && x->src_reg == 0 && x->imm == fn;
}

/* An update of an array map (BPF_MAP_TYPE_ARRAY: stapbpf's globals, its
 * internal map as bpfobj.h makes it) with 8-byte values, r2 and r3
 * pointers into the stack and r4 0 (BPF_ANY), the way stapbpf sets them up
 * for every `g = v` of a global:
 *
 *	     *(u32 *)(r10 - 12) = 6; r2 = r10; r2 += -12
 *	     *(u64 *)(r10 - 8) = r8; r3 = r10; r3 += -8
 *	     r1 = globals; r4 = 0
 *	U:   call map_update_elem
 *
 * An array's element never moves or goes, and for an index in range
 * array_map_update_elem copies the value into it (kernel/bpf/arraymap.c);
 * the lookup of an array the verifier turns into a bounds check and an
 * address (array_map_gen_lookup).  So U becomes a jump to:
 *
 *	call map_lookup_elem; if r0 == 0 goto OLD
 *	r5 = *(u64 *)(r10 - 8); *(u64 *)(r0 + 0) = r5; r0 = 0; goto U+1
 *	OLD: r1 = globals; r2 = r10; r2 += -12; r3 = r10; r3 += -8; r4 = 0
 *	call map_update_elem; goto U+1
 *
 * (an index out of range takes the update, which refuses it as before).
 * ARRAY_STUB instructions an update.  Returns 1 if U was rewritten. */
#define ARRAY_STUB 15

static int array_store(struct rw *w, unsigned U, const struct call_in *ci,
		       const struct mw_inplace_map *m)
{
	const struct bpf_insn *in = w->in;

	if (m->type != BPF_MAP_TYPE_ARRAY || m->value_size != 8 || ci->r2 == 1 ||
	    ci->r3 == 1 || ci->r3 % 8 || ci->r4 != 0)
		return 0;
	w->taken[U] = 1;
	jump_out(w, U);
	emit(w, (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem });
	emit(w, (struct bpf_insn){ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 0, .off = 4 });
	emit(w, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = 5, .src_reg = 10,
				   .off = (int16_t)ci->r3 });
	emit(w, (struct bpf_insn){ .code = BPF_STX | BPF_MEM | BPF_DW, .dst_reg = 0, .src_reg = 5 });
	emit(w, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 });
	jump_back(w, U + 1);
	emit(w, in[ci->map_ld]);
	emit(w, in[ci->map_ld + 1]);
	emit(w, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 });
	emit(w, (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = ci->r2 });
	emit(w, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 3, .src_reg = 10 });
	emit(w, (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 3, .imm = ci->r3 });
	emit(w, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 4 });
	emit(w, in[U]);
	jump_back(w, U + 1);
	return 1;
}

/* U: an update call; rewritten when a lookup of its key is found (a
 * hash map's) or its map is an array (array_store). */
static void store_rewrite(struct rw *w, unsigned U, mw_inplace_map_fn map_info,
			  struct mw_inplace_stats *st)
{
	const struct bpf_insn *in = w->in;
	struct chunk ch[NCHUNK], key[KEY_CHUNKS], lkey[KEY_CHUNKS];
	struct call_in ci;
	struct mw_inplace_map m;
	unsigned regs = 0;

	if (w->taken[U] || before_call(in, w->tgt, U, &ci, ch) < 0 || ci.map < 0 ||
	    ci.r3 == 1 || ci.r4 != 0 || chunk_of(ci.r3) < 0 || map_info(ci.map, &m) < 0 ||
	    (array_store(w, U, &ci, &m) && ++st->arrays) ||
	    m.type != BPF_MAP_TYPE_HASH || m.value_size != 8 ||
	    key_at(&ci, ch, m.key_size, key) < 0 ||
	    (ci.r3 < ci.r2 + (int)m.key_size && ci.r3 + 8 > ci.r2))
		return;	/* (the last: the value overlaps the key) */
	for (uint32_t j = 0; j < m.key_size / 8; j++)
		if (key[j].kind == 1)
			regs |= 1u << key[j].reg;
	for (unsigned i = 0; i < w->nlk; i++) {
		const struct lookup *l = &w->lk[i];
		int s;

		if (l->ci.map != ci.map || key_at(&l->ci, l->ch, m.key_size, lkey) < 0 ||
		    memcmp(lkey, key, m.key_size / 8 * sizeof(*key)) != 0 ||
		    !region_clean(in, w->n, l->at, U, regs, ci.map, ci.map_ld, w->seen) ||
		    (s = slot_for(w, l->at)) < 0)
			continue;
		w->taken[U] = 1;
		jump_out(w, U);
		emit(w, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = 0,
					   .src_reg = 10, .off = (int16_t)slot_off(w, s) });
		emit(w, (struct bpf_insn){ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 0,
					   .off = 4 });
		emit(w, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = 5,
					   .src_reg = 10, .off = (int16_t)ci.r3 });
		emit(w, (struct bpf_insn){ .code = BPF_STX | BPF_MEM | BPF_DW, .dst_reg = 0,
					   .src_reg = 5 });
		emit(w, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 });
		jump_back(w, U + 1);
		emit(w, in[U]);
		jump_back(w, U + 1);
		st->stores++;
		return;
	}
}

/* The lookups' maps and keys, read once; 0 or -1 (no memory). */
static int find_lookups(struct rw *w)
{
	unsigned nl = 0;

	for (unsigned i = 0; i < w->n; i++)
		nl += is_call(&w->in[i], BPF_FUNC_map_lookup_elem);
	if (!(w->lk = malloc((nl + 1) * sizeof(*w->lk))))
		return -1;
	for (unsigned i = 0; i < w->n; i++) {
		struct lookup *l = &w->lk[w->nlk];

		if (w->in[i].code == LD64) {
			i++;
			continue;
		}
		if (!is_call(&w->in[i], BPF_FUNC_map_lookup_elem) ||
		    before_call(w->in, w->tgt, i, &l->ci, l->ch) < 0 || l->ci.map < 0 ||
		    l->ci.r2 == 1)
			continue;
		l->at = i;
		w->nlk++;
	}
	return 0;
}

struct bpf_insn *mw_inplace(const struct bpf_insn *in, unsigned n, unsigned *out_n,
			    mw_inplace_map_fn map_info, struct mw_inplace_stats *st)
{
	struct mw_inplace_stats none = { 0, 0, 0 };
	struct rw w = { .in = in, .n = n };
	unsigned calls = 0, cap;

	if (!st)
		st = &none;
	*st = none;
	for (unsigned i = 0; i < n; i++)
		calls += in[i].code == (BPF_JMP | BPF_CALL);
	cap = n + calls * (INC_STUB + ARRAY_STUB + LOAD_STUB) + MAX_SLOTS + 2;
	/* every jump to and from a stub must fit the 16-bit offset */
	if (!calls || cap > INT16_MAX || !(w.out = malloc(cap * sizeof(*w.out))) ||
	    !(w.taken = calloc(n, 1)) || !(w.seen = malloc(n)) || !(w.tgt = calloc(n + 1, 1)))
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		const struct bpf_insn *x = &in[i];
		long t = (long)i + 1 + x->off;

		if (x->code == LD64)
			i++;
		else if (IS_JMP(x->code) && BPF_OP(x->code) != BPF_CALL &&
			 BPF_OP(x->code) != BPF_EXIT && t >= 0 && t <= (long)n)
			w.tgt[t] = 1;
	}
	memcpy(w.out, in, n * sizeof(*w.out));
	w.at = n;
	w.bottom = frame_bottom(in, n);
	/* `m[k]++` first: its lookups and updates are then taken */
	for (unsigned i = 0; i < n; i++) {
		unsigned k;

		if (in[i].code != (BPF_JMP | BPF_CALL) || in[i].imm != BPF_FUNC_map_lookup_elem ||
		    !(k = inc_pattern(in, n, i)))
			continue;
		w.taken[i + 2] = w.taken[k] = 1;
		jump_out(&w, i + 2);
		emit(&w, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 1,
					    .imm = 1 });
		emit(&w, (struct bpf_insn){ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = 0,
					    .src_reg = 1, .imm = BPF_ADD });
		emit(&w, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 });
		jump_back(&w, k + 1);
		st->incs++;
	}
	if (map_info && n > 1 && !IS_JMP(in[0].code) && in[0].code != LD64 && !w.tgt[0]) {
		if (find_lookups(&w) < 0)
			goto fail;
		for (unsigned i = 0; i < n; i++) {
			if (in[i].code == LD64) {
				i++;
				continue;
			}
			if (is_call(&in[i], BPF_FUNC_map_update_elem) && !w.taken[i])
				store_rewrite(&w, i, map_info, st);
		}
		if (w.nslots) {
			/* each slot 0 until its lookup finds the key */
			jump_out(&w, 0);
			emit(&w, in[0]);
			for (int s = 0; s < w.nslots; s++)
				emit(&w, (struct bpf_insn){ .code = BPF_ST | BPF_MEM | BPF_DW,
							    .dst_reg = 10,
							    .off = (int16_t)slot_off(&w, s) });
			jump_back(&w, 1);
		}
	}
	if (w.at == n)
		goto fail;
	free(w.taken);
	free(w.seen);
	free(w.tgt);
	free(w.lk);
	*out_n = w.at;
	return w.out;
fail:
	free(w.out);
	free(w.taken);
	free(w.seen);
	free(w.tgt);
	free(w.lk);
	return NULL;
}
