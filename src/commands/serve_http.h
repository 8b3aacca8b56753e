/* serve_http.h - the HTTP side of `mallocwatch serve`: libmicrohttpd
 * (mhd_load.h) with its epoll(7) set driven from serve's one thread
 * (mw_http_fd, mw_http_run), on a TCP address or a unix socket, with
 * TLS and basic authentication from a web configuration file
 * (webconfig.h).
 *
 * No client can hold the others out (each of these is a bound that
 * serve keeps, not libmicrohttpd's idle timeout alone, which a client
 * sending a byte a second never meets):
 *  - a connection must deliver a whole request within the request
 *    timeout of its start (or of the end of its last answer), and take
 *    its answer within MW_HTTP_ANSWER_S of it being ready; else serve
 *    shuts the connection down.  Time serve spends reading processes
 *    for a scrape is not counted against the others;
 *  - up to MW_HTTP_CONNECTIONS connections; past MW_HTTP_CONNECTIONS -
 *    MW_HTTP_SPARE, each new one makes serve shut down the connection
 *    that has waited longest without a whole request;
 *  - on an address that is not loopback, at most MW_HTTP_PER_IP from one
 *    address (on loopback every local user is 127.0.0.1, the scraper
 *    among them: a per-address limit would hand them the scraper's
 *    place);
 *  - libmicrohttpd's messages and the connections shut down are
 *    warnings at most once a minute: the first message, then a line
 *    that sums the rest (and at exit).
 */
#ifndef MALLOCWATCH_SERVE_HTTP_H
#define MALLOCWATCH_SERVE_HTTP_H

#include <stddef.h>

#define MW_HTTP_CONNECTIONS 256
#define MW_HTTP_SPARE 32
#define MW_HTTP_PER_IP 32
#define MW_HTTP_ANSWER_S 30.0

/* The metrics for a scrape: 0 with a new buffer in *body (*len bytes,
 * OpenMetrics text when openmetrics, else 0.0.4); 1 when serve is
 * stopping; -1 with a reason in err.  budget_ms: how long the reading
 * may take (--budget, or less when the scraper says its timeout). */
typedef int (*mw_http_metrics_fn)(void *ctx, long budget_ms, int openmetrics, char **body,
				  size_t *len, char *err, size_t errlen);

struct mw_http_opts {
	const char *listen;		/* [ADDR:]PORT, or unix:PATH */
	int allow_remote;		/* an ADDR that is not loopback */
	const char *web_config;		/* --web.config.file, or NULL */
	const char *socket_mode;	/* unix:PATH's mode (octal), NULL: 0600 */
	long request_timeout_ms;
	long budget_ms;
	mw_http_metrics_fn metrics;
	void *ctx;
};

struct mw_http;

/* Load libmicrohttpd and the web configuration, listen, and say where
 * on stderr ("serving http://127.0.0.1:9464/metrics").  A bad --listen
 * or file is a usage error or a runtime error: one line, and exit. */
struct mw_http *mw_http_start(const struct mw_http_opts *o);

/* The descriptor to wait on (readable: call mw_http_run). */
int mw_http_fd(const struct mw_http *h);

/* At most how long the loop may wait before it calls mw_http_run,
 * milliseconds (at most 1000). */
long mw_http_wait_ms(struct mw_http *h);

/* Serve what is ready, then shut down connections past their bounds. */
void mw_http_run(struct mw_http *h);

/* Close every connection and the socket (a unix socket's file is
 * removed), sum up the warnings. */
void mw_http_stop(struct mw_http *h);

#endif /* MALLOCWATCH_SERVE_HTTP_H */
