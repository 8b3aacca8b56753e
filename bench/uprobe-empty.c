/* bench/uprobe-empty.c - the floor of a hit for any BPF tracer: an empty
 * BPF program (r0 = 0; exit) on uprobes at FILE:OFFSET..., attached
 * through the uprobe PMU as bpftrace and libbpf attach (a perf event of
 * /sys/bus/event_source/devices/uprobe/type, config1 the path, config2
 * the offset; PERF_EVENT_IOC_SET_BPF).  What a hit costs then is the
 * uprobe's own: the trap, the kernel's uprobe handling, the single step
 * of the displaced instruction, and a BPF program's call.  bench/perhit.sh
 * runs it as its "empty" mode.
 *
 * Usage: uprobe-empty [--multi|--dispatch] FILE OFFSET...
 *
 * --multi: the sites as one uprobe_multi link (BPF_TRACE_UPROBE_MULTI,
 * Linux 6.6), as mallocwatch's umulti-shim.so arms stapbpf's: the floor
 * of a tracer that attaches that way.
 * --dispatch: the same link running umulti-shim.so's dispatcher (the
 * site's cookie, bpf_get_attach_cookie, as the index of a tail call into
 * a BPF_MAP_TYPE_PROG_ARRAY), every slot the empty program: what the
 * dispatcher adds to a hit is this against --multi.
 *
 * Prints "MW 1 ready" once every uprobe is attached, then waits for
 * SIGINT or SIGTERM and exits 0 (its perf events close with it).  Exits 1
 * with a line on stderr when a program or uprobe cannot be made.
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uprobe_multi_link.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* umulti-shim.so's dispatcher (uprobe_multi.h) on a program array of n slots,
 * each holding prog: its fd, or -1 with errno */
static int load_dispatch(int prog, unsigned n)
{
	int map = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, "mw_progs", 4, 4, n, NULL);

	if (map < 0)
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (bpf_map_update_elem(map, &i, &prog, BPF_ANY) < 0)
			return -1;
	struct bpf_insn insns[MW_UMULTI_DISPATCH_LEN];
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .expected_attach_type = MW_BPF_TRACE_UPROBE_MULTI);

	return bpf_prog_load(BPF_PROG_TYPE_KPROBE, "mw_dispatch", "GPL", insns,
			     mw_umulti_dispatch(insns, map), &lo);
}

int main(int argc, char **argv)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	FILE *t = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	int type = -1, prog;

	int dispatch = argc > 1 && strcmp(argv[1], "--dispatch") == 0;
	int multi = dispatch || (argc > 1 && strcmp(argv[1], "--multi") == 0);

	if (multi) {
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: uprobe-empty [--multi|--dispatch] FILE OFFSET...\n");
		return 1;
	}
	if (!t || fscanf(t, "%d", &type) != 1) {
		fprintf(stderr, "uprobe-empty: no uprobe PMU\n");
		return 1;
	}
	fclose(t);
	LIBBPF_OPTS(bpf_prog_load_opts, lo,
		    .expected_attach_type = multi ? MW_BPF_TRACE_UPROBE_MULTI : 0);

	if ((prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "mw_empty", "GPL", insns, 2, &lo)) < 0) {
		perror("uprobe-empty: bpf_prog_load");
		return 1;
	}
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);	/* taken only in sigsuspend */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (multi) {
		static uint64_t offs[4096], cookies[4096];
		int link_prog = prog;

		for (int i = 2; i < argc && i - 2 < 4096; i++) {
			offs[i - 2] = strtoull(argv[i], NULL, 0);
			cookies[i - 2] = (uint64_t)(i - 2);
		}
		if (dispatch && argc - 2 <= 4096 &&
		    (link_prog = load_dispatch(prog, (unsigned)(argc - 2))) < 0) {
			perror("uprobe-empty: the dispatcher");
			return 1;
		}
		if (argc - 2 > 4096 ||
		    mw_umulti_link(link_prog, argv[1], offs, cookies, (unsigned)(argc - 2), 0) < 0) {
			fprintf(stderr, "uprobe-empty: uprobe_multi link on %s: %s\n", argv[1],
				strerror(errno));
			return 1;
		}
		argc = 2;	/* attached */
	}
	for (int i = 2; i < argc; i++) {
		struct perf_event_attr a = { .size = sizeof(a), .type = (unsigned)type,
					     .sample_period = 1, .sample_type = PERF_SAMPLE_RAW,
					     .config1 = (unsigned long)argv[1],
					     .config2 = strtoull(argv[i], NULL, 0) };
		int fd = (int)syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) < 0 ||
		    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
			fprintf(stderr, "uprobe-empty: %s:%s: %s\n", argv[1], argv[i], strerror(errno));
			return 1;
		}
	}
	printf("MW 1 ready\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	return 0;
}
