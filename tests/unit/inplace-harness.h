/* inplace-harness.h - for the tests of the shim's rewrite
 * (tests/unit/unit-inplace-paths.c, tests/unit/unit-inplace-fuzz.c): the rewrite
 * itself (shim/inplace.c and shim/inplace_flow.c, not in libmw.a),
 * instruction macros, and BPF syscalls to make 8-byte-value hash maps,
 * load a program as a socket filter and run it once (BPF_PROG_TEST_RUN). */
#ifndef MALLOCWATCH_INPLACE_HARNESS_H
#define MALLOCWATCH_INPLACE_HARNESS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../shim/inplace.c"
#include "../shim/inplace_flow.c"

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
					     .off = (o), .imm = (i) })
#define MOVK(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOVX(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADDK(d, i) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define STX(d, s, o) I(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STD(d, o, i) I(BPF_ST | BPF_MEM | BPF_DW, d, 0, o, i)
#define LDX(d, s, o) I(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define LDMAPR(r, fd) (p[n] = I(BPF_LD | BPF_IMM | BPF_DW, r, BPF_PSEUDO_MAP_FD, 0, fd), \
		       p[n + 1] = I(0, 0, 0, 0, 0), n += 2)
#define LDMAP(fd) LDMAPR(1, fd)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define JEQ0(r, o) I(BPF_JMP | BPF_JEQ | BPF_K, r, 0, o, 0)
#define JA(o) I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define KEYR(r, off) (p[n++] = STX(10, r, off), p[n++] = MOVX(2, 10), p[n++] = ADDK(2, off))
#define ZERO3 (p[n++] = STD(10, -8, 0), p[n++] = STD(10, -16, 0), p[n++] = STD(10, -24, 0))
/* the update of the heap shape: map[r9] = r8 */
#define UPD(fd) (KEYR(9, -8), p[n++] = STX(10, 8, -16), p[n++] = MOVX(3, 10), \
		 p[n++] = ADDK(3, -16), LDMAP(fd), p[n++] = MOVK(4, 0), p[n++] = CALL(BPF_FUNC_map_update_elem))
#define FIX(at) (p[at].off = (int16_t)((long)n - (long)(at) - 1))	/* jump at `at` to here */
#define JTO(t) (p[n] = JA((int16_t)((long)(t) - (long)n - 1)), n++)

static inline long sys_bpf(int cmd, union bpf_attr *a) { return syscall(__NR_bpf, cmd, a, sizeof(*a)); }

static inline int map_info_k(int fd, struct mw_inplace_map *m)
{
	struct bpf_map_info mi;
	union bpf_attr a;

	memset(&mi, 0, sizeof(mi));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(mi);
	a.info.info = (uintptr_t)&mi;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0)
		return -1;
	m->type = mi.type, m->key_size = mi.key_size, m->value_size = mi.value_size;
	m->id = mi.id;
	return 0;
}

static inline int map_new(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH, a.key_size = 8, a.value_size = 8, a.max_entries = 16;
	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

static inline void map_set(int fd, uint64_t k, uint64_t v)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd, a.key = (uintptr_t)&k, a.value = (uintptr_t)&v;
	sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

static inline void map_dump(int fd, char *s, size_t sz)
{
	static const uint64_t keys[] = { 1, 2, 7, 42, 43, 0x10000002aULL };
	size_t at = 0;

	s[0] = 0;
	for (unsigned i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		union bpf_attr a;
		uint64_t v = 0;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd, a.key = (uintptr_t)&keys[i], a.value = (uintptr_t)&v;
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) == 0)
			at += (size_t)snprintf(s + at, sz - at, "[%lu]=%lu ", (unsigned long)keys[i],
					       (unsigned long)v);
	}
}

static inline int prog_load(const struct bpf_insn *p, unsigned n)
{
	static char log[1 << 16];
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)p, a.insn_cnt = n, a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log, a.log_size = sizeof(log), a.log_level = 1;
	if ((fd = (int)sys_bpf(BPF_PROG_LOAD, &a)) < 0)
		printf("  verifier: %.1500s\n", log);
	return fd;
}

static inline int prog_run(int fd)
{
	char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd, a.test.data_in = (uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt), a.test.repeat = 1;
	return (int)sys_bpf(BPF_PROG_TEST_RUN, &a);
}

#endif
