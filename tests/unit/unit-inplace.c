/* unit-inplace.c - the shim's map updates made in place (shim/inplace.c)
 * on small programs in stapbpf's shapes: which updates it changes and
 * which it must leave (the key register written between lookup and
 * update on one path, the map looked up again, a key from a register a
 * call clobbers, a jump into the lookup's load, an LRU map, 16-byte
 * values, BPF_NOEXIST); then, as root, each program and its rewrite
 * loaded as socket filters and run (BPF_PROG_TEST_RUN) on fresh maps:
 * the same map contents after every run, key there or not. */
#include "inplace-harness.h"

#define STW(d, o, i) I(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)

enum { HASH = 1000, LRU, WIDE, ARRAY };	/* fake descriptors until the kernel's */
static int fd_hash = HASH, fd_array = ARRAY;

/* mw_inplace_map_fn: what the maps of these programs are */
static int fake_info(int fd, struct mw_inplace_map *m)
{
	m->type = BPF_MAP_TYPE_HASH;
	m->key_size = 8;
	m->value_size = 8;
	m->id = (uint32_t)fd;
	if (fd == LRU)
		m->type = BPF_MAP_TYPE_LRU_HASH;
	else if (fd == WIDE)
		m->value_size = 16;
	else if (fd == fd_array)
		m->type = BPF_MAP_TYPE_ARRAY, m->key_size = 4;
	else if (fd != fd_hash)
		return -1;
	return 0;
}

/* the heap handler's shape: v = m[r9]; ...; m[r9] = v + 7.  what: a
 * change between lookup and update; key: the key's register */
static unsigned heap_prog(struct bpf_insn *p, int fd, const char *what, int key)
{
	unsigned n = 0;

	p[n++] = STW(10, -16, 0);		/* stapbpf's zeroed temporaries */
	p[n++] = STW(10, -12, 0);
	p[n++] = STW(10, -8, 0);
	p[n++] = STW(10, -4, 0);
	p[n++] = MOVK(9, 42);			/* the key */
	p[n++] = MOVK(3, 42);
	if (!strncmp(what, "via-slot", 8)) {
		/* stapbpf's key of four locals: each stored in a temporary,
		 * read back into one register and stored into the key, the
		 * register then used for the next (the multi-process setjmp
		 * handlers): the key names the slot, not the register */
		p[n++] = STW(10, -24, 0);
		p[n++] = STW(10, -20, 0);
		p[n++] = MOVK(key, 42);
		p[n++] = STX(10, key, -24);
		p[n++] = LDX(key, 10, -24);
		p[n++] = STX(10, key, -8);
		p[n++] = MOVK(key, 99);		/* the register reused */
	} else {
		p[n++] = STX(10, key, -8);
	}
	p[n++] = MOVX(2, 10);
	p[n++] = ADDK(2, -8);
	LDMAP(fd);
	unsigned L = n;
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	p[n++] = JEQ0(0, 0);			/* to MISS, set below */
	p[n++] = LDX(8, 0, 0);			/* L+2: v */
	if (!strcmp(what, "ja-after-load"))
		p[n++] = JA(0);			/* no read of r0 */
	if (!strcmp(what, "r0-kept"))
		p[n++] = MOVX(7, 0);		/* the element's address kept */
	p[n++] = ADDK(8, 7);
	if (!strcmp(what, "key-written"))
		p[n++] = ADDK(9, 1);
	if (!strcmp(what, "key-written-one-path")) {
		p[n++] = JEQ0(8, 1);
		p[n++] = ADDK(9, 1);
	}
	if (!strcmp(what, "map-again")) {
		p[n++] = MOVX(2, 10);
		p[n++] = ADDK(2, -8);
		LDMAP(fd);
		p[n++] = CALL(BPF_FUNC_map_delete_elem);
	}
	if (!strcmp(what, "via-slot-written"))
		p[n++] = STX(10, 8, -24);	/* the key's slot: another key */
	unsigned upd = n;
	if (!strncmp(what, "via-slot", 8))
		p[n++] = LDX(key, 10, -24);
	p[n++] = STX(10, key, -8);
	p[n++] = MOVX(2, 10);
	p[n++] = ADDK(2, -8);
	p[n++] = STX(10, 8, -16);
	p[n++] = MOVX(3, 10);
	p[n++] = ADDK(3, -16);
	LDMAP(fd);
	p[n++] = MOVK(4, strcmp(what, "noexist") ? 0 : BPF_NOEXIST);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	/* MISS: v = 0 (the key inserted with 7); "jump-into-load": its
	 * jump goes to L+2 instead (a program never loaded) */
	p[L + 1].off = (int16_t)(n - L - 2);
	p[n++] = MOVK(8, 0);
	p[n++] = ADDK(8, 7);
	p[n] = JA((int16_t)((long)(strcmp(what, "jump-into-load") ? upd : L + 2) - (long)n - 1));
	n++;
	return n;
}

/* a global's `g = v` (stapbpf's globals array, key 3) */
static unsigned array_prog(struct bpf_insn *p, int fd, int flags)
{
	unsigned n = 0;

	p[n++] = STW(10, -16, 0);
	p[n++] = STW(10, -12, 0);
	p[n++] = STW(10, -8, 0);
	p[n++] = STW(10, -4, 0);
	p[n++] = MOVK(8, 1234);
	p[n++] = STW(10, -12, 3);
	p[n++] = MOVX(2, 10);
	p[n++] = ADDK(2, -12);
	p[n++] = STX(10, 8, -8);
	p[n++] = MOVX(3, 10);
	p[n++] = ADDK(3, -8);
	LDMAP(fd);
	p[n++] = MOVK(4, flags);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	p[n++] = MOVK(0, 0);
	p[n++] = EXIT;
	return n;
}

static int failed;

static void expect(const char *what, const struct bpf_insn *p, unsigned n, unsigned stores,
		   unsigned arrays)
{
	struct mw_inplace_stats st;
	unsigned out_n = 0;
	struct bpf_insn *out = mw_inplace(p, n, &out_n, fake_info, &st);

	if (!out)
		st.stores = st.arrays = 0;
	if (st.stores != stores || st.arrays != arrays) {
		printf("FAIL: %s: %u stores, %u arrays; want %u, %u\n", what, st.stores,
		       st.arrays, stores, arrays);
		failed = 1;
	} else {
		printf("ok: %s: %u stores, %u arrays\n", what, stores, arrays);
	}
	free(out);
}

static int map_make(uint32_t type, uint32_t ks)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ks;
	a.value_size = 8;
	a.max_entries = 16;
	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

static int map_get(int fd, const void *key, uint64_t *v)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uintptr_t)key;
	a.value = (uintptr_t)v;
	*v = 0;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) == 0 ? 0 : -1;
}

/* the program as made and as rewritten, each on a fresh map run 3 times:
 * the key's value after each run; shape and key: heap_prog's */
static void same_in_kernel(const char *what, int array, const char *shape, int kreg)
{
	struct bpf_insn p[128], *out;
	uint64_t got[2][3];
	unsigned n, out_n;
	uint64_t key = 42;
	uint32_t idx = 3;

	for (int v = 0; v < 2; v++) {
		int m = map_make(array ? BPF_MAP_TYPE_ARRAY : BPF_MAP_TYPE_HASH, array ? 4 : 8), pf;

		if (m < 0) {
			printf("FAIL: %s: map: %s\n", what, strerror(errno));
			failed = 1;
			return;
		}
		if (array)
			fd_array = m;
		else
			fd_hash = m;
		n = array ? array_prog(p, m, 0) : heap_prog(p, m, shape, kreg);
		out = v ? mw_inplace(p, n, &out_n, fake_info, NULL) : NULL;
		if (v && !out) {
			printf("FAIL: %s: not rewritten\n", what);
			failed = 1;
			return;
		}
		if ((pf = out ? prog_load(out, out_n) : prog_load(p, n)) < 0) {
			printf("FAIL: %s: %s refused: %s\n", what, v ? "the rewrite" : "the program",
			       strerror(errno));
			failed = 1;
			free(out);
			return;
		}
		for (int r = 0; r < 3; r++) {
			if (prog_run(pf) < 0 || map_get(m, array ? (void *)&idx : (void *)&key,
							&got[v][r]) < 0) {
				printf("FAIL: %s: run %d: %s\n", what, r, strerror(errno));
				failed = 1;
			}
		}
		free(out);
		close(pf);
		close(m);
	}
	if (memcmp(got[0], got[1], sizeof(got[0]))) {
		printf("FAIL: %s: as made %lu %lu %lu, rewritten %lu %lu %lu\n", what,
		       (unsigned long)got[0][0], (unsigned long)got[0][1], (unsigned long)got[0][2],
		       (unsigned long)got[1][0], (unsigned long)got[1][1], (unsigned long)got[1][2]);
		failed = 1;
	} else {
		printf("ok: %s in the kernel: %lu %lu %lu both ways\n", what,
		       (unsigned long)got[1][0], (unsigned long)got[1][1], (unsigned long)got[1][2]);
	}
}

int main(void)
{
	struct bpf_insn p[128];

	expect("heap shape", p, heap_prog(p, HASH, "", 9), 1, 0);
	expect("a jump right after the lookup's load", p, heap_prog(p, HASH, "ja-after-load", 9), 1, 0);
	expect("the element's address copied after the load", p, heap_prog(p, HASH, "r0-kept", 9), 0, 0);
	expect("key register written between", p, heap_prog(p, HASH, "key-written", 9), 0, 0);
	expect("key register written on one path", p,
	       heap_prog(p, HASH, "key-written-one-path", 9), 0, 0);
	expect("map used again between", p, heap_prog(p, HASH, "map-again", 9), 0, 0);
	expect("key from r3 (a call clobbers it)", p, heap_prog(p, HASH, "", 3), 0, 0);
	expect("a jump into the lookup's load", p, heap_prog(p, HASH, "jump-into-load", 9), 0, 0);
	expect("BPF_NOEXIST", p, heap_prog(p, HASH, "noexist", 9), 0, 0);
	expect("key reloaded from a slot through a reused register", p,
	       heap_prog(p, HASH, "via-slot", 7), 1, 0);
	expect("key reloaded from a slot written between", p,
	       heap_prog(p, HASH, "via-slot-written", 7), 0, 0);
	expect("LRU hash", p, heap_prog(p, LRU, "", 9), 0, 0);
	expect("16-byte values", p, heap_prog(p, WIDE, "", 9), 0, 0);
	expect("array", p, array_prog(p, ARRAY, 0), 0, 1);
	expect("array, BPF_EXIST", p, array_prog(p, ARRAY, BPF_EXIST), 0, 0);
	if (geteuid() != 0) {
		printf("the kernel half skipped: not root\n");
		return failed;
	}
	same_in_kernel("heap shape", 0, "", 9);
	same_in_kernel("key reloaded from a slot", 0, "via-slot", 7);
	same_in_kernel("array", 1, "", 0);
	return failed;
}
