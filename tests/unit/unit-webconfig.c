/* unit-webconfig.c - the web configuration file (src/commands/webconfig.c)
 * as a table of files, each taken or refused with the line it must say;
 * garbage among them (not YAML, a sequence at the top, NUL bytes, aliases,
 * two documents).  Then the password check: the right password passes,
 * a wrong one, an unknown user and an empty password do not; a pair that
 * passed passes again without bcrypt (fast even when the bucket is
 * empty); wrong passwords in a row empty the bucket (MW_AUTH_BUSY). */
#include <crypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "webconfig.h"

#define H10 "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"

static char dir[] = "/tmp/unit-webconfig.XXXXXX";

static const struct {
	const char *text;
	const char *err;	/* NULL: taken; else a part of the one line */
	int tls, auth;
} rows[] = {
	{ "", NULL, 0, 0 },
	{ "# nothing\n", NULL, 0, 0 },
	{ "basic_auth_users:\n", NULL, 0, 0 },
	{ "tls_server_config:\n", NULL, 0, 0 },
	{ "basic_auth_users:\n  alice: " H10 "\n", NULL, 0, 1 },
	{ "basic_auth_users: {alice: '" H10 "', bob: \"" H10 "\"}\n", NULL, 0, 1 },
	{ "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n", NULL, 1, 0 },
	{ "tls_server_config:\n  cert: |\n    CERT\n  key: |\n    KEY\n", NULL, 1, 0 },
	{ "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS13\n"
	  "  client_auth_type: NoClientCert\n  prefer_server_cipher_suites: true\n", NULL, 1, 0 },
	{ "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: deny\n"
	  "    Content-Security-Policy: default-src 'self'\n", NULL, 0, 0 },
	{ "tls_server_config:\n  cert_file: c.pem\n", "no key_file", 0, 0 },
	{ "tls_server_config:\n  cert_file: c.pem\n  cert: x\n  key_file: k.pem\n",
	  "both cert and cert_file", 0, 0 },
	{ "tls_server_config:\n  cert_file: nope.pem\n  key_file: k.pem\n",
	  "cert_file: cannot open", 0, 0 },
	{ "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS14\n",
	  "line 4: tls_server_config.min_version: 'TLS14' is not", 0, 0 },
	{ "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS13\n"
	  "  max_version: TLS12\n", "min_version is above max_version", 0, 0 },
	{ "tls_server_config:\n  client_auth_type: RequireAndVerifyClientCert\n",
	  "line 2: tls_server_config.client_auth_type: only NoClientCert", 0, 0 },
	{ "tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
	  "line 2: tls_server_config.cipher_suites is not supported", 0, 0 },
	{ "tls_server_config:\n  certfile: c.pem\n", "line 2: unknown key 'certfile'", 0, 0 },
	{ "tls_server_config:\n  cert_file: [c.pem]\n", "cert_file needs a string", 0, 0 },
	{ "http_server_config:\n  headers:\n    X-Powered-By: me\n", "'X-Powered-By' is not one", 0, 0 },
	{ "http_server_config:\n  headers:\n    X-Frame-Options: allow\n", "is not deny or sameorigin", 0, 0 },
	{ "http_server_config:\n  headers:\n    X-XSS-Protection: \"1\\r\\nSet-Cookie: x\"\n",
	  "not printable ASCII", 0, 0 },
	{ "http_server_config:\n  http2: maybe\n", "http2 needs true or false", 0, 0 },
	{ "basic_auth_users:\n  alice: secret\n", "line 2: basic_auth_users.alice: not a bcrypt", 0, 0 },
	{ "basic_auth_users:\n  alice: $1$abc$def\n", "not a bcrypt hash", 0, 0 },
	{ "basic_auth_users:\n  alice: $2x$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze\n",
	  "not a bcrypt hash", 0, 0 },
	{ "basic_auth_users:\n  alice: $2y$03$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze\n",
	  "cost 3 is not 4 to 14", 0, 0 },
	{ "basic_auth_users:\n  \"a:b\": " H10 "\n", "cannot be a user name", 0, 0 },
	{ "basic_auth_users:\n  alice:\n", "alice: not a bcrypt hash", 0, 0 },
	{ "basic_auth_users:\n  - alice\n", "line 2: basic_auth_users needs a mapping", 0, 0 },
	{ "basic_auth_users:\n  alice: " H10 "\n  alice: " H10 "\n", "line 3: basic_auth_users: 'alice' given twice", 0, 0 },
	{ "tls_server_config: {}\ntls_server_config: {}\n", "'tls_server_config' given twice", 0, 0 },
	{ "rate_limit:\n  burst: 20\n", "rate_limit is not supported", 0, 0 },
	{ "- a\n- b\n", "the file needs a mapping", 0, 0 },
	{ "just text\n", "the file needs a mapping", 0, 0 },
	{ "tls_server_config: [\n", "line 2: ", 0, 0 },
	{ "a: &x {b: 1}\nc: *x\n", "unknown key 'a'", 0, 0 },
	{ "basic_auth_users: {}\n---\nbasic_auth_users: {}\n", "more than one YAML document", 0, 0 },
	{ "basic_auth_users:\n  \"al\\0ice\": " H10 "\n", "a key holds a NUL byte", 0, 0 },
	{ "? [a, b]\n: c\n", "a key needs a string", 0, 0 },
};

static void put(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) == EOF || fclose(f) == EOF) {
		perror(path);
		exit(99);
	}
}

static void table(void)
{
	char path[128], err[1024];

	put("c.pem", "-----BEGIN CERTIFICATE-----\n");
	put("k.pem", "-----BEGIN PRIVATE KEY-----\n");
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mw_webconfig *wc;
		const char *c, *k, *p;

		put("web.yml", rows[i].text);
		err[0] = '\0';
		wc = mw_webconfig_load(path, err, sizeof(err));
		if (!rows[i].err) {
			CHECK(wc, "row %zu: refused: %s", i, err);
			CHECK(!wc || mw_webconfig_tls(wc, &c, &k, &p) == rows[i].tls, "row %zu: tls", i);
			CHECK(!wc || mw_webconfig_needs_auth(wc) == rows[i].auth, "row %zu: auth", i);
		} else {
			CHECK(!wc && strstr(err, rows[i].err), "row %zu: '%s' not in '%s'", i,
			      rows[i].err, err);
			CHECK(!strchr(err, '\n'), "row %zu: more than one line: %s", i, err);
		}
		mw_webconfig_free(wc);
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* mw_webconfig_check, asked again half a second later while it says
 * MW_AUTH_BUSY (its budget is bcrypt's wall time, 1 s at once: on a loaded
 * machine the first few checks spend it), 40 times at most */
static enum mw_auth check_waiting(struct mw_webconfig *wc, const char *user, const char *pass)
{
	enum mw_auth a;

	for (int i = 0; (a = mw_webconfig_check(wc, user, pass)) == MW_AUTH_BUSY && i < 40; i++)
		usleep(500000);
	return a;
}

static void passwords(void)
{
	char path[128], err[512], text[256], salt[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data cd = { 0 };
	struct mw_webconfig *wc;
	int busy = 0;
	double t;

	crypt_gensalt_rn("$2b$", 10, NULL, 0, salt, sizeof(salt));
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n",
		 crypt_rn("right", salt, &cd, sizeof(cd)));
	put("auth.yml", text);
	snprintf(path, sizeof(path), "%s/auth.yml", dir);
	wc = mw_webconfig_load(path, err, sizeof(err));
	CHECK(wc, "%s", err);
	if (!wc)
		return;
	CHECK(check_waiting(wc, "alice", "wrong") == MW_AUTH_DENIED);
	CHECK(check_waiting(wc, "bob", "right") == MW_AUTH_DENIED);
	CHECK(check_waiting(wc, "alice", "") == MW_AUTH_DENIED);
	CHECK(check_waiting(wc, "alice", "right") == MW_AUTH_OK);
	CHECK(check_waiting(wc, "alice", "righ") == MW_AUTH_DENIED);
	/* wrong passwords in a row: the bucket (1 s of bcrypt) runs dry */
	for (int i = 0; i < 200 && !busy; i++)
		busy = mw_webconfig_check(wc, "alice", "wrong") == MW_AUTH_BUSY;
	CHECK(busy, "200 wrong passwords and never MW_AUTH_BUSY");
	t = now();
	CHECK(mw_webconfig_check(wc, "alice", "right") == MW_AUTH_OK, "kept pair when busy");
	CHECK(now() - t < 0.04, "a kept pair took %.3f s", now() - t);
	CHECK(mw_webconfig_check(wc, "alice", "wrong") == MW_AUTH_BUSY);
	mw_webconfig_free(wc);
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 99;
	}
	table();
	passwords();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("could not remove %s\n", dir);
	return failed ? 1 : 0;
}
