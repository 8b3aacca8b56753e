/* webconfig.h - the web configuration file of Prometheus exporters
 * (exporter-toolkit's docs/web-configuration.md, `--web.config.file`),
 * as `mallocwatch serve` takes it: the subset below, read once when serve
 * starts.
 *
 *	tls_server_config:
 *	  cert_file: server.crt      # or cert: the PEM text itself
 *	  key_file: server.key       # or key: (not encrypted)
 *	  min_version: TLS12         # TLS10 TLS11 TLS12 TLS13, default TLS12
 *	  max_version: TLS13         # default TLS13
 *	  client_auth_type: NoClientCert   # the only value taken
 *	http_server_config:
 *	  http2: true                # taken and ignored: HTTP/1.1 only
 *	  headers:                   # added to every answer
 *	    X-Content-Type-Options: nosniff
 *	basic_auth_users:            # bcrypt ($2a$, $2b$, $2y$), cost 4-14
 *	  alice: $2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze
 *
 * Relative file names are taken from the configuration file's directory,
 * as exporter-toolkit does.  Everything else - client certificates
 * (client_ca_file, client_allowed_sans, other client_auth_types), cipher
 * suites, curves, rate_limit, unknown keys, a key given twice - is
 * refused with one line naming the key and its line, never ignored.  An
 * empty file is no TLS and no authentication, as in exporter-toolkit.
 *
 * Passwords are checked with crypt(3) (libxcrypt: crypt_rn).  A bcrypt
 * check costs about 80 ms at cost 10 here, in serve's one thread, so:
 * a user and password that passed are kept (at most 16 pairs, in
 * memory) and pass again without bcrypt; checks that are not kept get
 * at most a quarter of the time (a bucket of 1 s of bcrypt, filled at
 * 0.25 s a second); past that, MW_AUTH_BUSY (serve answers 429).
 */
#ifndef MALLOCWATCH_WEBCONFIG_H
#define MALLOCWATCH_WEBCONFIG_H

#include <stddef.h>

struct mw_webconfig;

/* The answers of mw_webconfig_check(). */
enum mw_auth { MW_AUTH_OK, MW_AUTH_DENIED, MW_AUTH_BUSY };

/* Read and check path.  The configuration, or NULL with one line in err
 * ("--web.config.file 'F': line 3: ...").  The file and those it names
 * are opened without blocking and must be regular files of at most
 * 1 MiB. */
struct mw_webconfig *mw_webconfig_load(const char *path, char *err, size_t errlen);

void mw_webconfig_free(struct mw_webconfig *wc);

/* 1 with TLS (*cert and *key PEM text, *priorities a GnuTLS priority
 * string of the versions allowed), else 0. */
int mw_webconfig_tls(const struct mw_webconfig *wc, const char **cert, const char **key,
		     const char **priorities);

/* 1 when requests must carry a user and password of basic_auth_users. */
int mw_webconfig_needs_auth(const struct mw_webconfig *wc);

/* Is user with pass one of basic_auth_users (see above)? */
enum mw_auth mw_webconfig_check(struct mw_webconfig *wc, const char *user, const char *pass);

/* The i-th header of http_server_config.headers: 1 with *name and
 * *value, 0 past the last. */
int mw_webconfig_header(const struct mw_webconfig *wc, size_t i, const char **name,
			const char **value);

#endif /* MALLOCWATCH_WEBCONFIG_H */
