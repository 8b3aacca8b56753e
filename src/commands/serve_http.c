/* serve_http.c - serve's HTTP side (serve_http.h).
 *
 * Every connection libmicrohttpd accepts gets a struct conn (its
 * socket context, MHD_OPTION_NOTIFY_CONNECTION) on one list, with the
 * time it started waiting for a request; the access handler marks it
 * busy while its answer goes out (MHD_OPTION_NOTIFY_COMPLETED ends
 * that).  mw_http_run() then shuts down, with shutdown(2) on the
 * connection's socket, those past their bounds: libmicrohttpd sees the
 * end of the stream and closes the connection itself, so no descriptor
 * is closed behind its back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "mhd_load.h"
#include "msg.h"
#include "serve_http.h"
#include "serve_listen.h"
#include "webconfig.h"
#include "xalloc.h"

#define WARN_EVERY_S 60.0
#define CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define CT_TEXT "text/plain; version=0.0.4; charset=utf-8"

/* A connection: waiting for a whole request since `since`, or (busy)
 * sending the answer ready at `since`. */
struct conn {
	struct conn *prev, *next;
	int fd;
	double since;
	int busy, shut;
};

struct mw_http {
	struct mw_http_opts o;
	struct MHD_Daemon *d;
	struct mw_webconfig *wc;
	struct mw_listen ls;
	struct conn *conns;
	size_t live;			/* on the list and not shut down */
	double timeout_s;
	/* warnings: one a minute at most, the rest summed */
	double warned_at;
	unsigned long more, slow, evicted, unread;
	char last[256];
	int starting;
	char start_msg[512];
};

/* --- warnings --------------------------------------------------------- */

/* The warnings waiting, when none was said within the last minute (or
 * now_anyway): libmicrohttpd's messages, the connections shut down. */
static void sum_up(struct mw_http *h, int now_anyway)
{
	double now = mw_now_s();
	char shut[256] = "";
	size_t n = 0;

	if (!h->more && !h->slow && !h->unread && !h->evicted)
		return;
	if (!now_anyway && h->warned_at != 0 && now - h->warned_at < WARN_EVERY_S)
		return;
	if (h->more == 1)
		mw_warn("http: %s", h->last);
	else if (h->more)
		mw_warn("http: %lu messages from libmicrohttpd, the last: %s", h->more, h->last);
	if (h->slow)
		n += (size_t)snprintf(shut + n, sizeof(shut) - n, ", %lu that sent no whole request "
				      "within %.3g s", h->slow, h->timeout_s);
	if (h->unread)
		n += (size_t)snprintf(shut + n, sizeof(shut) - n, ", %lu that did not take their "
				      "answer within %.3g s", h->unread, MW_HTTP_ANSWER_S);
	if (h->evicted)
		snprintf(shut + n, sizeof(shut) - n, ", %lu to make room (%d connections at most)",
			 h->evicted, MW_HTTP_CONNECTIONS);
	if (shut[0])
		mw_warn("http: connections shut down: %s", shut + 2);
	h->warned_at = now;
	h->more = h->slow = h->evicted = h->unread = 0;
}

static void say(struct mw_http *h, const char *msg)
{
	if (h->starting) {
		snprintf(h->start_msg, sizeof(h->start_msg), "%s", msg);
		return;
	}
	h->more++;
	snprintf(h->last, sizeof(h->last), "%s", msg);
	sum_up(h, 0);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];
	size_t len;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	while (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	say(cls, buf);
}

/* --- the connections -------------------------------------------------- */

static void shut(struct mw_http *h, struct conn *k, unsigned long *count)
{
	shutdown(k->fd, SHUT_RDWR);
	k->shut = 1;
	h->live--;
	(*count)++;
}

/* Past MW_HTTP_CONNECTIONS - MW_HTTP_SPARE: the connection that has
 * waited longest for a request (not fresh) goes. */
static void make_room(struct mw_http *h, const struct conn *fresh)
{
	struct conn *old = NULL;

	if (h->live <= MW_HTTP_CONNECTIONS - MW_HTTP_SPARE)
		return;
	for (struct conn *k = h->conns; k; k = k->next)
		if (k != fresh && !k->shut && !k->busy && (!old || k->since < old->since))
			old = k;
	if (old)
		shut(h, old, &h->evicted);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	struct mw_http *h = cls;
	struct conn *k = *ctx;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		k = xcalloc(1, sizeof(*k));
		k->fd = ci ? ci->connect_fd : -1;
		k->since = mw_now_s();
		k->shut = k->fd < 0;	/* never: libmicrohttpd knows its socket */
		k->next = h->conns;
		if (h->conns)
			h->conns->prev = k;
		h->conns = k;
		h->live += !k->shut;
		*ctx = k;
		make_room(h, k);
	} else if (k) {
		if (k->prev)
			k->prev->next = k->next;
		else
			h->conns = k->next;
		if (k->next)
			k->next->prev = k->prev;
		h->live -= !k->shut;
		free(k);
		*ctx = NULL;
	}
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode why)
{
	struct conn *k = conn_of(c);

	(void)cls;
	(void)req;
	(void)why;
	if (k) {
		k->busy = 0;
		k->since = mw_now_s();
	}
}

/* Shut down the connections past their bounds. */
static void sweep(struct mw_http *h)
{
	double now = mw_now_s();

	for (struct conn *k = h->conns; k; k = k->next) {
		if (k->shut)
			continue;
		if (!k->busy && now - k->since > h->timeout_s)
			shut(h, k, &h->slow);
		else if (k->busy && now - k->since > MW_HTTP_ANSWER_S)
			shut(h, k, &h->unread);
	}
}

/* --- answers ---------------------------------------------------------- */

static enum MHD_Result queue(struct mw_http *h, struct MHD_Connection *c, unsigned status,
			     const char *type, struct MHD_Response *r)
{
	const char *name, *value;
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	for (size_t i = 0; mw_webconfig_header(h->wc, i, &name, &value); i++)
		MHD_add_response_header(r, name, value);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_TOO_MANY_REQUESTS)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	if (status == MHD_HTTP_UNAUTHORIZED)
		ret = MHD_queue_basic_auth_fail_response(c, "mallocwatch", r);
	else
		ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* An answer of status with body (static text, copied) and type. */
static enum MHD_Result reply(struct mw_http *h, struct MHD_Connection *c, unsigned status,
			     const char *type, const char *body)
{
	return queue(h, c, status, type, MHD_create_response_from_buffer(strlen(body),
				(void *)body, MHD_RESPMEM_MUST_COPY));
}

/* --budget, or less when the scraper says how long it waits. */
static long scrape_budget(const struct mw_http *h, struct MHD_Connection *c)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    "X-Prometheus-Scrape-Timeout-Seconds");
	char *end;
	double t = v ? strtod(v, &end) : 0;
	long ms;

	if (!v || end == v || !(t > 0 && t < 86400))
		return h->o.budget_ms;
	ms = (long)(t * 1e3) - 250;
	return ms >= 100 && ms < h->o.budget_ms ? ms : h->o.budget_ms;
}

static enum MHD_Result metrics(struct mw_http *h, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_ACCEPT);
	int om = accept && strstr(accept, "application/openmetrics-text");
	char err[PATH_MAX + 512], *body = NULL;
	struct MHD_Response *r;
	size_t len = 0;
	int got = h->o.metrics(h->o.ctx, scrape_budget(h, c), om, &body, &len, err, sizeof(err));

	if (got == 1)
		return reply(h, c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
			     "mallocwatch is stopping\n");
	if (got < 0) {
		mw_warn("%s", err);
		strcat(err, "\n");
		return reply(h, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", err);
	}
	r = MHD_create_response_from_buffer_with_free_callback(len, body, free);
	if (!r)
		free(body);
	return queue(h, c, MHD_HTTP_OK, om ? CT_OPENMETRICS : CT_TEXT, r);
}

/* basic_auth_users: MHD_YES to go on, else the answer is queued (*ret). */
static int authorized(struct mw_http *h, struct MHD_Connection *c, enum MHD_Result *ret)
{
	char *pass = NULL, *user;
	enum mw_auth a = MW_AUTH_DENIED;

	if (!mw_webconfig_needs_auth(h->wc))
		return 1;
	user = MHD_basic_auth_get_username_password(c, &pass);
	if (user && pass)
		a = mw_webconfig_check(h->wc, user, pass);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	if (a == MW_AUTH_OK)
		return 1;
	*ret = a == MW_AUTH_BUSY ?
	       reply(h, c, MHD_HTTP_TOO_MANY_REQUESTS, "text/plain",
		     "too many password checks: try again in a second\n") :
	       reply(h, c, MHD_HTTP_UNAUTHORIZED, "text/plain", "unauthorized\n");
	return 0;
}

static enum MHD_Result answer(struct mw_http *h, struct MHD_Connection *c, const char *url,
			      const char *method)
{
	enum MHD_Result ret;

	if (!authorized(h, c, &ret))
		return ret;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "only GET and HEAD\n");
	if (!strcmp(url, "/"))
		return reply(h, c, MHD_HTTP_OK, "text/html; charset=utf-8",
			     "<html><head><title>mallocwatch</title></head><body>"
			     "<p><a href=\"/metrics\">/metrics</a>: glibc allocator state</p>"
			     "</body></html>\n");
	if (strcmp(url, "/metrics"))
		return reply(h, c, MHD_HTTP_NOT_FOUND, "text/plain", "not found: try /metrics\n");
	return metrics(h, c);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req)
{
	struct mw_http *h = cls;
	struct conn *k = conn_of(c);
	double t0 = mw_now_s(), held;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	(void)req;
	if (*upload_size) {	/* a body: not ours to read */
		*upload_size = 0;
		return MHD_YES;
	}
	ret = answer(h, c, url, method);
	/* the others waited while this one was answered: not their time */
	held = mw_now_s() - t0;
	for (struct conn *o = h->conns; o; o = o->next)
		o->since += held;
	if (k) {
		k->busy = 1;
		k->since = mw_now_s();
	}
	return ret;
}

/* --- the daemon ------------------------------------------------------- */

/* The options of MHD_start_daemon for h, into v (at least 16). */
static void options(struct mw_http *h, struct MHD_OptionItem *v)
{
	const char *cert, *key, *prio;
	size_t n = 0;

	v[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER,
					  (intptr_t)on_mhd_log, h };
	v[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, h->ls.fd, NULL };
	v[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, MW_HTTP_CONNECTIONS, NULL };
	/* the idle timeout, whole seconds: serve's own bounds are finer */
	v[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT,
					  (intptr_t)(h->timeout_s + 1), NULL };
	v[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION,
					  (intptr_t)on_connection, h };
	v[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED,
					  (intptr_t)on_completed, h };
	if (!h->ls.loopback && !h->ls.unix_path[0])
		v[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
						  MW_HTTP_PER_IP, NULL };
	if (mw_webconfig_tls(h->wc, &cert, &key, &prio)) {
		v[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert };
		v[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key };
		v[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)prio };
	}
	v[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
}

/* The library, the configuration file, the features they need. */
static void load(struct mw_http *h)
{
	char err[PATH_MAX + 512];
	const char *cert, *key, *prio;

	if (mw_mhd_load(err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) != MHD_YES)
		mw_die(MW_EXIT_RUNTIME, "serve needs a libmicrohttpd built with epoll");
	if (h->o.web_config && !(h->wc = mw_webconfig_load(h->o.web_config, err, sizeof(err))))
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (mw_webconfig_tls(h->wc, &cert, &key, &prio) &&
	    MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		mw_die(MW_EXIT_RUNTIME, "--web.config.file '%s' asks for TLS, and this "
		       "libmicrohttpd is built without it", h->o.web_config);
}

struct mw_http *mw_http_start(const struct mw_http_opts *o)
{
	struct mw_http *h = xcalloc(1, sizeof(*h));
	struct MHD_OptionItem opts[16];
	char err[PATH_MAX + 256];
	const char *cert, *key, *prio;
	int tls;

	h->o = *o;
	h->timeout_s = (double)o->request_timeout_ms / 1e3;
	if (mw_listen_parse(o->listen, o->socket_mode, &h->ls, err, sizeof(err)) < 0)
		mw_usage_error("%s", err);
	if (!h->ls.loopback && !h->ls.unix_path[0] && !o->allow_remote)
		mw_usage_error("--listen %s is not a loopback address: the metrics name every "
			       "process and cgroup read; add --allow-remote to serve it there", o->listen);
	load(h);
	tls = mw_webconfig_tls(h->wc, &cert, &key, &prio);
	if (mw_listen_open(&h->ls, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	options(h, opts);
	h->starting = 1;
	h->d = MHD_start_daemon(MHD_USE_ERROR_LOG | MHD_USE_EPOLL | (tls ? MHD_USE_TLS : 0),
				0, NULL, NULL, on_request, h, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	h->starting = 0;
	if (!h->d) {	/* it may have closed the socket: its file goes all the same */
		h->ls.fd = -1;
		mw_listen_close(&h->ls);
		mw_die(MW_EXIT_RUNTIME, "cannot serve on '%s'%s%s%s", o->listen,
		       tls ? " with the certificate and key of --web.config.file" : "",
		       h->start_msg[0] ? ": " : "", h->start_msg);
	}
	if (h->ls.unix_path[0])
		mw_note("serving %s://localhost/metrics on the unix socket %s (mode %04o)",
			tls ? "https" : "http", h->ls.name, (unsigned)h->ls.mode);
	else
		mw_note("serving %s://%s/metrics", tls ? "https" : "http", h->ls.name);
	if (mw_webconfig_needs_auth(h->wc))
		mw_note("every request needs a user and password of basic_auth_users");
	return h;
}

int mw_http_fd(const struct mw_http *h)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);

	return di ? di->epoll_fd : -1;
}

long mw_http_wait_ms(struct mw_http *h)
{
	MHD_UNSIGNED_LONG_LONG mt;
	double w = 1.0, now = mw_now_s();

	if (MHD_get_timeout(h->d, &mt) == MHD_YES && (double)mt / 1e3 < w)
		w = (double)mt / 1e3;
	for (struct conn *k = h->conns; k; k = k->next) {
		double due = k->since + (k->busy ? MW_HTTP_ANSWER_S : h->timeout_s) - now;

		if (!k->shut && due < w)
			w = due;
	}
	return w > 0 ? (long)(w * 1e3) + 1 : 0;
}

void mw_http_run(struct mw_http *h)
{
	MHD_run(h->d);
	sweep(h);
	sum_up(h, 0);
}

void mw_http_stop(struct mw_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);	/* closes the listening socket */
	h->ls.fd = -1;
	mw_listen_close(&h->ls);
	sum_up(h, 1);
	mw_webconfig_free(h->wc);
	free(h);
}
