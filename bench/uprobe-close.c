/* bench/uprobe-close.c - what arming and removing uprobes costs the
 * kernel, by interface, with no tracer in the way (bench/uprobes.sh).
 *
 * Usage: uprobe-close tracefs|pmu|multi FILE OFFSET...
 *
 * tracefs: as stapbpf does it (strace of stapbpf 4.8): one "p:NAME
 * FILE:OFFSET" line per site into uprobe_events, the event's id read
 * from events/uprobes/NAME/id, a PERF_TYPE_TRACEPOINT perf event opened
 * on it (pid -1, CPU 0); removal: every perf event closed, then "-:NAME"
 * per site.  pmu: as bpftrace and libbpf do it, a perf event of the
 * "uprobe" PMU (/sys/bus/event_source/devices/uprobe/type; config1 the
 * path, config2 the offset), removed by closing it.  multi: as
 * mallocwatch's umulti-shim.so arms stapbpf's sites (Linux 6.6 and
 * later): one BPF_TRACE_UPROBE_MULTI link for every site, carrying an
 * empty program (a link needs one), removed by closing it.  tracefs and
 * pmu attach no BPF program: a hit costs nothing here, only arming and
 * removal are timed.
 * Prints "MODE sites N arm S close S delete S" (seconds).  Exits 1 with
 * a line on stderr on any failure; the tracefs events it made are
 * removed before it exits, and a killed run's are named
 * mwbench_PID_N (bench/uprobes.sh removes them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uprobe_multi_link.h"

#define MAX_SITES 256
#define TRACING "/sys/kernel/debug/tracing"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int perf_open(struct perf_event_attr *a)
{
	return (int)syscall(__NR_perf_event_open, a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
}

static long read_num(const char *path)
{
	char buf[32] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

/* One uprobe_multi link (uprobe_multi_link.h) for the n sites, carrying an empty
 * program: its fd, or -1 with errno. */
static int multi_link(const char *path, unsigned long *off, int n)
{
	static uint64_t offs[MAX_SITES];
	int prog, fd, e;

	if ((prog = mw_umulti_empty_prog()) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		offs[i] = off[i];
	fd = mw_umulti_link(prog, path, offs, NULL, (unsigned)n, 0);
	e = errno;
	close(prog);
	errno = e;
	return fd;
}

int main(int argc, char **argv)
{
	static int fds[MAX_SITES];
	unsigned long off[MAX_SITES];
	int n = argc - 3, ev = -1, pmu = argc > 1 && strcmp(argv[1], "pmu") == 0, made = 0, at = 0;
	double t0, t1, t2, t3;
	long type = 0;

	int multi = argc > 1 && strcmp(argv[1], "multi") == 0;

	if (argc < 4 || n > MAX_SITES || (!pmu && !multi && strcmp(argv[1], "tracefs") != 0)) {
		fprintf(stderr, "usage: uprobe-close tracefs|pmu|multi FILE OFFSET... (at most %d)\n",
			MAX_SITES);
		return 1;
	}
	for (int i = 0; i < n; i++)
		off[i] = strtoul(argv[i + 3], NULL, 0);
	if (multi) {
		int fd;

		t0 = now();
		if ((fd = multi_link(argv[2], off, n)) < 0) {
			fprintf(stderr, "uprobe-close: multi: %s\n", strerror(errno));
			return 1;
		}
		t1 = now();
		close(fd);
		t2 = now();
		printf("multi sites %d arm %.4f close %.4f delete 0\n", n, t1 - t0, t2 - t1);
		return 0;
	}
	if (pmu && (type = read_num("/sys/bus/event_source/devices/uprobe/type")) < 0) {
		fprintf(stderr, "uprobe-close: no uprobe PMU\n");
		return 1;
	}
	if (!pmu && (ev = open(TRACING "/uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC)) < 0) {
		perror("uprobe-close: " TRACING "/uprobe_events");
		return 1;
	}
	t0 = now();
	for (int i = 0; i < n; i++) {
		struct perf_event_attr a = { .size = sizeof(a), .sample_period = 1 };
		char line[4200];

		at = i;
		if (pmu) {
			a.type = (unsigned)type;
			a.config1 = (unsigned long)argv[2];
			a.config2 = off[i];
		} else {
			int len = snprintf(line, sizeof(line), "p:mwbench_%d_%d %s:0x%lx",
					   (int)getpid(), i, argv[2], off[i]);

			if (write(ev, line, (size_t)len) != len)
				goto fail;
			made = i + 1;
			snprintf(line, sizeof(line), TRACING "/events/uprobes/mwbench_%d_%d/id",
				 (int)getpid(), i);
			a.type = PERF_TYPE_TRACEPOINT;
			if ((long)(a.config = (unsigned long)read_num(line)) < 0)
				goto fail;
		}
		if ((fds[i] = perf_open(&a)) < 0)
			goto fail;
	}
	t1 = now();
	for (int i = 0; i < n; i++)
		close(fds[i]);
	t2 = now();
	for (int i = 0; i < made; i++) {
		char line[64];
		int len = snprintf(line, sizeof(line), "-:mwbench_%d_%d", (int)getpid(), i);

		if (write(ev, line, (size_t)len) != len)
			perror("uprobe-close: removing an event");
	}
	t3 = now();
	printf("%s sites %d arm %.4f close %.4f delete %.4f\n", argv[1], n, t1 - t0, t2 - t1,
	       t3 - t2);
	return 0;
fail:
	fprintf(stderr, "uprobe-close: %s site %#lx: %s\n", argv[1], off[at], strerror(errno));
	for (int i = 0; i < made; i++) {
		char line[64];
		int len = snprintf(line, sizeof(line), "-:mwbench_%d_%d", (int)getpid(), i);

		if (write(ev, line, (size_t)len) != len)
			break;
	}
	return 1;
}
