/* unit-inplace-fuzz.c - the shim's rewrite (shim/inplace.c) against the
 * kernel on random programs: acyclic programs in the instructions
 * stapbpf uses (lookups, updates and deletes of 8- and 16-byte-key hash
 * maps and an array, keys from callee-saved registers, immediates and
 * reloaded stack slots, register and stack writes, stores through
 * pointers into the stack, helpers between, forward branches), each
 * loaded as a socket filter as made and as rewritten and run once on
 * fresh maps with the same contents.  Fails if a rewrite leaves other map
 * contents, if the verifier refuses a rewrite of a program it took, or
 * if fewer than a tenth of the programs get a hash store made in place
 * (the generator must exercise the rewrite).  Seeded: the same programs
 * each run.  Root only (exit 77 otherwise).  The generator is a second
 * attacker's review's.
 *
 * Usage: unit-inplace-fuzz [SEED [PROGRAMS]]   (default 1 3000) */
#include "inplace-harness.h"

static int mk(int type, int ks)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type, a.key_size = ks, a.value_size = 8, a.max_entries = 64;
	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

static void put(int fd, const void *k, uint64_t v)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd, a.key = (uintptr_t)k, a.value = (uintptr_t)&v;
	sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

static void dump_map(int fd, int ks, char *s, size_t sz)
{
	size_t at = 0;

	s[0] = 0;
	for (uint64_t i = 0; i < 4; i++)
		for (uint64_t j = 0; j < (ks == 16 ? 4 : 1); j++) {
			uint64_t k[2] = { i, j }, v = 0;
			uint32_t k4 = (uint32_t)i;
			union bpf_attr a;

			memset(&a, 0, sizeof(a));
			a.map_fd = (uint32_t)fd, a.key = ks == 4 ? (uintptr_t)&k4 : (uintptr_t)k;
			a.value = (uintptr_t)&v;
			if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) == 0)
				at += v > (1ULL << 40) ? (size_t)snprintf(s + at, sz - at, "[%lu,%lu]=PTR ", (unsigned long)i,
						       (unsigned long)j) : (size_t)snprintf(s + at, sz - at, "[%lu,%lu]=%lu ", (unsigned long)i,
						       (unsigned long)j, (unsigned long)v);
		}
}

static struct bpf_insn p[4096];
static unsigned n;
static int M[3], KS[3] = { 8, 16, 4 };	/* hash k8, hash k16, array */

static int R(int k) { return rand() % k; }
static int cs(void) { return 6 + R(4); }	/* r6..r9 */

/* a key of map m at the stack: chunks from r6-r9, imms, or a slot's content */
static void key(int m)
{
	if (m == 2) {
		if (R(2)) p[n++] = I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, R(5));
		else p[n++] = I(BPF_STX | BPF_MEM | BPF_W, 10, cs(), -4, 0);
		p[n++] = MOVX(2, 10), p[n++] = ADDK(2, -4);
		return;
	}
	for (int c = 0; c < KS[m] / 8; c++) {
		int off = -16 + 8 * c;
		switch (R(4)) {
		case 0: p[n++] = STD(10, off, R(2)); break;
		case 1: p[n++] = LDX(3, 10, -32 - 8 * R(2)); p[n++] = STX(10, 3, off); break;
		default: p[n++] = STX(10, R(3) ? 9 : cs(), off); break;
		}
	}
	p[n++] = MOVX(2, 10), p[n++] = ADDK(2, -16);
}

/* r8 = m[key] (after key(m)), or 0 for a missing key: stapbpf's lookup */
static void lookup_r8(int m)
{
	LDMAPR(1, M[m]);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	p[n++] = JEQ0(0, 2);
	p[n++] = LDX(8, 0, 0);
	p[n++] = JA(1);
	p[n++] = MOVK(8, 0);
}

static void stmt(void);
static void pair(void)
{
	int m = R(5) < 3 ? 0 : R(2) ? 1 : 2;
	unsigned k0 = n, k1, nst;

	key(m);
	k1 = n;
	lookup_r8(m);
	p[n++] = ADDK(8, 1);
	nst = R(3);
	for (unsigned i = 0; i < nst; i++) stmt();
	if (R(4)) { memmove(&p[n], &p[k0], (k1 - k0) * sizeof(*p)); n += k1 - k0; } else key(m);
	p[n++] = STX(10, 8, -24);
	p[n++] = MOVX(3, 10), p[n++] = ADDK(3, -24);
	LDMAPR(1, M[m]);
	p[n++] = MOVK(4, 0);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
}

static int depth;
static void stmt(void)
{
	int m = R(5) < 3 ? 0 : R(2) ? 1 : 2, r = cs();

	if (depth < 2 && R(3) == 0) { depth++; pair(); depth--; return; }
	switch (R(9)) {
	case 0: case 1:	/* lookup, m[k] into r8 */
		key(m);
		lookup_r8(m);
		if (R(2)) p[n++] = ADDK(8, 1);
		break;
	case 2: case 3:	/* update */
		key(m);
		p[n++] = STX(10, R(2) ? 8 : r, -24);
		p[n++] = MOVX(3, 10), p[n++] = ADDK(3, -24);
		LDMAPR(1, M[m]);
		p[n++] = MOVK(4, R(6) ? 0 : R(3));
		p[n++] = CALL(BPF_FUNC_map_update_elem);
		break;
	case 4:		/* delete */
		if (m == 2) break;
		key(m);
		LDMAPR(1, M[m]);
		p[n++] = CALL(BPF_FUNC_map_delete_elem);
		break;
	case 5:		/* a callee-saved register written */
		switch (R(6)) {
		case 0: p[n++] = MOVK(r, R(4)); break;
		case 1: p[n++] = ADDK(r, R(2) ? 1 : 0); break;
		case 2: p[n++] = I(BPF_ALU | BPF_MOV | BPF_K, r, 0, 0, R(4)); break;
		case 3: p[n++] = LDX(r, 10, -32 - 8 * R(4)); break;
		case 4: p[n++] = MOVX(r, cs()); break;
		default: p[n++] = MOVX(r, 10); p[n++] = ADDK(r, -8 * (1 + R(8))); break;
		}
		break;
	case 6:		/* the stack written */
		if (R(2)) p[n++] = STX(10, cs(), -8 * (1 + R(8)));
		else { int w = R(2); p[n++] = I(BPF_ST | BPF_MEM | (w ? BPF_W : BPF_DW), 10, 0, -8 * (1 + R(8)) + (w && R(2) ? 4 : 0), R(4)); }
		break;
	case 7:		/* through a pointer into the stack */
		if (R(2)) {
			p[n++] = MOVX(5, 10), p[n++] = ADDK(5, -8 * (1 + R(8)));
			p[n++] = STX(5, cs(), 0);
		} else
			p[n++] = R(2) ? STX(cs(), cs(), 0) : STD(cs(), 0, R(3));
		break;
	case 8:		/* a helper between */
		p[n++] = CALL(BPF_FUNC_ktime_get_ns);
		break;
	}
}

static unsigned gen(void)
{
	unsigned nst = 2 + R(10);
	unsigned br[64], nbr = 0;

	n = 0;
	for (int s = 8; s >= 1; s--) p[n++] = STD(10, -8 * s, 0);
	for (int r = 6; r <= 9; r++) p[n++] = MOVK(r, R(4));
	for (int s = 4; s <= 7; s++) if (R(2)) p[n++] = STD(10, -8 * s, R(4));
	for (unsigned s = 0; s < nst; s++) {
		/* close branches whose time came */
		for (unsigned b = 0; b < nbr; b++)
			if (br[b] != ~0u && R(3) == 0) { FIX(br[b]); br[b] = ~0u; }
		if (R(4) == 0 && nbr < 64) {
			br[nbr++] = n;
			p[n++] = I(BPF_JMP | BPF_JEQ | BPF_K, cs(), 0, 0, R(4));
		}
		stmt();
	}
	for (unsigned b = 0; b < nbr; b++)
		if (br[b] != ~0u) FIX(br[b]);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	return n;
}

int main(int argc, char **argv)
{
	unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	unsigned iters = argc > 2 ? (unsigned)atoi(argv[2]) : 3000;
	unsigned rewritten = 0, refused = 0, diffs = 0, orig_bad = 0, stores = 0;

	if (geteuid() != 0) {
		printf("needs root: it loads and runs BPF programs\n");
		return 77;
	}
	for (unsigned it = 0; it < iters; it++) {
		static char res[2][3][1024];
		struct mw_inplace_stats st = { 0, 0 };
		struct bpf_insn *out = NULL;
		unsigned on = 0, pn = 0;
		int ok = 1;

		for (int v = 0; v < 2 && ok; v++) {
			union bpf_attr a;
			int pf;

			M[0] = mk(BPF_MAP_TYPE_HASH, 8), M[1] = mk(BPF_MAP_TYPE_HASH, 16);
			M[2] = mk(BPF_MAP_TYPE_ARRAY, 4);
			if (M[0] < 0 || M[1] < 0 || M[2] < 0) {
				printf("FAIL: cannot make maps: %s\n", strerror(errno));
				return 1;
			}
			srand(seed * 100003u + it);
			for (uint64_t i = 0; i < 4; i++) {
				uint64_t k[2] = { i, (uint64_t)R(4) };

				if (R(2))
					put(M[0], k, 10 + i);
				if (R(2))
					put(M[1], k, 20 + i);
			}
			pn = gen();
			if (v) {
				if (!(out = mw_inplace(p, pn, &on, map_info_k, &st)))
					ok = 0;
				else
					rewritten++, stores += st.stores > 0;
			}
			if (ok) {
				memset(&a, 0, sizeof(a));
				a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
				a.insns = (uintptr_t)(v ? out : p), a.insn_cnt = v ? on : pn;
				a.license = (uintptr_t)"GPL";
				if ((pf = (int)sys_bpf(BPF_PROG_LOAD, &a)) < 0) {
					if (v) {
						refused++;
						printf("FAIL: program %u: the rewrite refused: %s\n", it,
						       strerror(errno));
					} else {
						orig_bad++;
					}
					ok = 0;
				} else {
					prog_run(pf);
					close(pf);
					for (int m = 0; m < 3; m++)
						dump_map(M[m], KS[m], res[v][m], sizeof(res[v][m]));
				}
			}
			for (int m = 0; m < 3; m++)
				close(M[m]);
		}
		if (ok && (strcmp(res[0][0], res[1][0]) || strcmp(res[0][1], res[1][1]) ||
			   strcmp(res[0][2], res[1][2]))) {
			diffs++;
			printf("FAIL: program %u (seed %u) differs, %u stores, %u array stores made\n", it,
			       seed, st.stores, st.arrays);
			for (int m = 0; m < 3; m++)
				printf("  map %d as made:   %s\n         rewritten: %s\n", m, res[0][m],
				       res[1][m]);
		}
		free(out);
	}
	printf("seed %u: %u programs, %u the verifier refused as made, %u rewritten (%u with a hash "
	       "store), %u rewrites refused, %u differ\n", seed, iters, orig_bad, rewritten, stores,
	       refused, diffs);
	if (stores * 10 < iters) {
		printf("FAIL: only %u programs had a hash store made in place\n", stores);
		return 1;
	}
	return diffs || refused;
}
