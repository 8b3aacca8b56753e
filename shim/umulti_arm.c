/* umulti_arm.c - umulti-shim.so's sites armed: a BPF_MAP_TYPE_PROG_ARRAY
 * with each site's program at its index, a dispatcher that tail-calls
 * through it at the hit site's cookie, and one uprobe_multi link per
 * (file, pid) carrying the sites' offsets and cookies; made early, from
 * the sites mallocwatch wrote (MW_UMULTI_SITES), or at stapbpf's last
 * PERF_EVENT_IOC_SET_BPF; and closed.  The calls that lead here, and
 * what the shim is for, are umulti-shim.c's.
 *
 * The sites file is gen.h's sites_out, a line a site, its file offset
 * and its file (here memory_heap_more's site in the probe-enabled glibc,
 * which stands at the system's path in the traced program's namespace):
 *
 *	0x92d03 /lib/x86_64-linux-gnu/libc.so.6
 *
 * The link attributes are include/uapi/linux/bpf.h's
 * link_create.uprobe_multi (Linux 6.6).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "umulti_int.h"
#include "uprobe_multi.h"	/* the definitions alone: its calls are uprobe_multi_link.h's */

int armed;
static int links[64], nlinks, prog_map = -1, dispatch = -1;

/* The dispatcher: r0 = cookie; tail_call(ctx, map, r0); return 0. */
static int load_dispatch(int map)
{
	struct bpf_insn insns[MW_UMULTI_DISPATCH_LEN];
	union bpf_attr a;

	mw_umulti_prog_attr(&a, insns, mw_umulti_dispatch(insns, map));
	strncpy(a.prog_name, "mw_dispatch", sizeof(a.prog_name) - 1);
	return (int)sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
}

void disarm(void)
{
	int e = errno;

	for (int i = 0; i < nlinks; i++)
		real_close(links[i]);
	nlinks = 0;
	if (dispatch >= 0)
		real_close(dispatch);
	if (prog_map >= 0)
		real_close(prog_map);
	dispatch = prog_map = -1;
	errno = e;
}

/* One link per (file, pid) of the n sites - site i at offset offs[i] of
 * file paths[i], in process pids[i] (0, or pids NULL: every process) -
 * each running prog with cookie i.  Into out (max of them), *nout
 * counting them: 0, or -1 with errno (those made are in out). */
static int link_sites(int prog, unsigned n, char *const *paths, const uint64_t *offs,
		      const int *pids, int *out, int *nout, int max)
{
	static uint64_t o[MAX_SITES], cookies[MAX_SITES];
	static char done[MAX_SITES];

	memset(done, 0, n);
	for (unsigned i = 0; i < n; i++) {
		int pid = pids ? pids[i] : 0;
		struct mw_umulti_attr l;
		unsigned k = 0;
		int fd;

		if (done[i])
			continue;
		for (unsigned j = i; j < n; j++)
			if (!done[j] && (pids ? pids[j] : 0) == pid && strcmp(paths[j], paths[i]) == 0) {
				done[j] = 1;
				o[k] = offs[j];
				cookies[k++] = j;
			}
		if (*nout == max) {
			errno = E2BIG;
			return -1;
		}
		memset(&l, 0, sizeof(l));
		l.prog_fd = (uint32_t)prog;
		l.attach_type = MW_BPF_TRACE_UPROBE_MULTI;
		l.path = (uintptr_t)paths[i];
		l.offsets = (uintptr_t)o;
		l.cookies = (uintptr_t)cookies;
		l.cnt = k;
		l.pid = pid > 0 ? (uint32_t)pid : 0;
		if ((fd = (int)sys_bpf(BPF_LINK_CREATE, &l, sizeof(l))) < 0)
			return -1;
		out[(*nout)++] = fd;
	}
	return 0;
}

/* A BPF_MAP_TYPE_PROG_ARRAY of n slots: its fd, or -1 with errno. */
static int prog_array(unsigned n)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_PROG_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = n;
	strncpy(a.map_name, "mw_sites", sizeof(a.map_name) - 1);
	return (int)sys_bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

/* Slot k of prog array map: program prog.  0, or -1 with errno. */
static int put_prog(int map, uint32_t k, int prog)
{
	uint32_t v = (uint32_t)prog;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uintptr_t)&k;
	a.value = (uintptr_t)&v;
	return (int)sys_bpf(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
}

/* MW_UMULTI_LOG=FILE (the tests'): a line of what arming did. */
static void shim_log(const char *fmt, ...)
{
	int err = errno, lf = log_open("MW_UMULTI_LOG");
	char line[256];
	va_list ap;

	if (lf < 0) {
		errno = err;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	real_write(lf, line, strlen(line));
	real_close(lf);
	errno = err;
}

/* Sites armed early (MW_UMULTI_SITES, the file of "0xOFFSET PATH" lines
 * mallocwatch wrote beside the script: gen.h, sites_out).  A thread the
 * constructor starts makes the program array, the dispatcher and a link
 * per file while stapbpf loads its programs, every slot of the array
 * empty: a hit meanwhile tail-calls nothing and returns, as a site not
 * armed would.  A link's creation waits for an RCU grace period (each
 * uprobe_register takes dup_mmap_sem, a percpu rwsem, for writing, whose
 * first writer waits for one: 8 to 20 ms of a run's start on this
 * machine's HZ=250 kernel), which is then spent beside the loads instead
 * of after them.  At the last PERF_EVENT_IOC_SET_BPF, when stapbpf's
 * sites are exactly these (each the same file, by device and inode, and
 * offset, in every process), each site's program goes into its slot and
 * the sites are armed (use_prearmed); else the early links are closed and
 * arm() makes its own, as without the file. */
static struct {
	pthread_t thread;
	int started;		/* the thread was started (joined once) */
	unsigned n;
	char *path[MAX_SITES];
	uint64_t off[MAX_SITES];
	dev_t dev[MAX_SITES];
	ino_t ino[MAX_SITES];
	int map, prog, links[64], nlinks;
	char why[160];		/* why it is not armed; "" when it is */
} pre = { .map = -1, .prog = -1 };

static void prearm_close(void)
{
	for (int i = 0; i < pre.nlinks; i++)
		real_close(pre.links[i]);
	if (pre.prog >= 0)
		real_close(pre.prog);
	if (pre.map >= 0)
		real_close(pre.map);
	pre.nlinks = 0;
	pre.prog = pre.map = -1;
}

/* The file's lines into pre (a regular file, not followed through a
 * link; at most MAX_SITES, a path each under PATH_MAX, no more than
 * 1 MiB): 0, or -1 with pre.why. */
static int prearm_read(const char *file)
{
	static char buf[1 << 20];
	char *line, *next;
	ssize_t len = 0, r;
	struct stat fst;
	int fd = real_open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0) {
		snprintf(pre.why, sizeof(pre.why), "cannot open the sites: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &fst) < 0 || !S_ISREG(fst.st_mode)) {
		snprintf(pre.why, sizeof(pre.why), "the sites are not a regular file");
		real_close(fd);
		return -1;
	}
	while (len < (ssize_t)sizeof(buf) - 1 &&
	       (r = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += r;
	real_close(fd);
	buf[len] = '\0';
	for (line = buf; *line; line = next) {
		char *end, *path;
		struct stat st;
		uint64_t off;

		if (!(next = strchr(line, '\n'))) {
			snprintf(pre.why, sizeof(pre.why), "the sites end in a broken line");
			return -1;
		}
		*next++ = '\0';
		errno = 0;
		off = strtoull(line, &end, 16);
		if (errno || end == line || *end != ' ' || (path = end + 1)[0] != '/' ||
		    strlen(path) >= PATH_MAX || pre.n == MAX_SITES) {
			snprintf(pre.why, sizeof(pre.why), "bad sites line %u", pre.n + 1);
			return -1;
		}
		if (stat(path, &st) < 0 || !(pre.path[pre.n] = strdup(path))) {
			snprintf(pre.why, sizeof(pre.why), "site file: %s", strerror(errno));
			return -1;
		}
		pre.off[pre.n] = off;
		pre.dev[pre.n] = st.st_dev;
		pre.ino[pre.n++] = st.st_ino;
	}
	if (!pre.n) {
		snprintf(pre.why, sizeof(pre.why), "no sites");
		return -1;
	}
	return 0;
}

static void *prearm_thread(void *file)
{
	if (prearm_read(file) < 0)
		return NULL;
	if ((pre.map = prog_array(pre.n)) < 0 || (pre.prog = load_dispatch(pre.map)) < 0 ||
	    link_sites(pre.prog, pre.n, pre.path, pre.off, NULL, pre.links, &pre.nlinks,
		       (int)(sizeof(pre.links) / sizeof(pre.links[0]))) < 0) {
		snprintf(pre.why, sizeof(pre.why), "arming them: %s", strerror(errno));
		prearm_close();
	}
	return NULL;
}

/* Arm stapbpf's sites with the early links (see above): 0, or -1 with
 * pre.why (nothing of them left). */
static int use_prearmed(void)
{
	static char taken[MAX_SITES];
	static uint32_t slot[MAX_SITES];
	const char *last = NULL;
	struct stat st;

	pthread_join(pre.thread, NULL);
	pre.started = 0;
	if (pre.why[0])
		goto not_used;
	if (nsites != pre.n) {
		snprintf(pre.why, sizeof(pre.why), "stapbpf has %u sites, the file %u", nsites,
			 pre.n);
		goto not_used;
	}
	memset(taken, 0, pre.n);
	for (unsigned i = 0; i < nsites; i++) {
		unsigned p;

		if (sites[i].pid > 0) {
			snprintf(pre.why, sizeof(pre.why), "site %u is of process %d", i,
				 sites[i].pid);
			goto not_used;
		}
		if ((!last || strcmp(last, sites[i].path) != 0) && stat(sites[i].path, &st) < 0) {
			snprintf(pre.why, sizeof(pre.why), "site %u: %s", i, strerror(errno));
			goto not_used;
		}
		last = sites[i].path;
		for (p = 0; p < pre.n; p++)
			if (!taken[p] && pre.off[p] == sites[i].off && pre.dev[p] == st.st_dev &&
			    pre.ino[p] == st.st_ino)
				break;
		if (p == pre.n) {
			snprintf(pre.why, sizeof(pre.why), "site %u (%s:%#llx) is not in the file",
				 i, sites[i].path, (unsigned long long)sites[i].off);
			goto not_used;
		}
		taken[p] = 1;
		slot[i] = p;
	}
	for (unsigned i = 0; i < nsites; i++)
		if (put_prog(pre.map, slot[i], sites[i].prog) < 0) {
			snprintf(pre.why, sizeof(pre.why), "filling its slots: %s", strerror(errno));
			goto not_used;
		}
	prog_map = pre.map;
	dispatch = pre.prog;
	memcpy(links, pre.links, sizeof(pre.links[0]) * (size_t)pre.nlinks);
	nlinks = pre.nlinks;
	pre.map = pre.prog = -1;
	pre.nlinks = 0;
	shim_log("prearmed %u sites: used\n", pre.n);
	return 0;
not_used:
	shim_log("prearmed: not used: %s\n", pre.why);
	prearm_close();
	return -1;
}

void prearm_start(const char *file)
{
	if (pthread_create(&pre.thread, NULL, prearm_thread, (void *)file) == 0)
		pre.started = 1;
}

int arm(void)
{
	static char *paths[MAX_SITES];
	static uint64_t offs[MAX_SITES];
	static int pids[MAX_SITES];

	if (pre.started && use_prearmed() == 0) {
		armed = 1;
		return 0;
	}
	if ((prog_map = prog_array(nsites)) < 0)
		return -1;
	if ((dispatch = load_dispatch(prog_map)) < 0)
		goto fail;
	for (unsigned i = 0; i < nsites; i++) {
		if (put_prog(prog_map, i, sites[i].prog) < 0)
			goto fail;
		paths[i] = sites[i].path;
		offs[i] = sites[i].off;
		pids[i] = sites[i].pid;
	}
	if (link_sites(dispatch, nsites, paths, offs, pids, links, &nlinks,
		       (int)(sizeof(links) / sizeof(links[0]))) < 0)
		goto fail;
	armed = 1;
	return 0;
fail:
	disarm();
	return -1;
}
