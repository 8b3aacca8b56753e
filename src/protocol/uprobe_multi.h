/* uprobe_multi.h - uprobe_multi links (BPF_LINK_CREATE, attach type
 * BPF_TRACE_UPROBE_MULTI: Linux 6.6), which Debian 12's 6.1 headers do
 * not define: the attach type's number and the link's attributes as
 * include/uapi/linux/bpf.h of Linux 6.6 lays them out, the program a link
 * takes and umulti-shim.so's dispatcher.  Definitions only, shared by
 * mallocwatch (uprobe_multi_link.h: the two calls its feature check and
 * the benches make), umulti-shim.so (shim/umulti-shim.c, whose calls go
 * through the syscall() it interposes) and the script's map sizes
 * (MW_UMULTI_PREALLOC_MAX): neither side calls the other. */
#ifndef MALLOCWATCH_UMULTI_H
#define MALLOCWATCH_UMULTI_H

#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>

/* umulti-shim.so leaves stapbpf's hash maps of at most this many entries
 * preallocated, the larger ones made on demand (its MW_UMULTI_PREALLOC
 * moves the bound): protocol.h's MW_MAP_WAITS, whose hits are nearly all new
 * keys, is held to it (gen.c), and MW_MAP_PIDS is below it */
#define MW_UMULTI_PREALLOC_MAX 8192u

/* enum bpf_attach_type's BPF_TRACE_UPROBE_MULTI */
#define MW_BPF_TRACE_UPROBE_MULTI 48

/* union bpf_attr's link_create with its uprobe_multi member */
struct mw_umulti_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;	/* pointers */
	uint32_t cnt, uflags, pid, pad;
};

/* Fill *a for BPF_PROG_LOAD of the n instructions insns (kept by the
 * caller until the load) as a BPF_PROG_TYPE_KPROBE program a
 * uprobe_multi link takes, licence "GPL"; the rest of *a zero. */
static inline void mw_umulti_prog_attr(union bpf_attr *a, const struct bpf_insn *insns,
				       unsigned n)
{
	memset(a, 0, sizeof(*a));
	a->prog_type = BPF_PROG_TYPE_KPROBE;
	a->expected_attach_type = MW_BPF_TRACE_UPROBE_MULTI;
	a->insns = (uintptr_t)insns;
	a->insn_cnt = n;
	a->license = (uintptr_t)"GPL";
}

/* umulti-shim.so's dispatcher, the program its link runs at every site:
 * r0 = bpf_get_attach_cookie(ctx); bpf_tail_call(ctx, map, r0); return 0
 * (the site's cookie is its slot in the BPF_MAP_TYPE_PROG_ARRAY map, a
 * descriptor, in ld_imm64 BPF_PSEUDO_MAP_FD).  Into insns, room for
 * MW_UMULTI_DISPATCH_LEN; the count. */
#define MW_UMULTI_DISPATCH_LEN 9
static inline unsigned mw_umulti_dispatch(struct bpf_insn *insns, int map)
{
	const struct bpf_insn d[MW_UMULTI_DISPATCH_LEN] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6, .src_reg = 1 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_attach_cookie },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 3, .src_reg = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1, .src_reg = 6 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 2, .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_tail_call },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	memcpy(insns, d, sizeof(d));
	return MW_UMULTI_DISPATCH_LEN;
}

#endif /* MALLOCWATCH_UMULTI_H */
