/* cmd_serve.c - `mallocwatch serve`: the allocator state of the selected
 * processes (-p, --cgroup, --all: snapmulti.h) as metrics for Prometheus
 * (report_metrics.h), served over HTTP at /metrics (serve_http.h) and/or
 * written for node_exporter's textfile collector every --interval.
 *
 * One thread does the work, in one poll(2) loop: the HTTP connections
 * (libmicrohttpd's epoll set, driven from here) and the textfile's
 * clock.  So one scrape is served at a time; a scrape reads the
 * processes again unless the last reading is younger than
 * --min-interval, and ends its reading within --budget (less when the
 * scraper says its timeout, X-Prometheus-Scrape-Timeout-Seconds),
 * counted from the request: the reads stop RESERVE_MS (at most) before
 * it, and the processes not read by then are counted as not read
 * (timeout).
 *
 * SIGINT and SIGTERM are blocked in every thread and taken by one
 * thread of their own (watch_signals): it tells the loop (an eventfd,
 * and a flag a reading looks at between processes), and if the loop
 * has not ended STOP_GRACE_S later, or a second signal comes, it ends
 * serve itself (status 1, the textfile removed): a signal always ends
 * serve, whatever the loop is blocked in.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cmd.h"
#include "glibcinfo.h"
#include "msg.h"
#include "proclist.h"
#include "procsel.h"
#include "report_metrics.h"
#include "serve_http.h"
#include "serve_probes.h"
#include "snapmulti.h"
#include "snapshot.h"
#include "view.h"
#include "xalloc.h"

static const char serve_usage[] =
"Usage: mallocwatch serve [--listen [ADDR:]PORT|unix:PATH] [--textfile DIR] [--probes] -p PID[,PID...] | --cgroup DIR | --all\n"
"\n"
"Serve the allocator state of running processes as metrics for\n"
"Prometheus: at http://ADDR:PORT/metrics, each scrape a fresh snapshot\n"
"(as `mallocwatch snapshot` takes it) in OpenMetrics text when the\n"
"scraper asks for it, else in Prometheus text format 0.0.4; and/or in\n"
"DIR/mallocwatch.prom, replaced atomically every --interval, for\n"
"node_exporter's textfile collector.  Per arena: system, in use, free,\n"
"trimmable bytes, top chunk, heaps; per process: arenas and the arena\n"
"limit, mmapped chunks, thresholds; processes not read, by reason.\n"
"Labels: pid, command, cgroup, container (and arena, main).\n"
"\n"
"Who can read them: on a TCP address, everyone who can connect to it -\n"
"by default (127.0.0.1) every local user - unless --web.config.file asks\n"
"for a user and password (and TLS); on a unix socket, those its mode\n"
"lets in (default root alone); the textfile, those who can read DIR\n"
"(the file is 0644).\n"
"\n"
"With --probes, also counters since each process was traced, from one\n"
"tracer session (SystemTap, as `mallocwatch -p` runs it): arenas\n"
"created, arena reuses, arena lock waits, allocation retries, heaps\n"
"created and freed, heap grows and shrinks, sbrk calls and bytes.  Only\n"
"processes that map the probe-enabled libc file traced have them\n"
"(mallocwatch_process_probes_traced 1); others have no counter series.\n"
"\n"
"Which processes (read again at each snapshot):\n"
"  -p, --pid PID[,PID...]  these processes (-p may be repeated)\n"
"  --cgroup DIR         every process in the cgroup directory DIR and its\n"
"                       child cgroups\n"
"  --all                every process on the host that maps a glibc\n"
"\n"
"Where:\n"
"  --listen [ADDR:]PORT serve HTTP on ADDR (default 127.0.0.1; [::1] for\n"
"                       IPv6; PORT 0: any free port, named on stderr)\n"
"  --listen unix:PATH   serve HTTP on a unix socket made at PATH, in a\n"
"                       directory only root can change (curl --unix-socket)\n"
"  --socket-mode MODE   the unix socket's mode (default 0600: root alone;\n"
"                       0660: the directory's group too)\n"
"  --allow-remote       let --listen take an address that is not loopback\n"
"                       (the metrics name every process and cgroup)\n"
"  --web.config.file FILE  TLS and basic authentication, in the Prometheus\n"
"                       exporters' web configuration format (a subset:\n"
"                       tls_server_config cert_file, key_file, min_version,\n"
"                       max_version; http_server_config headers;\n"
"                       basic_auth_users with bcrypt hashes); read once\n"
"  --request-timeout SECONDS  a connection that has not sent a whole request\n"
"                       this long after it opened (or after its last\n"
"                       answer) is closed (default 5); see CONNECTIONS\n"
"  --probes             run a tracer for the probe counters (off by default:\n"
"                       each probe hit costs the traced processes time)\n"
"  --textfile DIR       write DIR/mallocwatch.prom (0.0.4 text) every\n"
"                       --interval; removed at exit\n"
"  --interval SECONDS   the textfile's period (default 15)\n"
"\n"
"Time:\n"
"  --min-interval SECONDS  a scrape within this of the last reading is\n"
"                       served from it (default 1)\n"
"  --budget SECONDS     a scrape's reading, from its request to its metrics,\n"
"                       ends within this long (default 8, and at most the\n"
"                       scraper's timeout less 0.25 s): --all's look through\n"
"                       /proc and the reads end 0.1 s before (a quarter of it\n"
"                       under 0.4 s); processes not read by then are counted\n"
"                       as not read (timeout)\n"
"  --read-timeout SECONDS  give up on one process after this long (default 2)\n"
"  --no-stop            never stop a process for a consistent read (see\n"
"                       mallocwatch snapshot --help): one that cannot be read\n"
"                       consistently while it runs counts as inconsistent\n"
"                       (--all's default)\n"
"  --stop               --all: stop such a process for its read, as -p and\n"
"                       --cgroup do (ptrace, other users' processes too)\n"
MW_STOP_HELP(MW_XSTR(MW_SNAP_MAX_STOP_MS), MW_XSTR(MW_SNAP_MAX_STOPPED_MS))
"  -q, --quiet          no notes or warnings\n"
"  -v, --verbose        --probes: the tracer's messages, processes traced\n"
"\n"
"Connections: at most 256 at once; past 224, each new one closes the one\n"
"that has waited longest without a whole request.  An answer not taken\n"
"within 30 s closes its connection.  On an address that is not loopback,\n"
"at most 32 from one address.  Connections closed and libmicrohttpd's\n"
"messages are warned about at most once a minute, summed.  With\n"
"basic_auth_users, a user and password that passed are kept in memory\n"
"and pass again without bcrypt; other checks get at most a quarter of\n"
"the time (then 429 Too Many Requests).\n"
"\n"
"Exit status: 0 after SIGINT or SIGTERM; 1 when the address cannot be\n"
"bound, DIR or FILE cannot be read or FILE is refused, or serve did not\n"
"stop within 2 s of the signal (or got a second one) and ended itself;\n"
"2 on a usage error.  A process that cannot be read is never an error\n"
"of the whole: it is counted in mallocwatch_processes_unread and\n"
"mallocwatch_read_errors_total.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch serve --listen 9464 --all\n"
"  sudo mallocwatch serve --listen 127.0.0.1:9464 -p $(pidof -d, memcached)\n"
"  sudo mallocwatch serve --listen 9464 --probes --cgroup /sys/fs/cgroup/system.slice/app.service\n"
"  sudo mallocwatch serve --textfile /var/lib/prometheus/node-exporter --all\n"
"  sudo mallocwatch serve --listen 10.0.0.5:9464 --allow-remote --web.config.file /etc/mallocwatch/web.yml --all\n"
"  sudo mallocwatch serve --listen unix:/run/mallocwatch/metrics.sock --socket-mode 0660 --all\n";

enum {
	OPT_READ_TIMEOUT = 256, OPT_LISTEN, OPT_ALLOW_REMOTE, OPT_TEXTFILE,
	OPT_INTERVAL, OPT_MIN_INTERVAL, OPT_BUDGET, OPT_PROBES, OPT_WEB_CONFIG,
	OPT_SOCKET_MODE, OPT_REQUEST_TIMEOUT, OPT_STOP,
};

#define GLIBC_CACHE_SECONDS 60.0	/* libc layouts kept this long */
#define STOP_GRACE_S 2		/* after a signal, the loop's time to end */
#define RESERVE_MS 100		/* of a budget, at most, for the answer */
#define TEXTFILE_NAME "mallocwatch.prom"
#define TEXTFILE_TMP ".mallocwatch.prom."	/* + 12 random letters; not *.prom */

struct serve_opts {
	struct mw_pidlist pids;
	const char *cgroup, *listen, *textfile, *web_config, *socket_mode;
	int all, allow_remote, probes, verbose, stop, no_stop;
	long timeout_ms, budget_ms, min_interval_ms, interval_ms, request_timeout_ms;
};

/* The last reading and what has been counted since the start. */
struct serve {
	const struct serve_opts *o;
	struct mw_psnap *v;
	size_t n, seen, unlisted;	/* --all: /proc's processes looked at, and not */
	uint64_t *limits;		/* arena limit of each of v */
	uint64_t taken_ns;
	double seconds, read_at;	/* read_at: monotonic; 0: no reading yet */
	double cache_reset_at;
	uint64_t errors[MW_METRICS_NFAIL];
	struct mw_serve_probes *probes;	/* --probes; NULL without */
	int tf_errno;			/* the textfile's last failure warned about */
};

static void parse(int argc, char **argv, struct serve_opts *o)
{
	static const struct option lo[] = {
		MW_PROCSEL_LONG_OPTIONS,
		{ "quiet", no_argument, NULL, 'q' },
		{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
		{ "stop", no_argument, NULL, OPT_STOP },
		MW_STOP_LONG_OPTIONS,
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE },
		{ "web.config.file", required_argument, NULL, OPT_WEB_CONFIG },
		{ "socket-mode", required_argument, NULL, OPT_SOCKET_MODE },
		{ "request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT },
		{ "textfile", required_argument, NULL, OPT_TEXTFILE },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "min-interval", required_argument, NULL, OPT_MIN_INTERVAL },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "probes", no_argument, NULL, OPT_PROBES },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mw_procsel sel = { 0 };
	int c;

	while ((c = getopt_long(argc, argv, ":" MW_PROCSEL_SHORT "qvh", lo, NULL)) != -1) {
		if (mw_procsel_option(&sel, c, optarg))
			continue;
		switch (c) {
		case OPT_READ_TIMEOUT: o->timeout_ms = mw_seconds_option("--read-timeout", optarg); break;
		case OPT_LISTEN: o->listen = optarg; break;
		case OPT_ALLOW_REMOTE: o->allow_remote = 1; break;
		case OPT_WEB_CONFIG: o->web_config = optarg; break;
		case OPT_SOCKET_MODE: o->socket_mode = optarg; break;
		case OPT_REQUEST_TIMEOUT:
			o->request_timeout_ms = mw_seconds_option("--request-timeout", optarg);
			break;
		case OPT_TEXTFILE: o->textfile = optarg; break;
		case OPT_INTERVAL: o->interval_ms = mw_seconds_option("--interval", optarg); break;
		case OPT_MIN_INTERVAL:
			o->min_interval_ms = mw_seconds_option("--min-interval", optarg);
			break;
		case OPT_BUDGET: o->budget_ms = mw_seconds_option("--budget", optarg); break;
		case MW_OPT_MAX_STOP: case MW_OPT_MAX_STOPPED: case MW_OPT_STOP_SHARE:
			mw_stop_option(c, optarg);
			break;
		case OPT_STOP: o->stop = 1; break;
		case OPT_PROBES: o->probes = 1; break;
		case 'q': mw_quiet(1); break;
		case 'v': o->verbose = 1; break;
		case 'h': fputs(serve_usage, stdout); exit(MW_EXIT_OK);
		default: mw_bad_option(c, argv);
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s'", argv[optind]);
	mw_procsel_check(&sel, "serve", MW_SEL_PIDS | MW_SEL_CGROUP | MW_SEL_ALL |
			 MW_SEL_NO_STOP | MW_SEL_NEEDED);
	o->pids = sel.pids;	/* read again at each snapshot: --cgroup's and --all's too */
	o->cgroup = sel.cgroup;
	o->all = sel.all;
	o->no_stop = sel.no_stop;
	if (!o->listen && !o->textfile)
		mw_usage_error("serve needs --listen [ADDR:]PORT, --textfile DIR or both");
	if (!o->listen && (o->web_config || o->socket_mode || o->allow_remote))
		mw_usage_error("--web.config.file, --socket-mode and --allow-remote are for --listen");
	if (o->request_timeout_ms < 100)
		mw_usage_error("--request-timeout needs at least 0.1 s");
	if (o->stop && (!o->all || o->no_stop))
		mw_usage_error("--stop goes with --all (not with --no-stop)");
	if (o->all && !o->stop)	/* a whole-host view stops no one unasked */
		mw_snapshot_no_stop(1);
}

/* --- stopping ---------------------------------------------------------- */

static atomic_int stopping;	/* a SIGINT or SIGTERM came */
static atomic_int leaving;	/* the loop is over: serve is cleaning up */
static int stop_fd = -1;	/* an eventfd, written when stopping */
static int tf_dirfd = -1;	/* --textfile's directory */
static char tf_tmp[sizeof(TEXTFILE_TMP) + 16];	/* being written; "" when none */
static dev_t tf_dev;		/* the textfile written last */
static ino_t tf_ino;

static int stop_pending(void)
{
	return atomic_load(&stopping);
}

/* The end forced: the loop did not end in time, or a second signal. */
static void textfile_remove(void);

static noreturn void stop_now(int sig, int second)
{
	textfile_remove();
	mw_error("%s: %s; serve ends now", strsignal(sig), second ? "a second signal" :
		 "the loop did not end within 2 s");
	_exit(MW_EXIT_RUNTIME);
}

static void *watch_signals(void *arg)
{
	const sigset_t *set = arg;
	uint64_t one = 1;
	double deadline;
	siginfo_t si;
	int sig;

	while ((sig = sigwaitinfo(set, &si)) < 0)
		;
	atomic_store(&stopping, 1);
	if (write(stop_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow from 1 */
	}
	deadline = mw_now_s() + STOP_GRACE_S;
	for (;;) {
		double left = deadline - mw_now_s();
		struct timespec ts = { .tv_sec = (time_t)left,
				       .tv_nsec = (long)((left - (double)(time_t)left) * 1e9) };

		if (atomic_load(&leaving)) {	/* in time: a second signal still ends it */
			if (sigwaitinfo(set, &si) > 0)
				stop_now(sig, 1);
			continue;
		}
		if (left <= 0)
			stop_now(sig, 0);
		if (sigtimedwait(set, &si, &ts) > 0)
			stop_now(sig, 1);
	}
	return NULL;
}

/* SIGINT and SIGTERM blocked here (and in every thread made later) and
 * taken by watch_signals. */
static void watch_stop(void)
{
	static sigset_t set;
	pthread_attr_t a;
	pthread_t th;
	int e;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		mw_die(MW_EXIT_RUNTIME, "cannot watch for signals: %s", strerror(errno));
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&th, &a, watch_signals, &set);
	pthread_attr_destroy(&a);
	if (e)
		mw_die(MW_EXIT_RUNTIME, "cannot watch for signals: %s", strerror(e));
}

/* --- readings ---------------------------------------------------------- */

/* The arena count at which glibc stops making arenas (malloc/arena.c,
 * arena_get2): mp_.arena_max, else NARENAS_FROM_NCORES (8 per core on
 * 64 bits) of the CPUs the process may run on (2.34 on; before, those
 * online).  0 when unknown. */
static uint64_t arena_limit(const struct mw_psnap *ps)
{
	cpu_set_t set;
	long ncpu = -1;

	if (!ps->snap)
		return 0;
	if (ps->snap->arena_max)
		return ps->snap->arena_max;
	if ((ps->snap->glibc_minor == 0 || ps->snap->glibc_minor >= 34) &&
	    sched_getaffinity(ps->pid, sizeof(set), &set) == 0)
		ncpu = CPU_COUNT(&set);
	if (ncpu <= 0)
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	return ncpu > 0 ? (uint64_t)ncpu * 8 : 0;
}

static void forget(struct serve *s)
{
	for (size_t i = 0; i < s->n; i++)
		mw_psnap_release(&s->v[i]);
	free(s->v);
	free(s->limits);
	s->v = NULL;
	s->limits = NULL;
	s->n = 0;
}

/* Of a budget, the part kept for what follows the reads: the metrics
 * written (2 to 10 ms for 250 processes measured at load 26 on 2 CPUs)
 * and sent. */
static long reserve_ms(long budget_ms)
{
	return budget_ms / 4 < RESERVE_MS ? budget_ms / 4 : RESERVE_MS;
}

/* Read the processes of l into a new array (*n entries) by deadline
 * (mw_now_s()), several at once (snapmulti.h); those not read by then
 * are MW_PSNAP_TIMEOUT.  NULL when a stop signal came first. */
static struct mw_psnap *read_within(const struct serve_opts *o, const struct mw_pidlist *l,
				    double deadline, long budget_ms, size_t *n)
{
	struct mw_psnap_opts po = { .timeout_ms = o->timeout_ms, .budget_ms = budget_ms,
				    .deadline = deadline, .cancelled = stop_pending };

	*n = l->n;
	return mw_psnap_read_all(l->pids, l->n, &po);
}

/* The reading's end is serve's to keep: while it waits for its readers
 * and counts what they read, its thread is real-time when it may be
 * (root; SCHED_RESET_ON_FORK: the readers it starts are not).  A nice
 * value counts only within its autogroup: under load from other
 * sessions the thread woken at the deadline waited more than the
 * reserve for a CPU (t-serve-budget, 1 run in 11 beside stress-ng --cpu
 * 2 and a make check).  It sleeps meanwhile; after the deadline it has
 * O(processes) to do in memory.  1 when it is real-time now. */
static int rt_on(void)
{
	return sched_getscheduler(0) == SCHED_OTHER &&
	       sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK,
				  &(struct sched_param){ .sched_priority = 1 }) == 0;
}

static void rt_off(int rt)
{
	if (rt)
		sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){ .sched_priority = 0 });
}

/* A fresh reading into s unless the last is younger than --min-interval.
 * 0; 1 when a stop signal came; -1 with a reason in err when the
 * processes could not be listed (the last reading is kept). */
static int refresh(struct serve *s, long budget_ms, char *err, size_t errlen)
{
	const struct serve_opts *o = s->o;
	struct mw_pidlist fresh = { 0 };
	const struct mw_pidlist *l = &o->pids;
	double start = mw_now_s();
	/* the reads', and --all's list's, end: the budget's less its reserve */
	double deadline = start + (double)(budget_ms - reserve_ms(budget_ms)) / 1e3;
	struct mw_psnap *v;
	size_t n, seen = 0, unlisted = 0;
	int rt;
	uint64_t taken = mw_realtime_ns();

	if (s->read_at > 0 && start - s->read_at < (double)o->min_interval_ms / 1e3)
		return 0;
	if (start - s->cache_reset_at >= GLIBC_CACHE_SECONDS) {	/* libcs may be replaced */
		mw_glibc_cache_reset();
		s->cache_reset_at = start;
	}
	if (o->all || o->cgroup) {
		if ((o->all ? mw_pidlist_all_by(&fresh, &seen, &unlisted, deadline, err, errlen) :
		     mw_pidlist_cgroup(&fresh, o->cgroup, err, errlen)) < 0) {
			mw_pidlist_free(&fresh);
			return -1;
		}
		l = &fresh;
	}
	rt = rt_on();
	v = read_within(o, l, deadline, budget_ms, &n);
	mw_pidlist_free(&fresh);
	if (!v) {
		rt_off(rt);
		return 1;
	}
	if (o->all || o->cgroup)	/* gone before it was read: not selected any more */
		mw_psnap_drop_vanished(v, &n);
	forget(s);
	s->v = v;
	s->n = n;
	s->seen = seen;
	s->unlisted = unlisted;
	s->taken_ns = taken;
	s->read_at = mw_now_s();
	s->seconds = s->read_at - start;
	s->limits = xcalloc(n ? n : 1, sizeof(*s->limits));
	for (size_t i = 0; i < n; i++) {
		s->limits[i] = arena_limit(&v[i]);
		if (!v[i].snap && (unsigned)v[i].fail < MW_METRICS_NFAIL)
			s->errors[v[i].fail]++;
	}
	rt_off(rt);
	return 0;
}

/* The last reading as metrics, a new buffer of *len bytes; NULL when
 * out of memory. */
static char *render(const struct serve *s, int openmetrics, size_t *len)
{
	struct mw_metrics_info info = {
		.openmetrics = openmetrics, .seen = s->seen,
		.unlisted = s->unlisted, .taken_ns = s->taken_ns,
		.seconds = s->seconds, .errors_total = s->errors, .arena_limit = s->limits,
	};
	struct mw_metrics_probes pb = { 0 };
	int *traced = NULL;
	uint64_t *c = NULL;
	char *buf = NULL;
	FILE *m = NULL;

	if (s->probes) {	/* the counters now, after the reading */
		traced = xcalloc(s->n ? s->n : 1, sizeof(*traced));
		c = xcalloc(s->n ? s->n * MW_VK_COUNT : 1, sizeof(*c));
		for (size_t i = 0; i < s->n; i++)
			traced[i] = mw_serve_probes_of(s->probes, s->v[i].pid, c + i * MW_VK_COUNT);
		pb = (struct mw_metrics_probes){ .tracing = mw_serve_probes_tracing(s->probes),
						 .traced = traced, .c = c };
		info.probes = &pb;
	}
	if (!(m = open_memstream(&buf, len)) || mw_metrics_write(m, s->v, s->n, &info) < 0) {
		if (m)
			fclose(m);
		free(buf);
		buf = NULL;
	} else if (fclose(m) == EOF) {
		free(buf);
		buf = NULL;
	}
	free(traced);
	free(c);
	return buf;
}

/* --probes: the processes served now (serve_probes.h), from its thread:
 * -p's that are still there, --cgroup's, --all's. */
static int list_served(void *ctx, struct mw_pidlist *l)
{
	const struct serve_opts *o = ctx;
	char err[PATH_MAX + 128];

	if (o->all)
		return mw_pidlist_all(l, NULL, err, sizeof(err));
	if (o->cgroup)
		return mw_pidlist_cgroup(l, o->cgroup, err, sizeof(err));
	for (size_t i = 0; i < o->pids.n; i++) {
		char pid[16];

		snprintf(pid, sizeof(pid), "%d", (int)o->pids.pids[i]);
		if (kill(o->pids.pids[i], 0) == 0 && mw_pidlist_parse(l, pid, err, sizeof(err)) < 0)
			return -1;
	}
	return 0;
}

/* The metrics for a scrape (serve_http.h's mw_http_metrics_fn). */
static int scrape(void *ctx, long budget_ms, int openmetrics, char **body, size_t *len,
		  char *err, size_t errlen)
{
	struct serve *s = ctx;
	int got = refresh(s, budget_ms, err, errlen);

	if (got)
		return got;
	if (!(*body = render(s, openmetrics, len))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* --- the textfile ------------------------------------------------------ */

/* Write all of buf to fd: 0, or -1 with errno set. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* A new file of a name no one could guess (TEXTFILE_TMP and random
 * letters, in tf_tmp), made by this open (O_EXCL): nothing another user
 * put in DIR - a FIFO, a link, a file of theirs - is ever opened. */
static int open_temp(int dirfd)
{
	static const char az[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	unsigned char r[12];

	for (int tries = 0; tries < 8; tries++) {
		int fd;

		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -1;
		memcpy(tf_tmp, TEXTFILE_TMP, sizeof(TEXTFILE_TMP) - 1);
		for (size_t i = 0; i < sizeof(r); i++)
			tf_tmp[sizeof(TEXTFILE_TMP) - 1 + i] = az[r[i] % (sizeof(az) - 1)];
		tf_tmp[sizeof(TEXTFILE_TMP) - 1 + sizeof(r)] = '\0';
		fd = openat(dirfd, tf_tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK |
			    O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST) {
			if (fd < 0)
				tf_tmp[0] = '\0';
			return fd;
		}
	}
	tf_tmp[0] = '\0';
	return -1;
}

/* body (len bytes) into DIR/mallocwatch.prom, through a new file renamed
 * over it: 0, or -1 with errno set. */
static int textfile_put(int dirfd, const char *body, size_t len)
{
	int fd = open_temp(dirfd), e;
	struct stat sb;

	if (fd < 0)
		return -1;
	if (write_all(fd, body, len) < 0 || fsync(fd) < 0 || fstat(fd, &sb) < 0 ||
	    renameat(dirfd, tf_tmp, dirfd, TEXTFILE_NAME) < 0) {
		e = errno;
		close(fd);
		unlinkat(dirfd, tf_tmp, 0);
		tf_tmp[0] = '\0';
		errno = e;
		return -1;
	}
	tf_tmp[0] = '\0';
	tf_dev = sb.st_dev;
	tf_ino = sb.st_ino;
	return close(fd);
}

/* DIR/mallocwatch.prom from a fresh reading.  0 (also when it failed:
 * warned about, once until it works again), 1 when a stop signal came. */
static int textfile_write(struct serve *s, int dirfd)
{
	const char *dir = s->o->textfile;
	char err[PATH_MAX + 512], *body;
	size_t len;
	int r = refresh(s, s->o->budget_ms, err, sizeof(err));

	if (r)
		return r < 0 ? (mw_warn("%s; %s/%s not written", err, dir, TEXTFILE_NAME), 0) : 1;
	if (!(body = render(s, 0, &len))) {
		mw_warn("out of memory; %s/%s not written", dir, TEXTFILE_NAME);
		return 0;
	}
	if (textfile_put(dirfd, body, len) == 0) {
		s->tf_errno = 0;
	} else if (errno != s->tf_errno) {
		s->tf_errno = errno;
		mw_warn("cannot write '%s/%s': %s (said once until it works again)", dir,
			TEXTFILE_NAME, strerror(errno));
	}
	free(body);
	return 0;
}

/* At exit: no stale figures left for the collector (the file only if it
 * is still the one written), nor a file half written. */
static void textfile_remove(void)
{
	struct stat sb;

	if (tf_dirfd < 0)
		return;
	if (tf_ino && fstatat(tf_dirfd, TEXTFILE_NAME, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    sb.st_ino == tf_ino && sb.st_dev == tf_dev)
		unlinkat(tf_dirfd, TEXTFILE_NAME, 0);
	if (tf_tmp[0])
		unlinkat(tf_dirfd, tf_tmp, 0);
}

/* --- the loop ---------------------------------------------------------- */

/* The loop: HTTP, textfile, until a stop signal. */
static int serve_loop(struct serve *s, struct mw_http *h, int dirfd)
{
	double next = dirfd >= 0 ? mw_now_s() : -1;
	struct pollfd p[2] = { { .fd = stop_fd, .events = POLLIN },
			       { .fd = h ? mw_http_fd(h) : -1, .events = POLLIN } };

	for (;;) {
		long w = h ? mw_http_wait_ms(h) : 1000;

		if (next >= 0 && (next - mw_now_s()) * 1e3 < (double)w)
			w = next > mw_now_s() ? (long)((next - mw_now_s()) * 1e3) + 1 : 0;
		if (poll(p, 2, (int)w) < 0 && errno != EINTR) {
			mw_error("poll: %s", strerror(errno));
			return MW_EXIT_RUNTIME;
		}
		if (stop_pending())
			return MW_EXIT_OK;
		if (h)
			mw_http_run(h);
		if (next >= 0 && mw_now_s() >= next) {
			if (textfile_write(s, dirfd))
				return MW_EXIT_OK;
			next += (double)s->o->interval_ms / 1e3;
			if (next < mw_now_s())	/* a reading took longer than the period */
				next = mw_now_s() + (double)s->o->interval_ms / 1e3;
		}
	}
}

int cmd_serve(int argc, char **argv)
{
	struct serve_opts o = { .timeout_ms = MW_SNAP_TIMEOUT_MS, .budget_ms = 8000,
				.min_interval_ms = 1000, .interval_ms = 15000,
				.request_timeout_ms = 5000 };
	struct serve s = { .o = &o };
	struct mw_http *h = NULL;
	int dirfd = -1, status;

	parse(argc, argv, &o);
	watch_stop();
	if (o.textfile &&
	    (dirfd = open(o.textfile, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		mw_die(MW_EXIT_RUNTIME, "cannot open '%s': %s", o.textfile, strerror(errno));
	tf_dirfd = dirfd;
	if (o.listen) {
		struct mw_http_opts ho = {
			.listen = o.listen, .allow_remote = o.allow_remote,
			.web_config = o.web_config, .socket_mode = o.socket_mode,
			.request_timeout_ms = o.request_timeout_ms, .budget_ms = o.budget_ms,
			.metrics = scrape, .ctx = &s,
		};

		h = mw_http_start(&ho);
	}
	if (o.probes) {	/* after the signals are blocked: its thread inherits that */
		char err[256];

		if (!(s.probes = mw_serve_probes_start(list_served, &o, o.verbose, err,
						       sizeof(err))))
			mw_die(MW_EXIT_RUNTIME, "%s", err);
	}
	status = serve_loop(&s, h, dirfd);
	atomic_store(&leaving, 1);
	mw_serve_probes_stop(s.probes);
	mw_http_stop(h);
	if (dirfd >= 0) {
		textfile_remove();
		tf_dirfd = -1;
		close(dirfd);
	}
	forget(&s);
	mw_pidlist_free(&o.pids);
	return status;
}
