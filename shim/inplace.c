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
 *   - `m[k] = v` after `x = m[k]`, `m[k]++` included (store_rewrite): the
 *     lookup's pointer is kept in a stack slot of our own, and the update
 *     becomes an 8-byte store of the value it would have written, through
 *     that pointer, when the key was found;
 *   - an array's `m[k] = v` (array_store): the lookup, which the verifier
 *     inlines for an array, and the store.
 *
 * Programs with a cycle in their control flow, a `gotol` (JMP32 JA) or a
 * register number past r10 are left as they are.
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
 *
 * What the proofs read of a program (the code before a call, the control
 * flow, the frame's bottom) is inplace_flow.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "inplace.h"
#include "inplace_int.h"

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
 * call, from the same registers r6-r9 (or the same immediates, or the
 * same stack slots, read into any register in that code and not written
 * since), chunk by 8-byte chunk; and on no path from L to U is one of
 * those registers or slots written, the map loaded (no other lookup,
 * update or delete of it), or L met again.  The element L found is then
 * the one U replaces: glibc's probes of one heap come from the thread
 * that holds its arena's lock, so no other CPU deletes that key between
 * the two.
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

static int sym_eq(const struct sym *a, const struct sym *b)
{
	return a->kind == b->kind && a->reg == b->reg && a->slot == b->slot && a->imm == b->imm;
}

struct lookup {
	unsigned at;
	struct call_in ci;
};

/* The program's maps, as map_info() gave them */
#define MAX_MAPS 64

struct maps {
	int fd[MAX_MAPS];
	struct mw_inplace_map m[MAX_MAPS];
	unsigned n;
};

static const struct mw_inplace_map *map_of(const struct maps *maps, int fd)
{
	for (unsigned i = 0; i < maps->n; i++)
		if (maps->fd[i] == fd)
			return &maps->m[i];
	return NULL;
}

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
	struct maps maps;
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

enum { WALK_ON, WALK_END, WALK_FAIL };

/* Follows every path from instruction from, each instruction once:
 * visit(w, i, ctx) says whether the path goes on past i (WALK_ON), ends
 * at i (WALK_END) or fails (WALK_FAIL).  1 when no path failed or left
 * the program, else 0 (and without memory).  Uses w->seen. */
static int flow_walk(struct rw *w, unsigned from, int (*visit)(struct rw *, unsigned, void *),
		void *ctx)
{
	unsigned *todo, nt = 0, ok = 1, n = w->n;

	if (!(todo = malloc((2 * n + 2) * sizeof(*todo))))
		return 0;
	memset(w->seen, 0, n);
	todo[nt++] = from;
	while (nt && ok) {
		unsigned i = todo[--nt], next[2];
		int k, v;

		if (i >= n) {
			ok = 0;
			break;
		}
		if (w->seen[i])
			continue;
		w->seen[i] = 1;
		if ((v = visit(w, i, ctx)) == WALK_FAIL)
			ok = 0;
		else if (v == WALK_ON && (k = mw_inplace_successors(w->in, n, i, next)) < 0)
			ok = 0;
		else if (v == WALK_ON)
			for (int j = 0; j < k; j++)
				todo[nt++] = next[j];
	}
	free(todo);
	return ok;
}

/* After the load at i (x = *(u64 *)(r0 + 0)), is the element's address
 * dead: on every path r0 written before it is read (an exit reads it)?
 * A write through it after the update would land in the map where the
 * update would have replaced the element. */
static int r0_visit(struct rw *w, unsigned j, void *ctx)
{
	const struct bpf_insn *x = &w->in[j];
	uint8_t cl = BPF_CLASS(x->code);

	(void)ctx;
	if (x->code == (BPF_JMP | BPF_CALL))
		return WALK_END;	/* r0 is the helper's now */
	if (x->code == LD64)
		return x->dst_reg == 0 ? WALK_END : WALK_ON;
	if (x->code == (BPF_JMP | BPF_EXIT))
		return WALK_FAIL;	/* it returns r0 */
	if (IS_JMP(x->code))	/* a condition reads its registers */
		return BPF_OP(x->code) != BPF_JA && (x->dst_reg == 0 ||
		       (BPF_SRC(x->code) == BPF_X && x->src_reg == 0)) ? WALK_FAIL : WALK_ON;
	if (cl == BPF_ST || cl == BPF_STX)
		return x->dst_reg == 0 || (cl == BPF_STX && x->src_reg == 0) ? WALK_FAIL : WALK_ON;
	if (cl == BPF_LDX)
		return x->src_reg == 0 ? WALK_FAIL : x->dst_reg == 0 ? WALK_END : WALK_ON;
	if (cl == BPF_ALU || cl == BPF_ALU64) {
		/* read: a source r0, or r0 by an op other than mov (reads its dst) */
		if ((BPF_SRC(x->code) == BPF_X && x->src_reg == 0) ||
		    (x->dst_reg == 0 && BPF_OP(x->code) != BPF_MOV))
			return WALK_FAIL;
		return x->dst_reg == 0 ? WALK_END : WALK_ON;
	}
	return WALK_FAIL;
}

static int r0_dead(struct rw *w, unsigned i)
{
	return w->in[i].dst_reg == 0 || flow_walk(w, i + 1, r0_visit, NULL);
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
	if (c2 != (BPF_LDX | BPF_MEM | BPF_DW) || in[L + 2].src_reg != 0 || !r0_dead(w, L + 2))
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

/* May the call at i run between a lookup of map fd and its update?
 * Map helpers of another map whose r1 its block loads; helpers that
 * touch no map and (when nslots, stack slots name the key) no stack. */
static int call_ok(const struct rw *w, unsigned i, int fd, int nslots)
{
	const struct bpf_insn *x = &w->in[i];
	struct call_in ci;

	if (x->src_reg != 0)	/* a subprogram or a kfunc: not read */
		return 0;
	switch (x->imm) {
	case BPF_FUNC_map_lookup_elem:
	case BPF_FUNC_map_update_elem:
	case BPF_FUNC_map_delete_elem:
		return mw_inplace_before_call(w->in, w->tgt, i, &ci) == 0 && ci.map >= 0 &&
		       ci.map != fd;
	case BPF_FUNC_ktime_get_ns:
	case BPF_FUNC_get_current_pid_tgid:
	case BPF_FUNC_perf_event_output:
		return 1;
	case BPF_FUNC_probe_read:
	case BPF_FUNC_probe_read_user:
	case BPF_FUNC_probe_read_kernel:
		return !nslots;	/* they write a buffer on the stack */
	default:
		return 0;
	}
}

/* Every path from L+1 that reaches U: none writes one of regs (a mask)
 * or, when nslots, the stack at slots[] or anything through a pointer;
 * none loads map fd (but U's own ld_imm64, skip) or calls what call_ok()
 * refuses, or meets L again.  1 if so and U is reached, else 0. */
/* region_clean's question, and whether U was reached */
struct region {
	unsigned L, U, regs, skip, reached;
	const long *slots;
	int nslots, fd;
};

static int region_visit(struct rw *w, unsigned i, void *ctx)
{
	struct region *r = ctx;
	const struct bpf_insn *x = &w->in[i];
	uint8_t cl = BPF_CLASS(x->code);

	if (i == r->U) {
		r->reached = 1;
		return WALK_END;
	}
	if (i == r->L)
		return WALK_FAIL;
	if (x->code == LD64) {
		if ((x->src_reg == BPF_PSEUDO_MAP_FD && x->imm == r->fd && i != r->skip) ||
		    (r->regs >> x->dst_reg & 1))
			return WALK_FAIL;
	} else if (IS_JMP(x->code)) {
		if (BPF_OP(x->code) == BPF_CALL && !call_ok(w, i, r->fd, r->nslots))
			return WALK_FAIL;
	} else if (cl == BPF_ALU || cl == BPF_ALU64 || cl == BPF_LDX) {
		if (r->regs >> x->dst_reg & 1)
			return WALK_FAIL;
	} else if (cl == BPF_ST || cl == BPF_STX) {
		if (BPF_MODE(x->code) == BPF_ATOMIC && (x->imm & BPF_FETCH) &&
		    (r->regs >> (x->imm == BPF_CMPXCHG ? 0 : x->src_reg) & 1))
			return WALK_FAIL;
		for (int j = 0; j < r->nslots; j++)
			if (x->dst_reg != 10 || (x->off < r->slots[j] + 8 &&
						 x->off + store_size(x->code) > r->slots[j]))
				return WALK_FAIL;
	} else {
		return WALK_FAIL;	/* legacy packet access: not in a uprobe */
	}
	return WALK_ON;
}

static int region_clean(struct rw *w, unsigned L, unsigned U, unsigned regs,
			const long *slots, int nslots, int fd, unsigned skip)
{
	struct region r = { .L = L, .U = U, .regs = regs, .skip = skip, .slots = slots,
			    .nslots = nslots, .fd = fd };

	return flow_walk(w, L + 1, region_visit, &r) && r.reached;
}

/* U: an update call; rewritten when a lookup of its key is found (a
 * hash map's) or its map is an array (array_store). */
static void store_rewrite(struct rw *w, unsigned U, struct mw_inplace_stats *st)
{
	const struct bpf_insn *in = w->in;
	struct sym key[KEY_CHUNKS], lkey[KEY_CHUNKS];
	struct call_in ci;
	const struct mw_inplace_map *mp;
	struct mw_inplace_map m;
	unsigned regs = 0;
	long slots[KEY_CHUNKS];
	int nslots = 0;

	if (w->taken[U] || mw_inplace_before_call(in, w->tgt, U, &ci) < 0 || ci.map < 0 ||
	    ci.r3 == 1 || ci.r4 != 0 || chunk_of(ci.r3) < 0 || !(mp = map_of(&w->maps, ci.map)))
		return;
	m = *mp;
	if (array_store(w, U, &ci, &m)) {
		st->arrays++;
		return;
	}
	if (m.type != BPF_MAP_TYPE_HASH || m.value_size != 8 ||
	    mw_inplace_key_at(&ci, m.key_size, key) < 0 ||
	    (ci.r3 < ci.r2 + (long)m.key_size && ci.r3 + 8 > ci.r2))
		return;	/* (the last: the value overlaps the key) */
	for (uint32_t j = 0; j < m.key_size / 8; j++)
		if (key[j].kind == SYM_REG)
			regs |= 1u << key[j].reg;
		else if (key[j].kind == SYM_SLOT)
			slots[nslots++] = key[j].slot;
	for (unsigned i = 0; i < w->nlk; i++) {
		const struct lookup *l = &w->lk[i];
		int s, same = 1;

		if (l->ci.map != ci.map || mw_inplace_key_at(&l->ci, m.key_size, lkey) < 0)
			continue;
		for (uint32_t j = 0; j < m.key_size / 8; j++)
			same &= sym_eq(&lkey[j], &key[j]);
		if (!same || !region_clean(w, l->at, U, regs, slots, nslots, ci.map, ci.map_ld) ||
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
		    mw_inplace_before_call(w->in, w->tgt, i, &l->ci) < 0 || l->ci.map < 0 ||
		    l->ci.r2 == 1)
			continue;
		l->at = i;
		w->nlk++;
	}
	return 0;
}

/* Is the program made only of what stapbpf makes, as far as the proofs
 * above read it: registers r0-r10, no atomics (a load-acquire or a fetch
 * writes a register unseen), no subprograms or kfuncs, maps only as
 * ld_imm64 of a descriptor, each map by one descriptor (a dup of it would
 * hide a delete from region_clean)?  1 if so, each map's type and sizes
 * in *maps, asked once. */
static int plain_program(const struct bpf_insn *in, unsigned n, mw_inplace_map_fn map_info,
			 struct maps *maps)
{
	maps->n = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct bpf_insn *x = &in[i];
		uint8_t cl = BPF_CLASS(x->code);
		struct mw_inplace_map m;

		if (x->dst_reg > 10 || x->src_reg > 10 ||
		    ((cl == BPF_STX || cl == BPF_ST) && BPF_MODE(x->code) == BPF_ATOMIC) ||
		    (x->code == (BPF_JMP | BPF_CALL) && x->src_reg != 0))
			return 0;
		if (x->code != LD64)
			continue;
		if (i + 1 >= n || (x->src_reg != 0 && x->src_reg != BPF_PSEUDO_MAP_FD))
			return 0;
		i++;
		if (x->src_reg != BPF_PSEUDO_MAP_FD || map_of(maps, x->imm))
			continue;
		if (maps->n == MAX_MAPS || map_info(x->imm, &m) < 0)
			return 0;
		for (unsigned j = 0; j < maps->n; j++)
			if (maps->m[j].id == m.id)
				return 0;
		maps->fd[maps->n] = x->imm, maps->m[maps->n++] = m;
	}
	return 1;
}

struct bpf_insn *mw_inplace(const struct bpf_insn *in, unsigned n, unsigned *out_n,
			    mw_inplace_map_fn map_info, struct mw_inplace_stats *st)
{
	struct mw_inplace_stats zero = { 0, 0 };
	struct rw w = { .in = in, .n = n };
	unsigned calls = 0, cap, norder, *order = NULL;

	if (!st)
		st = &zero;
	*st = zero;
	if (n < 2 || n > INT16_MAX || !map_info || !plain_program(in, n, map_info, &w.maps))
		return NULL;
	for (unsigned i = 0; i < n; i++)
		calls += in[i].code == (BPF_JMP | BPF_CALL);
	cap = n + calls * ((ARRAY_STUB > STORE_STUB ? ARRAY_STUB : STORE_STUB) + LOAD_STUB) +
	      MAX_SLOTS + 2;
	/* every jump to and from a stub must fit the 16-bit offset; a cycle
	 * would let a slot outlive its lookup (mw_inplace_flow_order) */
	if (!calls || cap > INT16_MAX || !(order = malloc(n * sizeof(*order))) ||
	    mw_inplace_flow_order(in, n, order, &norder) != 0 ||
	    !(w.out = malloc(cap * sizeof(*w.out))) ||
	    !(w.taken = calloc(n, 1)) || !(w.seen = malloc(n)) || !(w.tgt = calloc(n + 1, 1)))
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		unsigned next[2];

		/* a jump's target is next[0] (mw_inplace_successors() took
		 * every one: mw_inplace_flow_order would have failed) */
		if (IS_JMP(in[i].code) && BPF_OP(in[i].code) != BPF_CALL &&
		    mw_inplace_successors(in, n, i, next) > 0)
			w.tgt[next[0]] = 1;
		i += in[i].code == LD64;
	}
	memcpy(w.out, in, n * sizeof(*w.out));
	w.at = n;
	w.bottom = mw_inplace_frame_bottom(in, n, order, norder);
	if (!IS_JMP(in[0].code) && in[0].code != LD64 && !w.tgt[0]) {
		if (find_lookups(&w) < 0)
			goto fail;
		for (unsigned i = 0; i < n; i++) {
			if (in[i].code == LD64) {
				i++;
				continue;
			}
			if (is_call(&in[i], BPF_FUNC_map_update_elem) && !w.taken[i])
				store_rewrite(&w, i, st);
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
	free(order);
	*out_n = w.at;
	return w.out;
fail:
	free(w.out);
	free(w.taken);
	free(w.seen);
	free(w.tgt);
	free(w.lk);
	free(order);
	return NULL;
}
