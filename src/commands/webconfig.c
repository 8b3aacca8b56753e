/* webconfig.c - exporter-toolkit's web configuration file (webconfig.h),
 * read with libyaml's document API: the file is loaded into a tree of
 * nodes, walked below key by key, and every key is either one of the
 * subset or refused.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "clock.h"
#include "webconfig.h"
#include "xalloc.h"

#define FILE_MAX (1 << 20)	/* the configuration and the files it names */
#define AUTH_KEPT 16		/* user and password pairs that passed */
#define BCRYPT_COST_MAX 14	/* about 1.3 s a check here */
#define BUCKET_S 1.0		/* bcrypt time that may be spent at once */
#define REFILL_PER_S 0.25	/* and its share of the time after that */
#define NHEADERS 5

static const char *const header_names[NHEADERS] = {
	"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options",
	"X-XSS-Protection", "Strict-Transport-Security",
};

/* A user of basic_auth_users (secret: the bcrypt hash), or a user and
 * password that passed (secret: the password). */
struct wc_user {
	char *name, *secret;
};

struct mw_webconfig {
	char *cert, *key;		/* PEM; NULL: no TLS */
	char priorities[160];
	char *headers[NHEADERS];	/* by header_names; NULL: not set */
	struct wc_user *users;
	size_t nusers, ucap;
	struct wc_user kept[AUTH_KEPT];	/* passed */
	size_t nkept, next_kept;
	double tokens, filled_at;	/* the bcrypt bucket, seconds */
	struct crypt_data cd;
};

/* The walk: the document, what the messages name, where they go. */
struct wc_parse {
	yaml_document_t *doc;
	const char *path;
	char dir[PATH_MAX];
	char *err;
	size_t errlen;
	struct mw_webconfig *wc;
	int minv, maxv;			/* TLS1.minv .. TLS1.maxv */
	char *cert_file, *key_file;	/* as written */
};

__attribute__((format(printf, 3, 4)))
static int bad(struct wc_parse *p, const yaml_node_t *n, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (n)
		snprintf(p->err, p->errlen, "--web.config.file '%s': line %zu: %s", p->path,
			 n->start_mark.line + 1, what);
	else
		snprintf(p->err, p->errlen, "--web.config.file '%s': %s", p->path, what);
	return -1;
}

/* The whole of path (a regular file of at most FILE_MAX bytes, opened
 * without blocking or waiting on a FIFO), NUL-terminated, in *out. */
static int read_regular(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sb;
	char *buf = NULL;
	size_t got = 0;

	if (fd < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, errno == ELOOP ?
			 "it is a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > FILE_MAX) {
		snprintf(err, errlen, "'%s' is not a regular file of at most 1 MiB", path);
		goto fail;
	}
	/* it decides who may read serve and with which key: whoever may
	 * change it must be the one running serve (or root) */
	if ((sb.st_uid != 0 && sb.st_uid != getuid()) || (sb.st_mode & S_IWOTH)) {
		snprintf(err, errlen, "'%s' belongs to uid %u or is writable by others (mode %04o): "
			 "a web configuration must be root's (or yours) alone", path,
			 (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777));
		goto fail;
	}
	buf = xmalloc((size_t)sb.st_size + 1);
	while (got < (size_t)sb.st_size) {	/* a file that grows: what was there */
		ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

static int is_null(const yaml_node_t *n)
{
	const char *v;

	if (!n)
		return 1;
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	v = (const char *)n->data.scalar.value;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

/* The text of the scalar n, or NULL (refused, saying why) when n is not
 * one or holds a NUL byte. */
static const char *text(struct wc_parse *p, const yaml_node_t *n, const char *key)
{
	if (!n || n->type != YAML_SCALAR_NODE) {
		bad(p, n, "%s needs a string", key);
		return NULL;
	}
	if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
		bad(p, n, "%s holds a NUL byte", key);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

/* The pairs of the mapping n in turn (none when n is null): fn(p, key,
 * value) each, after checking that no key comes twice. */
typedef int (*pair_fn)(struct wc_parse *p, const char *key, yaml_node_t *k, yaml_node_t *v);

static int each_pair(struct wc_parse *p, yaml_node_t *n, const char *what, pair_fn fn)
{
	yaml_node_pair_t *a, *b;

	if (is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return bad(p, n, "%s needs a mapping of keys to values", what);
	for (a = n->data.mapping.pairs.start; a < n->data.mapping.pairs.top; a++) {
		yaml_node_t *k = yaml_document_get_node(p->doc, a->key);
		const char *key = text(p, k, "a key");

		if (!key)
			return -1;
		for (b = n->data.mapping.pairs.start; b < a; b++) {
			yaml_node_t *kb = yaml_document_get_node(p->doc, b->key);

			if (kb && kb->type == YAML_SCALAR_NODE &&
			    !strcmp((const char *)kb->data.scalar.value, key))
				return bad(p, k, "%s: '%s' given twice", what, key);
		}
		if (fn(p, key, k, yaml_document_get_node(p->doc, a->value)) < 0)
			return -1;
	}
	return 0;
}

static int tls_version(struct wc_parse *p, const char *key, yaml_node_t *v, int *out)
{
	static const char *const names[] = { "TLS10", "TLS11", "TLS12", "TLS13" };
	const char *s = text(p, v, key);

	if (!s)
		return -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	return bad(p, v, "tls_server_config.%s: '%s' is not TLS10, TLS11, TLS12 or TLS13", key, s);
}

/* The keys of tls_server_config: the subset, and those refused by name. */
static int tls_pair(struct wc_parse *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	static const char *const refused[] = { "client_ca", "client_ca_file",
		"client_allowed_sans", "cipher_suites", "curve_preferences" };
	char **slot = !strcmp(key, "cert") ? &p->wc->cert : !strcmp(key, "key") ? &p->wc->key :
		      !strcmp(key, "cert_file") ? &p->cert_file :
		      !strcmp(key, "key_file") ? &p->key_file : NULL;
	const char *s;

	if (slot) {
		if (!(s = text(p, v, key)))
			return -1;
		free(*slot);
		*slot = *s ? xstrdup(s) : NULL;
		return 0;
	}
	if (!strcmp(key, "min_version"))
		return tls_version(p, key, v, &p->minv);
	if (!strcmp(key, "max_version"))
		return tls_version(p, key, v, &p->maxv);
	if (!strcmp(key, "client_auth_type") || !strcmp(key, "prefer_server_cipher_suites")) {
		const char *only = key[0] == 'c' ? "NoClientCert" : "true";

		if (!(s = text(p, v, key)))
			return -1;
		return strcmp(s, only) ? bad(p, v, "tls_server_config.%s: only %s is supported, "
					     "not '%s'", key, only, s) : 0;
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (!strcmp(key, refused[i]))
			return bad(p, k, "tls_server_config.%s is not supported by mallocwatch "
				   "serve (no client certificates, GnuTLS's own ciphers and curves)", key);
	return bad(p, k, "unknown key '%s' in tls_server_config", key);
}

/* PEM text from inline (the cert: or key: value) or the file (relative
 * to the configuration's directory) into *pem. */
static int pem_of(struct wc_parse *p, char **pem, const char *file, const char *what)
{
	char path[PATH_MAX * 2], why[PATH_MAX + 128];
	size_t len;

	if (*pem && file)
		return bad(p, NULL, "tls_server_config: both %s and %s_file", what, what);
	if (*pem)
		return 0;
	if (!file)
		return bad(p, NULL, "tls_server_config: no %s_file (nor %s)", what, what);
	snprintf(path, sizeof(path), "%s%s", file[0] == '/' ? "" : p->dir, file);
	if (read_regular(path, pem, &len, why, sizeof(why)) < 0)
		return bad(p, NULL, "tls_server_config.%s_file: %s", what, why);
	return 0;
}

static int tls_section(struct wc_parse *p, yaml_node_t *v)
{
	struct mw_webconfig *wc = p->wc;
	size_t n;

	p->minv = 2;
	p->maxv = 3;
	if (each_pair(p, v, "tls_server_config", tls_pair) < 0)
		return -1;
	if (!wc->cert && !wc->key && !p->cert_file && !p->key_file)
		return 0;	/* as exporter-toolkit: no certificate, no TLS */
	if (pem_of(p, &wc->cert, p->cert_file, "cert") < 0 ||
	    pem_of(p, &wc->key, p->key_file, "key") < 0)
		return -1;
	if (strstr(wc->key, "ENCRYPTED"))
		return bad(p, NULL, "tls_server_config: the key is encrypted (it needs no password here)");
	if (p->minv > p->maxv)
		return bad(p, v, "tls_server_config: min_version is above max_version");
	n = (size_t)snprintf(wc->priorities, sizeof(wc->priorities), "NORMAL:-VERS-ALL");
	for (int i = p->maxv; i >= p->minv; i--)
		n += (size_t)snprintf(wc->priorities + n, sizeof(wc->priorities) - n,
				      ":+VERS-TLS1.%d", i);
	return 0;
}

static int header_pair(struct wc_parse *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	const char *s = is_null(v) ? "" : text(p, v, key);
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < NHEADERS && strcmp(key, header_names[i]); i++)
		;
	if (i == NHEADERS)
		return bad(p, k, "http_server_config.headers: '%s' is not one of "
			   "Content-Security-Policy, X-Frame-Options, X-Content-Type-Options, "
			   "X-XSS-Protection and Strict-Transport-Security", key);
	for (const char *c = s; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			return bad(p, v, "http_server_config.headers.%s: a byte that is not "
				   "printable ASCII", key);
	if ((i == 1 && *s && strcasecmp(s, "deny") && strcasecmp(s, "sameorigin")) ||
	    (i == 2 && *s && strcasecmp(s, "nosniff")))
		return bad(p, v, "http_server_config.headers.%s: '%s' is not %s", key, s,
			   i == 1 ? "deny or sameorigin" : "nosniff");
	p->wc->headers[i] = *s ? xstrdup(s) : NULL;
	return 0;
}

static int http_pair(struct wc_parse *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	const char *s;

	if (!strcmp(key, "headers"))
		return each_pair(p, v, "http_server_config.headers", header_pair);
	if (strcmp(key, "http2"))
		return bad(p, k, "unknown key '%s' in http_server_config", key);
	if (!(s = text(p, v, key)))
		return -1;
	return strcmp(s, "true") && strcmp(s, "false") ?
	       bad(p, v, "http_server_config.http2 needs true or false, not '%s'", s) : 0;
}

/* "$2b$10$" and 53 characters of bcrypt's base-64: the cost, else -1. */
static int bcrypt_cost(const char *h)
{
	static const char b64[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !h[2] || !strchr("aby", h[2]) ||
	    h[3] != '$' || h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] != '$' ||
	    strspn(h + 7, b64) != 53)
		return -1;
	return (h[4] - '0') * 10 + (h[5] - '0');
}

static int user_pair(struct wc_parse *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct mw_webconfig *wc = p->wc;
	const char *h = text(p, v, "a password hash");
	int cost;

	if (!h)
		return -1;
	if (!*key || strchr(key, ':'))
		return bad(p, k, "basic_auth_users: '%s' cannot be a user name (empty, or a colon)",
			   key);
	cost = bcrypt_cost(h);
	if (cost < 0)
		return bad(p, v, "basic_auth_users.%s: not a bcrypt hash ($2a$, $2b$ or $2y$, "
			   "60 characters)", key);
	if (cost < 4 || cost > BCRYPT_COST_MAX)
		return bad(p, v, "basic_auth_users.%s: bcrypt cost %d is not 4 to %d (each check "
			   "takes serve's one thread)", key, cost, BCRYPT_COST_MAX);
	xgrow((void **)&wc->users, wc->nusers + 1, &wc->ucap, sizeof(*wc->users));
	wc->users[wc->nusers++] = (struct wc_user){ .name = xstrdup(key), .secret = xstrdup(h) };
	return 0;
}

static int top_pair(struct wc_parse *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	if (!strcmp(key, "tls_server_config"))
		return tls_section(p, v);
	if (!strcmp(key, "http_server_config"))
		return each_pair(p, v, "http_server_config", http_pair);
	if (!strcmp(key, "basic_auth_users"))
		return each_pair(p, v, "basic_auth_users", user_pair);
	if (!strcmp(key, "rate_limit"))
		return bad(p, k, "rate_limit is not supported by mallocwatch serve (it reads "
			   "processes at most once per --min-interval)");
	return bad(p, k, "unknown key '%s' (mallocwatch serve takes tls_server_config, "
		   "http_server_config and basic_auth_users)", key);
}

/* Parse text (len bytes) into p->wc. */
static int parse_text(struct wc_parse *p, const char *text_, size_t len)
{
	yaml_parser_t parser;
	yaml_document_t doc, more;
	int r = -1;

	if (!yaml_parser_initialize(&parser))
		return bad(p, NULL, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text_, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(p->err, p->errlen, "--web.config.file '%s': line %zu: %s", p->path,
			 parser.problem_mark.line + 1, parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		return -1;
	}
	p->doc = &doc;
	if (yaml_parser_load(&parser, &more)) {
		int two = yaml_document_get_root_node(&more) != NULL;

		yaml_document_delete(&more);
		if (two) {
			bad(p, NULL, "more than one YAML document");
			goto out;
		}
	}
	r = each_pair(p, yaml_document_get_root_node(&doc), "the file", top_pair);
out:
	yaml_document_delete(&doc);
	p->doc = NULL;	/* doc was this function's (cppcheck: autoVariables) */
	yaml_parser_delete(&parser);
	return r;
}

struct mw_webconfig *mw_webconfig_load(const char *path, char *err, size_t errlen)
{
	struct wc_parse p = { .path = path, .err = err, .errlen = errlen };
	const char *slash = strrchr(path, '/');
	char *buf, why[PATH_MAX + 128];
	size_t len;
	int r;

	if (read_regular(path, &buf, &len, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "--web.config.file: %s", why);
		return NULL;
	}
	snprintf(p.dir, sizeof(p.dir), "%.*s", slash ? (int)(slash - path + 1) : 0, path);
	p.wc = xcalloc(1, sizeof(*p.wc));
	p.wc->tokens = BUCKET_S;
	p.wc->filled_at = mw_now_s();
	r = parse_text(&p, buf, len);
	free(buf);
	free(p.cert_file);
	free(p.key_file);
	if (r < 0) {
		mw_webconfig_free(p.wc);
		return NULL;
	}
	return p.wc;
}

static void free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void mw_webconfig_free(struct mw_webconfig *wc)
{
	if (!wc)
		return;
	free(wc->cert);
	free_secret(wc->key);
	for (size_t i = 0; i < NHEADERS; i++)
		free(wc->headers[i]);
	for (size_t i = 0; i < wc->nusers; i++) {
		free(wc->users[i].name);
		free(wc->users[i].secret);
	}
	for (size_t i = 0; i < wc->nkept; i++) {
		free(wc->kept[i].name);
		free_secret(wc->kept[i].secret);
	}
	free(wc->users);
	explicit_bzero(&wc->cd, sizeof(wc->cd));
	free(wc);
}

int mw_webconfig_tls(const struct mw_webconfig *wc, const char **cert, const char **key,
		     const char **priorities)
{
	if (!wc || !wc->cert)
		return 0;
	*cert = wc->cert;
	*key = wc->key;
	*priorities = wc->priorities;
	return 1;
}

int mw_webconfig_needs_auth(const struct mw_webconfig *wc)
{
	return wc && wc->nusers > 0;
}

int mw_webconfig_header(const struct mw_webconfig *wc, size_t i, const char **name,
			const char **value)
{
	size_t seen = 0;

	for (size_t k = 0; wc && k < NHEADERS; k++)
		if (wc->headers[k] && seen++ == i) {
			*name = header_names[k];
			*value = wc->headers[k];
			return 1;
		}
	return 0;
}

/* a and b equal, in a time that depends on their lengths only. */
static int same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = 0;

	if (la != lb)
		return 0;
	for (size_t i = 0; i < la; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* A pair that passed before. */
static int kept_pair(const struct mw_webconfig *wc, const char *user, const char *pass)
{
	int hit = 0;

	for (size_t i = 0; i < wc->nkept; i++)
		hit |= same_secret(wc->kept[i].name, user) & same_secret(wc->kept[i].secret, pass);
	return hit;
}

static void keep_pair(struct mw_webconfig *wc, const char *user, const char *pass)
{
	struct wc_user *k;

	if (wc->nkept < AUTH_KEPT) {
		k = &wc->kept[wc->nkept++];
	} else {	/* the oldest goes */
		k = &wc->kept[wc->next_kept];
		wc->next_kept = (wc->next_kept + 1) % AUTH_KEPT;
		free(k->name);
		free_secret(k->secret);
	}
	k->name = xstrdup(user);
	k->secret = xstrdup(pass);
}

enum mw_auth mw_webconfig_check(struct mw_webconfig *wc, const char *user, const char *pass)
{
	const struct wc_user *u = NULL;
	double now = mw_now_s(), t;
	const char *out;

	if (!wc->nusers || kept_pair(wc, user, pass))
		return wc->nusers ? MW_AUTH_OK : MW_AUTH_DENIED;
	wc->tokens += (now - wc->filled_at) * REFILL_PER_S;
	wc->filled_at = now;
	if (wc->tokens > BUCKET_S)
		wc->tokens = BUCKET_S;
	if (wc->tokens <= 0)
		return MW_AUTH_BUSY;
	for (size_t i = 0; i < wc->nusers && !u; i++)
		if (!strcmp(wc->users[i].name, user))
			u = &wc->users[i];
	/* an unknown user costs a check all the same: no timing tells them apart */
	out = crypt_rn(pass, u ? u->secret : wc->users[0].secret, &wc->cd, sizeof(wc->cd));
	t = mw_now_s();
	wc->tokens -= t - now;
	wc->filled_at = t;
	if (!u || !out || !same_secret(out, u->secret))
		return MW_AUTH_DENIED;
	keep_pair(wc, user, pass);
	return MW_AUTH_OK;
}
