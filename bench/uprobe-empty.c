/* bench/uprobe-empty.c - the floor of a hit for any BPF tracer: an empty
 * BPF program (r0 = 0; exit) on uprobes at FILE:OFFSET..., attached
 * through the uprobe PMU as bpftrace and libbpf attach (a perf event of
 * /sys/bus/event_source/devices/uprobe/type, config1 the path, config2
 * the offset; PERF_EVENT_IOC_SET_BPF).  What a hit costs then is the
 * uprobe's own: the trap, the kernel's uprobe handling, the single step
 * of the displaced instruction, and a BPF program's call.  bench/perhit.sh
 * runs it as its "empty" mode.
 *
 * Usage: uprobe-empty [--multi] FILE OFFSET...
 *
 * --multi: the sites as one uprobe_multi link (BPF_TRACE_UPROBE_MULTI,
 * Linux 6.6), as mallocwatch's umulti-shim.so arms stapbpf's: the floor
 * of a tracer that attaches that way.
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

#include "umulti.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
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

	int multi = argc > 1 && strcmp(argv[1], "--multi") == 0;

	if (multi) {
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: uprobe-empty [--multi] FILE OFFSET...\n");
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
		static uint64_t offs[4096];

		for (int i = 2; i < argc && i - 2 < 4096; i++)
			offs[i - 2] = strtoull(argv[i], NULL, 0);
		if (argc - 2 > 4096 ||
		    mw_umulti_link(prog, argv[1], offs, NULL, (unsigned)(argc - 2), 0) < 0) {
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
