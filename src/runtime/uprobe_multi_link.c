/* uprobe_multi_link.c - uprobe_multi links; see uprobe_multi_link.h. */
#include <sys/syscall.h>
#include <unistd.h>

#include "uprobe_multi_link.h"

int mw_umulti_empty_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	mw_umulti_prog_attr(&a, insns, sizeof(insns) / sizeof(insns[0]));
	return (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

int mw_umulti_link(int prog, const char *path, const uint64_t *offs, const uint64_t *cookies,
		   unsigned n, unsigned pid)
{
	struct mw_umulti_attr l;

	memset(&l, 0, sizeof(l));
	l.prog_fd = (uint32_t)prog;
	l.attach_type = MW_BPF_TRACE_UPROBE_MULTI;
	l.path = (uintptr_t)path;
	l.offsets = (uintptr_t)offs;
	l.cookies = (uintptr_t)cookies;
	l.cnt = n;
	l.pid = pid;
	return (int)syscall(__NR_bpf, BPF_LINK_CREATE, &l, sizeof(l));
}
