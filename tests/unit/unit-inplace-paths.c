/* unit-inplace-paths.c - the shim's rewrite (shim/inplace.c) on programs
 * built to break it: a store through a stack pointer made in another
 * block, a loop around the lookup and the update, `m[k]++` shapes with
 * side effects, another key or another value between lookup and update,
 * a map reached through a register, r1 overwritten after its map was
 * loaded, a stack pointer made by two additions, a gotol into the
 * lookup's load; and a second review's: a stack pointer made differently
 * on two paths, a sign-extending move, a load-acquire, a dup()ed map
 * descriptor, the element's address used after the update, an xchg into
 * r1, a loop inside a subprogram.  Each program, as made and as rewritten, is loaded as a
 * socket filter and run once (BPF_PROG_TEST_RUN) on fresh maps with the
 * same contents: a rewrite must leave the same contents, or not be made.
 * The `++` shapes that are sound (3, 4b) must be rewritten.  Root only
 * (exit 77 otherwise).  Written as two attackers' reviews of the rewrite. */
#include "inplace-harness.h"

typedef unsigned (*build_fn)(struct bpf_insn *p, int A, int B);
static int differ;

/* must: the rewrite must be made (a sound shape); else it may be left */
static void run(const char *what, build_fn build, uint64_t a42, uint64_t a43, uint64_t b42,
		int must)
{
	char res[2][2][256];
	struct mw_inplace_stats st = { 0, 0 };

	for (int v = 0; v < 2; v++) {
		struct bpf_insn p[256], *out = NULL;
		unsigned n, out_n = 0;
		int A = map_new(), B = map_new(), pf;

		if (a42) map_set(A, 42, a42);
		if (a43) map_set(A, 43, a43);
		if (b42) map_set(B, 42, b42);
		n = build(p, A, B);
		if (v && !(out = mw_inplace(p, n, &out_n, map_info_k, &st))) {
			printf("%s%-44s not rewritten\n", must ? "FAIL: " : "ok: ", what);
			differ |= must;
			close(A), close(B);
			return;
		}
		if ((pf = out ? prog_load(out, out_n) : prog_load(p, n)) < 0 || prog_run(pf) < 0) {
			printf("FAIL: %-44s %s: %s\n", what, v ? "rewrite refused" : "original refused",
			       strerror(errno));
			differ = 1;
			free(out);
			close(A), close(B);
			return;
		}
		map_dump(A, res[v][0], 256);
		map_dump(B, res[v][1], 256);
		free(out);
		close(pf), close(A), close(B);
	}
	int d = strcmp(res[0][0], res[1][0]) || strcmp(res[0][1], res[1][1]);
	differ |= d;
	printf("%s%-44s rewritten, %s (stores %u arrays %u)\n   as made:   A %s B %s\n   rewritten: A %s B %s\n",
	       d ? "FAIL: " : "ok: ", what, d ? "DIFFERS" : "the same", st.stores, st.arrays,
	       res[0][0], res[0][1], res[1][0], res[1][1]);
}

/* 1. mw_inplace_before_call: a store through a stack pointer it does not track
 * (here made in an earlier block) does not forget the key chunk it
 * overwrites: the lookup is of A[43], the tracker believes A[r9 = 42]. */
static unsigned t_untracked_ptr(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss, join;

	(void)B;
	ZERO3;
	p[n++] = MOVK(9, 42);
	p[n++] = MOVK(7, 43);
	p[n++] = MOVX(6, 10);
	p[n++] = ADDK(6, -8);			/* r6 = r10 - 8 */
	p[n++] = CALL(BPF_FUNC_ktime_get_ns);	/* a new block: r6 unknown to mw_inplace_before_call */
	KEYR(9, -8);				/* key chunk "r9" ... */
	p[n++] = STX(6, 7, 0);			/* ... overwritten with 43 through r6 */
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);	/* L: A[43] */
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	join = n;
	p[n++] = ADDK(8, 7);
	UPD(A);					/* U: A[42] = v + 7 */
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	FIX(miss);
	p[n++] = MOVK(8, 0);
	JTO(join);
	return n;
}

/* 2. a loop around L and U: region_clean stops at U, so the key register
 * written after U is not seen; the second lookup misses, the slot still
 * holds the first iteration's pointer. */
static unsigned t_loop(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss, join, loop;

	(void)B;
	ZERO3;
	p[n++] = MOVK(9, 42);
	loop = n;
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	join = n;
	p[n++] = ADDK(8, 1);
	UPD(A);					/* A[r9] = v + 1 */
	p[n++] = ADDK(9, 1);
	p[n] = I(BPF_JMP | BPF_JLT | BPF_K, 9, 0, (int16_t)((long)loop - (long)n - 1), 44);
	n++;
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	FIX(miss);
	p[n++] = MOVK(8, 0);
	JTO(join);
	return n;
}

/* 3. inc_pattern: instructions between i+5 and k that write r6-r9 or the
 * stack are skipped on the hit path (here r7 = 5 and the old value spilled
 * to r10-24), and B[1], B[2] read them after the update. */
static unsigned t_inc_skips(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss, i3;

	ZERO3;
	p[n++] = MOVK(7, 0);
	p[n++] = MOVK(9, 42);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);	/* i */
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(5, 0, 0);			/* i+2: R = r5 */
	i3 = n;
	p[n++] = MOVX(1, 5);			/* i+3 */
	p[n++] = ADDK(5, 1);			/* i+4 */
	p[n++] = MOVK(7, 5);			/* skipped: r7 = 5 */
	p[n++] = STX(10, 1, -24);		/* skipped: old value spilled */
	KEYR(9, -8);
	p[n++] = STX(10, 5, -16);
	p[n++] = MOVX(3, 10);
	p[n++] = ADDK(3, -16);
	LDMAP(A);
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);	/* k */
	p[n++] = STD(10, -8, 1);		/* B[1] = r7 */
	p[n++] = MOVX(2, 10); p[n++] = ADDK(2, -8);
	p[n++] = STX(10, 7, -16);
	p[n++] = MOVX(3, 10); p[n++] = ADDK(3, -16);
	LDMAP(B);
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	p[n++] = STD(10, -8, 2);		/* B[2] = *(r10 - 24) */
	p[n++] = MOVX(2, 10); p[n++] = ADDK(2, -8);
	p[n++] = LDX(6, 10, -24);
	p[n++] = STX(10, 6, -16);
	p[n++] = MOVX(3, 10); p[n++] = ADDK(3, -16);
	LDMAP(B);
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	FIX(miss);
	p[n++] = MOVK(5, 0);
	JTO(i3);
	return n;
}

/* 4. inc_pattern never compares the update's key with the lookup's:
 * v = A[42]; A[43] = v + 1 in the `m[k]++` shape becomes A[42] += 1. */
static unsigned t_inc_key(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss, i3;

	(void)B;
	ZERO3;
	p[n++] = MOVK(9, 42);
	p[n++] = MOVK(8, 43);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(5, 0, 0);
	i3 = n;
	p[n++] = MOVX(1, 5);
	p[n++] = ADDK(5, 1);
	KEYR(8, -8);				/* the update's key: r8 = 43 */
	p[n++] = STX(10, 5, -16);
	p[n++] = MOVX(3, 10);
	p[n++] = ADDK(3, -16);
	LDMAP(A);
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	FIX(miss);
	p[n++] = MOVK(5, 0);
	JTO(i3);
	return n;
}

/* 4b. inc_pattern: the value slot overwritten after R was stored there */
static unsigned t_inc_value(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss, i3;

	(void)B;
	ZERO3;
	p[n++] = MOVK(9, 42);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(5, 0, 0);
	i3 = n;
	p[n++] = MOVX(1, 5);
	p[n++] = ADDK(5, 1);
	KEYR(9, -8);
	p[n++] = STX(10, 5, -16);
	p[n++] = STD(10, -16, 99);		/* the value the update stores: 99 */
	p[n++] = MOVX(3, 10);
	p[n++] = ADDK(3, -16);
	LDMAP(A);
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	FIX(miss);
	p[n++] = MOVK(5, 0);
	JTO(i3);
	return n;
}

/* 5. the map reached through a register (r6 = A loaded before L): the
 * delete between L and U is not seen; U stores into the freed element. */
static unsigned t_map_in_reg(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss, join;

	(void)B;
	ZERO3;
	LDMAPR(6, A);
	p[n++] = MOVK(9, 42);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	join = n;
	p[n++] = ADDK(8, 7);
	KEYR(9, -8);
	p[n++] = MOVX(1, 6);
	p[n++] = CALL(BPF_FUNC_map_delete_elem);	/* delete A[42] via r6 */
	UPD(A);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	FIX(miss);
	p[n++] = MOVK(8, 0);
	JTO(join);
	return n;
}

/* 6. mw_inplace_before_call keeps r1's map after r1 is overwritten (r1 = A; r1 = r6
 * where r6 = B): the update goes to B, the rewrite stores into A[42]. */
static unsigned t_stale_r1(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss, join;

	ZERO3;
	LDMAPR(6, B);
	p[n++] = MOVK(9, 42);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	join = n;
	p[n++] = ADDK(8, 7);
	KEYR(9, -8);
	p[n++] = STX(10, 8, -16);
	p[n++] = MOVX(3, 10);
	p[n++] = ADDK(3, -16);
	LDMAP(A);
	p[n++] = MOVX(1, 6);			/* the update is B's */
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	FIX(miss);
	p[n++] = MOVK(8, 0);
	JTO(join);
	return n;
}

/* 7. mw_inplace_frame_bottom: r10 - 24 reached by r3 = r10; r3 += -8; r3 += -16 is
 * counted as -16; the slot lands on r10 - 24, which the program uses. */
static unsigned t_frame(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss, join;

	p[n++] = STD(10, -8, 0);
	p[n++] = STD(10, -16, 0);
	p[n++] = MOVK(7, 0);
	p[n++] = MOVX(3, 10); p[n++] = ADDK(3, -8); p[n++] = ADDK(3, -16);
	p[n++] = STX(3, 7, 0);			/* a buffer at r10 - 24, zeroed */
	p[n++] = MOVK(9, 42);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	join = n;
	p[n++] = ADDK(8, 7);
	UPD(A);
	p[n++] = MOVX(4, 10); p[n++] = ADDK(4, -8); p[n++] = ADDK(4, -16);
	p[n++] = LDX(5, 4, 0);			/* r5 = *(r10 - 24) */
	p[n++] = MOVK(7, 1);
	p[n++] = I(BPF_JMP | BPF_JEQ | BPF_K, 5, 0, 1, 0);
	p[n++] = MOVK(7, 2);			/* B[7] = 1 if it still holds 0, else 2 */
	p[n++] = STD(10, -8, 7);
	p[n++] = MOVX(2, 10); p[n++] = ADDK(2, -8);
	p[n++] = STX(10, 7, -16);
	p[n++] = MOVX(3, 10); p[n++] = ADDK(3, -16);
	LDMAP(B);
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	FIX(miss);
	p[n++] = MOVK(8, 0);
	JTO(join);
	return n;
}

/* 8. the jump-target bitmap reads a gotol's (JMP32|JA) offset from off,
 * not imm: a gotol into L+2 with r0 = &B[42] is not seen; the slot keeps
 * B's element and U stores A's new value into B[42]. */
static unsigned t_gotol(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss, join, skip, go, l2;

	ZERO3;
	p[n++] = MOVK(9, 42);
	KEYR(9, -8);
	LDMAP(B);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	skip = n;
	p[n++] = JEQ0(0, 0);
	go = n;
	p[n++] = I(BPF_JMP32 | BPF_JA, 0, 0, 0, 0);	/* gotol L+2, set below */
	FIX(skip);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);	/* L */
	miss = n;
	p[n++] = JEQ0(0, 0);
	l2 = n;
	p[n++] = LDX(8, 0, 0);			/* L+2 */
	join = n;
	p[n++] = ADDK(8, 7);
	UPD(A);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	FIX(miss);
	p[n++] = MOVK(8, 0);
	JTO(join);
	p[go].imm = (int32_t)((long)l2 - (long)go - 1);
	return n;
}

/* A second review's programs */
#define LD64K(r, lo, hi) (p[n] = I(BPF_LD | BPF_IMM | BPF_DW, r, 0, 0, lo), \
			  p[n + 1] = I(0, 0, 0, 0, hi), n += 2)
#ifndef BPF_LOAD_ACQ
#define BPF_LOAD_ACQ 0x100
#endif

/* A. mw_inplace_frame_bottom reads pointers in instruction order, not along the
 * control flow: r3 = r10 - 16 on the path taken, r10 - 8 on the one
 * written next; r3 += -16 then is r10 - 32 (counted as r10 - 24), and
 * slot 0 lands on r10 - 32, which the program uses (77 stored there,
 * read back after U). */
static unsigned t_frame_join(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss, x;

	ZERO3;					/* lowest seen: r10 - 24 */
	p[n++] = MOVK(9, 42);
	p[n++] = MOVX(3, 10); p[n++] = ADDK(3, -16);
	x = n;
	p[n++] = I(BPF_JMP | BPF_JEQ | BPF_K, 9, 0, 0, 42);	/* always taken */
	p[n++] = MOVX(3, 10); p[n++] = ADDK(3, -8);
	FIX(x);
	p[n++] = ADDK(3, -16);			/* r10 - 32 */
	p[n++] = MOVK(7, 77);
	p[n++] = STX(3, 7, 0);
	p[n++] = MOVX(6, 3);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);	/* L */
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	p[n++] = ADDK(8, 7);
	UPD(A);					/* U */
	p[n++] = LDX(5, 6, 0);			/* r5 = *(r10 - 32) */
	p[n++] = MOVK(7, 1);
	p[n++] = I(BPF_JMP | BPF_JEQ | BPF_K, 5, 0, 1, 77);
	p[n++] = MOVK(7, 2);			/* B[7] = 1 if it still holds 77, else 2 */
	p[n++] = STD(10, -8, 7);
	p[n++] = MOVX(2, 10); p[n++] = ADDK(2, -8);
	p[n++] = STX(10, 7, -16);
	p[n++] = MOVX(3, 10); p[n++] = ADDK(3, -16);
	LDMAP(B);
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	FIX(miss);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	return n;
}

/* B. a sign-extending move (ALU64 MOV X, off 32) is taken for a copy:
 * L looks up A[r9 = 0x1_0000_002a], U updates A[(s32) r9 = 42]. */
static unsigned t_movsx(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss;

	(void)B;
	map_set(A, 0x10000002aULL, 5);
	ZERO3;
	LD64K(9, 42, 1);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);	/* L: A[0x10000002a] */
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	p[n++] = ADDK(8, 7);
	p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_X, 3, 9, 32, 0);	/* r3 = (s32) r9 */
	p[n++] = STX(10, 3, -8); p[n++] = MOVX(2, 10); p[n++] = ADDK(2, -8);
	p[n++] = STX(10, 8, -16); p[n++] = MOVX(3, 10); p[n++] = ADDK(3, -16);
	LDMAP(A);
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);	/* U: A[42] */
	FIX(miss);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	return n;
}

/* C. a load-acquire (STX|ATOMIC, imm BPF_LOAD_ACQ) writes its dst_reg:
 * region_clean and mw_inplace_before_call take it for a store; r9 = 43 loaded
 * between L (A[42]) and U (A[r9 = 43]). */
static unsigned t_load_acq(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss;

	(void)B;
	ZERO3;
	p[n++] = STD(10, -24, 43);
	p[n++] = MOVK(9, 42);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);	/* L: A[42] */
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	p[n++] = ADDK(8, 7);
	p[n++] = I(BPF_STX | BPF_ATOMIC | BPF_DW, 9, 10, -24, BPF_LOAD_ACQ);	/* r9 = 43 */
	UPD(A);					/* U: A[43] */
	FIX(miss);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	return n;
}

/* D. the same map under two descriptors: a delete through a dup()ed fd
 * between L and U passes call_ok (ci.map != fd); U then stores into the
 * deleted element instead of inserting A[42]. */
static unsigned t_dup_fd(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss;
	int A2 = dup(A);			/* leaked: the test's */

	(void)B;
	ZERO3;
	p[n++] = MOVK(9, 42);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);	/* L */
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	p[n++] = ADDK(8, 7);
	KEYR(9, -8);
	LDMAP(A2);
	p[n++] = CALL(BPF_FUNC_map_delete_elem);	/* delete A[42] as A2 */
	UPD(A);					/* U */
	FIX(miss);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	return n;
}

/* E. a pointer to the element kept past U (r7 = r0): the update replaced
 * the element, so the write after U goes to the old one; rewritten, it
 * lands in A[42]. */
static unsigned t_ptr_after(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss;

	(void)B;
	ZERO3;
	p[n++] = MOVK(9, 42);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);	/* L */
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	p[n++] = MOVX(7, 0);
	p[n++] = ADDK(8, 7);
	UPD(A);					/* U: A[42] = v + 7 */
	p[n++] = MOVK(1, 99);
	p[n++] = STX(7, 1, 0);			/* *(old element) = 99 */
	FIX(miss);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	return n;
}

/* F. an atomic fetch into r1 (xchg with a stack slot holding B's map
 * pointer) after r1 = A: mw_inplace_before_call keeps r1's map as A; the update is
 * B's, the rewrite stores into A[42]. */
static unsigned t_xchg_r1(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, miss;

	ZERO3;
	p[n++] = MOVK(9, 42);
	LDMAPR(6, B);
	p[n++] = STX(10, 6, -24);		/* B's pointer spilled at r10 - 24 */
	p[n++] = MOVX(7, 10); p[n++] = ADDK(7, -24);
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);	/* L: A[42] */
	miss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	p[n++] = ADDK(8, 7);
	LDMAP(A);
	p[n++] = I(BPF_STX | BPF_ATOMIC | BPF_DW, 7, 1, 0, BPF_XCHG);	/* r1 = B */
	KEYR(9, -8);
	p[n++] = STX(10, 8, -16); p[n++] = MOVX(3, 10); p[n++] = ADDK(3, -16);
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);	/* U: B[42] */
	FIX(miss);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	return n;
}


/* G. the cycle search (mw_inplace_flow_order()) starts at instruction 0 and takes a
 * bpf-to-bpf call for a fall-through, so a loop inside a subprogram is
 * not seen (the first review's #2 again): the second iteration's lookup of A[43]
 * misses and U stores into A[42] through the first iteration's slot. */
static unsigned t_subprog_loop(struct bpf_insn *p, int A, int B)
{
	unsigned n = 0, call, miss, join, loop, out, tomiss;

	(void)B;
	ZERO3;
	call = n;
	p[n++] = I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 0);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	p[call].imm = (int32_t)(n - call - 1);	/* the subprogram: */
	ZERO3;
	p[n++] = MOVK(9, 42);
	loop = n;
	KEYR(9, -8);
	LDMAP(A);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);	/* L */
	tomiss = n;
	p[n++] = JEQ0(0, 0);
	p[n++] = LDX(8, 0, 0);
	join = n;
	p[n++] = ADDK(8, 7);
	UPD(A);					/* U: A[r9] = v + 7 */
	p[n++] = ADDK(9, 1);
	p[n] = I(BPF_JMP | BPF_JLT | BPF_K, 9, 0, (int16_t)((long)loop - (long)n - 1), 44);
	n++;
	out = n;
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	FIX(tomiss);
	miss = n;
	p[n] = I(BPF_JMP | BPF_JEQ | BPF_K, 9, 0, (int16_t)((long)out - (long)n - 1), 42);
	n++;
	p[n++] = MOVK(8, 0);
	JTO(join);
	(void)miss;
	return n;
}

int main(void)
{
	if (geteuid() != 0) {
		printf("needs root: it loads and runs BPF programs\n");
		return 77;
	}
	run("1 store via a stack pointer of another block", t_untracked_ptr, 0, 100, 0, 0);
	run("2 a loop around lookup and update", t_loop, 10, 0, 0, 0);
	run("3 ++ with r7 = 5 and a spill between", t_inc_skips, 10, 0, 0, 1);
	run("4 ++ whose update has another key", t_inc_key, 10, 0, 0, 0);
	run("4b ++ whose value slot is written again", t_inc_value, 10, 0, 0, 1);
	run("5 a delete through a map pointer in r6", t_map_in_reg, 10, 0, 0, 0);
	run("6 r1 overwritten after its map's ld", t_stale_r1, 10, 0, 0, 0);
	run("7 r10 - 24 made by two additions", t_frame, 10, 0, 0, 0);
	run("8 a gotol into the lookup's load", t_gotol, 0, 0, 100, 0);
	run("A a stack pointer made differently on two paths", t_frame_join, 10, 0, 0, 0);
	run("B a sign-extending move into the key", t_movsx, 0, 0, 0, 0);
	run("C a load-acquire into the key register", t_load_acq, 10, 0, 0, 0);
	run("D a delete through a dup()ed descriptor", t_dup_fd, 10, 0, 0, 0);
	run("E the element's address used after the update", t_ptr_after, 10, 0, 0, 0);
	run("F an xchg into r1 after r1 = the map", t_xchg_r1, 10, 0, 0, 0);
	run("G a loop inside a subprogram", t_subprog_loop, 10, 0, 0, 0);
	return differ;
}
