/* cmd_serve.c - `mallocwatch serve`: the allocator state of the selected
 * processes (-p, --cgroup, --all: snapmulti.h) as metrics for Prometheus
 * (report_metrics.h), served over HTTP at /metrics (libmicrohttpd) and/or
 * written for node_exporter's textfile collector every --interval.
 *
 * One thread does everything, in one select(2) loop: the HTTP
 * connections (libmicrohttpd driven from outside, MHD_run_from_select),
 * the SIGINT/SIGTERM that end it (blocked, read from a signalfd) and the
 * textfile's clock.  So one scrape is served at a time; a scrape reads
 * the processes again unless the last reading is younger than
 * --min-interval, and stops reading within --budget (less when the
 * scraper says its timeout, X-Prometheus-Scrape-Timeout-Seconds): the
 * processes not reached by then are counted as not read (timeout).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>


#include "clock.h"
#include "cmd.h"
#include "glibcinfo.h"
#include "mhd_load.h"
#include "msg.h"
#include "proclist.h"
#include "report_metrics.h"
#include "serve_probes.h"
#include "snapmulti.h"
#include "snapshot.h"
#include "xalloc.h"

static const char serve_usage[] =
"Usage: mallocwatch serve [--listen [ADDR:]PORT] [--textfile DIR] [--probes] -p PID[,PID...] | --cgroup DIR | --all\n"
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
"With --probes, also counters since each process was traced, from one\n"
"tracer session (SystemTap, as `mallocwatch -p` runs it): arenas\n"
"created, arena reuses, arena lock waits, allocation retries, heaps\n"
"created and freed, heap grows and shrinks, sbrk calls and bytes.  Only\n"
"processes that map the probe-enabled libc file traced have them\n"
"(mallocwatch_process_probes_traced 1); others have no counter series.\n"
"\n"
"Which processes (read again at each snapshot):\n"
"  -p PID[,PID...]      these processes (-p may be repeated)\n"
"  --cgroup DIR         every process in the cgroup directory DIR and its\n"
"                       child cgroups\n"
"  --all                every process on the host that maps a glibc\n"
"\n"
"Where:\n"
"  --listen [ADDR:]PORT serve HTTP on ADDR (default 127.0.0.1; [::1] for\n"
"                       IPv6; PORT 0: any free port, named on stderr)\n"
"  --allow-remote       let --listen take an address that is not loopback\n"
"                       (the metrics name every process and cgroup)\n"
"  --probes             run a tracer for the probe counters (off by default:\n"
"                       each probe hit costs the traced processes time)\n"
"  --textfile DIR       write DIR/mallocwatch.prom (0.0.4 text) every\n"
"                       --interval; removed at exit\n"
"  --interval SECONDS   the textfile's period (default 15)\n"
"\n"
"Time:\n"
"  --min-interval SECONDS  a scrape within this of the last reading is\n"
"                       served from it (default 1)\n"
"  --budget SECONDS     a reading stops after this long (default 8, and at\n"
"                       most the scraper's timeout less 0.25 s); processes\n"
"                       not reached are counted as not read (timeout)\n"
"  --read-timeout SECONDS  give up on one process after this long (default 2)\n"
"  --no-stop            never stop a process for a consistent read (see\n"
"                       mallocwatch snapshot --help): one that cannot be read\n"
"                       consistently while it runs counts as inconsistent\n"
MW_STOP_HELP(MW_XSTR(MW_SNAP_MAX_STOP_MS), MW_XSTR(MW_SNAP_MAX_STOPPED_MS))
"  -q, --quiet          no notes or warnings\n"
"  -v, --verbose        --probes: the tracer's messages, processes traced\n"
"\n"
"Exit status: 0 after SIGINT or SIGTERM; 1 when the address cannot be\n"
"bound or DIR cannot be opened; 2 on a usage error.  A process that\n"
"cannot be read is never an error of the whole: it is counted in\n"
"mallocwatch_processes_unread and mallocwatch_read_errors_total.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch serve --listen 9464 --all\n"
"  sudo mallocwatch serve --listen 127.0.0.1:9464 -p $(pidof -d, memcached)\n"
"  sudo mallocwatch serve --listen 9464 --probes --cgroup /sys/fs/cgroup/system.slice/app.service\n"
"  sudo mallocwatch serve --textfile /var/lib/prometheus/node-exporter --all\n"
"  sudo mallocwatch serve --listen 10.0.0.5:9464 --allow-remote --cgroup /sys/fs/cgroup/system.slice\n";

enum {
	OPT_READ_TIMEOUT = 256, OPT_CGROUP, OPT_ALL, OPT_LISTEN, OPT_ALLOW_REMOTE, OPT_TEXTFILE,
	OPT_INTERVAL, OPT_MIN_INTERVAL, OPT_BUDGET, OPT_NO_STOP, OPT_PROBES,
};

#define GLIBC_CACHE_SECONDS 60.0	/* libc layouts kept this long */
#define TEXTFILE_NAME "mallocwatch.prom"
#define TEXTFILE_TMP ".mallocwatch.prom.tmp"	/* not *.prom: not collected */
#define CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define CT_TEXT "text/plain; version=0.0.4; charset=utf-8"

struct serve_opts {
	struct mw_pidlist pids;
	const char *cgroup, *listen, *textfile;
	int all, allow_remote, probes, verbose;
	long timeout_ms, budget_ms, min_interval_ms, interval_ms;
};

/* The last reading and what has been counted since the start. */
struct serve {
	const struct serve_opts *o;
	struct mw_psnap *v;
	size_t n, seen;
	uint64_t *limits;		/* arena limit of each of v */
	uint64_t taken_ns;
	double seconds, read_at;	/* read_at: monotonic; 0: no reading yet */
	double cache_reset_at;
	uint64_t errors[MW_METRICS_NFAIL];
	struct mw_serve_probes *probes;	/* --probes; NULL without */
};

static void parse(int argc, char **argv, struct serve_opts *o)
{
	static const struct option lo[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
		{ "no-stop", no_argument, NULL, OPT_NO_STOP },
		MW_STOP_LONG_OPTIONS,
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE },
		{ "textfile", required_argument, NULL, OPT_TEXTFILE },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "min-interval", required_argument, NULL, OPT_MIN_INTERVAL },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "probes", no_argument, NULL, OPT_PROBES },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[256];
	int c;

	while ((c = getopt_long(argc, argv, ":p:qvh", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (mw_pidlist_parse(&o->pids, optarg, err, sizeof(err)) < 0)
				mw_usage_error("%s", err);
			break;
		case OPT_READ_TIMEOUT: o->timeout_ms = mw_seconds_option("--read-timeout", optarg); break;
		case OPT_CGROUP: o->cgroup = optarg; break;
		case OPT_ALL: o->all = 1; break;
		case OPT_LISTEN: o->listen = optarg; break;
		case OPT_ALLOW_REMOTE: o->allow_remote = 1; break;
		case OPT_TEXTFILE: o->textfile = optarg; break;
		case OPT_INTERVAL: o->interval_ms = mw_seconds_option("--interval", optarg); break;
		case OPT_MIN_INTERVAL:
			o->min_interval_ms = mw_seconds_option("--min-interval", optarg);
			break;
		case OPT_BUDGET: o->budget_ms = mw_seconds_option("--budget", optarg); break;
		case MW_OPT_MAX_STOP: case MW_OPT_MAX_STOPPED: case MW_OPT_STOP_SHARE:
			mw_stop_option(c, optarg);
			break;
		case OPT_NO_STOP: mw_snapshot_no_stop(1); break;
		case OPT_PROBES: o->probes = 1; break;
		case 'q': mw_quiet(1); break;
		case 'v': o->verbose = 1; break;
		case 'h': fputs(serve_usage, stdout); exit(MW_EXIT_OK);
		default: mw_bad_option(c, argv);
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s'", argv[optind]);
	if ((o->pids.n > 0) + !!o->cgroup + o->all != 1)
		mw_usage_error("serve needs one of -p PID, --cgroup DIR and --all");
	if (!o->listen && !o->textfile)
		mw_usage_error("serve needs --listen [ADDR:]PORT, --textfile DIR or both");
}

/* "[ADDR:]PORT", ADDR a numeric IPv4 address, "[IPv6]" or "localhost",
 * into *ss (127.0.0.1 when ADDR is left out).  0, or -1 with a reason in
 * err. */
static int parse_listen(const char *arg, struct sockaddr_storage *ss, char *err, size_t errlen)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	const char *colon = strrchr(arg, ':'), *port = colon ? colon + 1 : arg;
	char host[64] = "127.0.0.1", *end;
	size_t hl = colon ? (size_t)(colon - arg) : 0;
	unsigned long p;

	memset(ss, 0, sizeof(*ss));
	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p > 65535 || port[0] == '-' || port[0] == '+') {
		snprintf(err, errlen, "--listen needs [ADDR:]PORT with PORT 0 to 65535, not '%s'", arg);
		return -1;
	}
	if (hl >= 2 && arg[0] == '[' && arg[hl - 1] == ']')
		arg++, hl -= 2;
	if (hl >= sizeof(host)) {
		snprintf(err, errlen, "--listen: the address in '%s' is too long", arg);
		return -1;
	}
	if (hl) {
		memcpy(host, arg, hl);
		host[hl] = '\0';
	}
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)p);
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)p);
	} else {
		snprintf(err, errlen, "--listen needs a numeric address (or localhost), not '%s'", host);
		return -1;
	}
	return 0;
}

static int is_loopback(const struct sockaddr_storage *ss)
{
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;

	if (ss->ss_family == AF_INET)
		return ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24 == 127;
	return IN6_IS_ADDR_LOOPBACK(a6) || (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

/* A SIGINT or SIGTERM is waiting (they are blocked: see serve_loop). */
static int stop_pending(void)
{
	sigset_t p;

	return sigpending(&p) == 0 && (sigismember(&p, SIGINT) || sigismember(&p, SIGTERM));
}

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

/* Read the processes of l into a new array (*n entries) within
 * budget_ms; those not reached in time are MW_PSNAP_TIMEOUT.  NULL when
 * a stop signal came first. */
static struct mw_psnap *read_within(const struct serve_opts *o, const struct mw_pidlist *l,
				    long budget_ms, size_t *n)
{
	struct mw_psnap *v = xcalloc(l->n ? l->n : 1, sizeof(*v));
	double deadline = mw_now_s() + (double)budget_ms / 1e3;

	for (*n = 0; *n < l->n; (*n)++) {
		long left = (long)((deadline - mw_now_s()) * 1e3);
		struct mw_psnap *ps = &v[*n];

		if (stop_pending()) {
			for (size_t i = 0; i < *n; i++)
				mw_psnap_release(&v[i]);
			free(v);
			return NULL;
		}
		if (left < 1) {
			ps->pid = l->pids[*n];
			snprintf(ps->comm, sizeof(ps->comm), "?");
			ps->fail = MW_PSNAP_TIMEOUT;
			snprintf(ps->err, sizeof(ps->err), "process %d not read: the snapshot's "
				 "budget of %.3g s was spent", (int)ps->pid, (double)budget_ms / 1e3);
			continue;
		}
		mw_psnap_read(ps, l->pids[*n], left < o->timeout_ms ? left : o->timeout_ms);
	}
	return v;
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
	struct mw_psnap *v;
	size_t n, seen = 0;
	uint64_t taken = mw_realtime_ns();

	if (s->read_at > 0 && start - s->read_at < (double)o->min_interval_ms / 1e3)
		return 0;
	if (start - s->cache_reset_at >= GLIBC_CACHE_SECONDS) {	/* libcs may be replaced */
		mw_glibc_cache_reset();
		s->cache_reset_at = start;
	}
	if (o->all || o->cgroup) {
		if ((o->all ? mw_pidlist_all(&fresh, &seen, err, errlen) :
		     mw_pidlist_cgroup(&fresh, o->cgroup, err, errlen)) < 0) {
			mw_pidlist_free(&fresh);
			return -1;
		}
		l = &fresh;
	}
	v = read_within(o, l, budget_ms, &n);
	mw_pidlist_free(&fresh);
	if (!v)
		return 1;
	if (o->all || o->cgroup)	/* gone before it was read: not selected any more */
		mw_psnap_drop_vanished(v, &n);
	forget(s);
	s->v = v;
	s->n = n;
	s->seen = seen;
	s->taken_ns = taken;
	s->read_at = mw_now_s();
	s->seconds = s->read_at - start;
	s->limits = xcalloc(n ? n : 1, sizeof(*s->limits));
	for (size_t i = 0; i < n; i++) {
		s->limits[i] = arena_limit(&v[i]);
		if (!v[i].snap && (unsigned)v[i].fail < MW_METRICS_NFAIL)
			s->errors[v[i].fail]++;
	}
	return 0;
}

/* The last reading as metrics, a new buffer of *len bytes; NULL when
 * out of memory. */
static char *render(const struct serve *s, int openmetrics, size_t *len)
{
	struct mw_metrics_info info = {
		.openmetrics = openmetrics, .seen = s->seen, .taken_ns = s->taken_ns,
		.seconds = s->seconds, .errors_total = s->errors, .arena_limit = s->limits,
	};
	struct mw_metrics_probes pb = { 0 };
	int *traced = NULL;
	struct mw_counters *c = NULL;
	char *buf = NULL;
	FILE *m = NULL;

	if (s->probes) {	/* the counters now, after the reading */
		traced = xcalloc(s->n ? s->n : 1, sizeof(*traced));
		c = xcalloc(s->n ? s->n : 1, sizeof(*c));
		for (size_t i = 0; i < s->n; i++)
			traced[i] = mw_serve_probes_of(s->probes, s->v[i].pid, &c[i]);
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

/* Queue a response of status with body (copied; static text) and type. */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     const char *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* --budget, or less when the scraper says how long it waits. */
static long scrape_budget(const struct serve_opts *o, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    "X-Prometheus-Scrape-Timeout-Seconds");
	char *end;
	double t = h ? strtod(h, &end) : 0;
	long ms;

	if (!h || end == h || !(t > 0 && t < 86400))
		return o->budget_ms;
	ms = (long)(t * 1e3) - 250;
	return ms >= 100 && ms < o->budget_ms ? ms : o->budget_ms;
}

static enum MHD_Result serve_metrics(struct serve *s, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_ACCEPT);
	int om = accept && strstr(accept, "application/openmetrics-text");
	char err[PATH_MAX + 512], *body;
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len;
	int got = refresh(s, scrape_budget(s->o, c), err, sizeof(err));

	if (got == 1)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "mallocwatch is stopping\n");
	if (got < 0) {
		mw_warn("%s", err);
		strcat(err, "\n");
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", err);
	}
	if (!(body = render(s, om, &len)))
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", "out of memory\n");
	r = MHD_create_response_from_buffer_with_free_callback(len, body, free);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, om ? CT_OPENMETRICS : CT_TEXT);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req)
{
	(void)version;
	(void)upload;
	(void)req;
	if (*upload_size) {	/* a body: not ours to read */
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "only GET and HEAD\n");
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8",
			     "<html><head><title>mallocwatch</title></head><body>"
			     "<p><a href=\"/metrics\">/metrics</a>: glibc allocator state</p>"
			     "</body></html>\n");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found: try /metrics\n");
	return serve_metrics(cls, c);
}

/* libmicrohttpd's own messages, as warnings. */
/* While the daemon starts, its last message is kept for the one line
 * that says why it could not (libmicrohttpd's own names "port 0" when it
 * binds an address given whole). */
static int mhd_starting;
static char mhd_start_msg[512];

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];
	size_t len;

	(void)cls;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	while (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (mhd_starting) {
		snprintf(mhd_start_msg, sizeof(mhd_start_msg), "%s", buf);
		return;
	}
	mw_warn("http: %s", buf);
}

static struct MHD_Daemon *start_http(const struct serve_opts *o, struct serve *s)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *di;
	struct MHD_Daemon *d;
	char err[256], host[INET6_ADDRSTRLEN];
	unsigned port;

	if (parse_listen(o->listen, &ss, err, sizeof(err)) < 0)
		mw_usage_error("%s", err);
	if (!is_loopback(&ss) && !o->allow_remote)
		mw_usage_error("--listen %s is not a loopback address: the metrics name every "
			       "process and cgroup read; add --allow-remote to serve it there", o->listen);
	if (mw_mhd_load(err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	mhd_starting = 1;
	d = MHD_start_daemon(MHD_USE_ERROR_LOG | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
			     0, NULL, NULL, on_request, s,
			     MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,	/* first */
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
			     MHD_OPTION_END);
	mhd_starting = 0;
	if (!d) {	/* "Failed to bind to port 0: Address already in use": the reason */
		const char *why = strrchr(mhd_start_msg, ':');

		mw_die(MW_EXIT_RUNTIME, "cannot listen on '%s'%s%s", o->listen,
		       why ? ":" : mhd_start_msg[0] ? ": " : "", why ? why + 1 :
		       mhd_start_msg);
	}
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	port = di ? di->port : 0;
	inet_ntop(ss.ss_family, ss.ss_family == AF_INET ?
		  (const void *)&((struct sockaddr_in *)&ss)->sin_addr :
		  (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
	mw_note(ss.ss_family == AF_INET6 ? "serving http://[%s]:%u/metrics" :
		"serving http://%s:%u/metrics", host, port);
	return d;
}

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

/* DIR/mallocwatch.prom from a fresh reading, through a temporary file
 * renamed over it.  0 (also when it failed: warned about), 1 when a stop
 * signal came. */
static int textfile_write(struct serve *s, int dirfd)
{
	const char *dir = s->o->textfile;
	char err[PATH_MAX + 512], *body;
	size_t len;
	int fd, r = refresh(s, s->o->budget_ms, err, sizeof(err));

	if (r)
		return r < 0 ? (mw_warn("%s; %s/%s not written", err, dir, TEXTFILE_NAME), 0) : 1;
	if (!(body = render(s, 0, &len))) {
		mw_warn("out of memory; %s/%s not written", dir, TEXTFILE_NAME);
		return 0;
	}
	fd = openat(dirfd, TEXTFILE_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, body, len) < 0 || fsync(fd) < 0 || close(fd) < 0 ||
	    renameat(dirfd, TEXTFILE_TMP, dirfd, TEXTFILE_NAME) < 0) {
		int e = errno;

		if (fd >= 0) {
			close(fd);	/* EBADF when closed already: harmless */
			unlinkat(dirfd, TEXTFILE_TMP, 0);
		}
		mw_warn("cannot write '%s/%s': %s", dir, TEXTFILE_NAME, strerror(e));
	}
	free(body);
	return 0;
}

/* Milliseconds select may wait: until the textfile is due (next, or
 * -1 with none) or libmicrohttpd wants to run, at most a second. */
static struct timeval wait_for(struct MHD_Daemon *d, double next)
{
	MHD_UNSIGNED_LONG_LONG mt;
	double w = 1.0;
	struct timeval tv;

	if (next >= 0 && next - mw_now_s() < w)
		w = next - mw_now_s();
	if (d && MHD_get_timeout(d, &mt) == MHD_YES && (double)mt / 1e3 < w)
		w = (double)mt / 1e3;
	if (w < 0)
		w = 0;
	tv.tv_sec = (time_t)w;
	tv.tv_usec = (suseconds_t)((w - (double)tv.tv_sec) * 1e6);
	return tv;
}

/* The loop: HTTP, textfile, until SIGINT or SIGTERM (read from sfd). */
static int serve_loop(struct serve *s, struct MHD_Daemon *d, int sfd, int dirfd)
{
	double next = dirfd >= 0 ? mw_now_s() : -1;

	for (;;) {
		fd_set rs, ws, es;
		MHD_socket max = sfd;
		struct timeval tv;
		int n;

		FD_ZERO(&rs);
		FD_ZERO(&ws);
		FD_ZERO(&es);
		FD_SET(sfd, &rs);
		if (d && MHD_get_fdset(d, &rs, &ws, &es, &max) != MHD_YES) {
			mw_error("http: cannot wait for connections (too many descriptors)");
			return MW_EXIT_RUNTIME;
		}
		tv = wait_for(d, next);
		n = select(max + 1, &rs, &ws, &es, &tv);
		if (n < 0 && errno != EINTR) {
			mw_error("select: %s", strerror(errno));
			return MW_EXIT_RUNTIME;
		}
		if (stop_pending() || (n > 0 && FD_ISSET(sfd, &rs)))
			return MW_EXIT_OK;
		if (d && n >= 0)
			MHD_run_from_select(d, &rs, &ws, &es);
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
				.min_interval_ms = 1000, .interval_ms = 15000 };
	struct serve s = { .o = &o };
	struct MHD_Daemon *d = NULL;
	sigset_t stop;
	int sfd, dirfd = -1, status;

	parse(argc, argv, &o);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &stop, NULL) < 0 ||
	    (sfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		mw_die(MW_EXIT_RUNTIME, "cannot watch for signals: %s", strerror(errno));
	if (o.textfile &&
	    (dirfd = open(o.textfile, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		mw_die(MW_EXIT_RUNTIME, "cannot open '%s': %s", o.textfile, strerror(errno));
	if (o.listen)
		d = start_http(&o, &s);
	if (o.probes) {	/* after the signals are blocked: its thread inherits that */
		char err[256];

		if (!(s.probes = mw_serve_probes_start(list_served, &o, o.verbose, err,
						       sizeof(err))))
			mw_die(MW_EXIT_RUNTIME, "%s", err);
	}
	status = serve_loop(&s, d, sfd, dirfd);
	mw_serve_probes_stop(s.probes);
	if (d)
		MHD_stop_daemon(d);
	if (dirfd >= 0) {	/* no stale figures left for the collector */
		unlinkat(dirfd, TEXTFILE_NAME, 0);
		unlinkat(dirfd, TEXTFILE_TMP, 0);
		close(dirfd);
	}
	close(sfd);
	forget(&s);
	mw_pidlist_free(&o.pids);
	return status;
}
