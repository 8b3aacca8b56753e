/* stream.c - the line protocol parser; see stream.h and docs/protocol.md.
 *
 * Every field after the record letter is a decimal integer (stap prints
 * longs as signed 64-bit: addresses above 2^63 come out negative and are
 * taken back as unsigned), except the probe name in P records.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "protocol.h"
#include "stacks.h"
#include "stream.h"
#include "xalloc.h"

#define MAX_FIELDS 16

/* Decimal digits at p (at least one) into *u; -1 past 2^64 - 1. */
static int digits(const char *p, uint64_t *u, const char **endp)
{
	const char *q = p;
	uint64_t v = 0;

	while (*q >= '0' && *q <= '9') {
		unsigned d = (unsigned)(*q - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		q++;
	}
	if (q == p)
		return -1;
	*u = v;
	*endp = q;
	return 0;
}

/* [-]digits at p as a signed 64-bit value, or (no sign) as an unsigned
 * one taken back from its two's complement; -1 out of range. */
static int decimal(const char *p, int64_t *v, const char **endp)
{
	int neg = *p == '-';
	uint64_t u;

	if (digits(p + neg, &u, endp) < 0)
		return -1;
	if (!neg)
		*v = (int64_t)u;
	else if (u > (uint64_t)INT64_MAX + 1)
		return -1;
	else
		*v = u ? -(int64_t)(u - 1) - 1 : 0;
	return 0;
}

/* One number at p: decimal, or "HI:LO" (two 32-bit halves, as stapbpf
 * must print them; LO is taken modulo 2^32).  End in *end.  Parsed by
 * hand: the parser's speed is a goal (bench/run), strtoll's locale
 * handling was a third of it. */
static int number(const char *p, int64_t *v, const char **endp)
{
	const char *end;
	int64_t hi, lo;

	if (decimal(p, &hi, &end) < 0)
		return -1;
	if (*end == ':') {	/* HI is signed 32-bit, LO a signed 64-bit decimal */
		const char *q = end + 1;

		if ((*p != '-' && hi < 0) || hi < INT32_MIN || hi > INT32_MAX ||
		    decimal(q, &lo, &end) < 0 || (*q != '-' && lo < 0))
			return -1;
		hi = (int64_t)(((uint64_t)hi << 32) | ((uint64_t)lo & 0xffffffffu));
	}
	*v = hi;
	*endp = end;
	return 0;
}

/* Split the numbers after the record tag; -1 on anything not a number. */
static int numbers(const char *p, int64_t *v, int max)
{
	return mw_stream_numbers(p, v, max);
}

int mw_stream_numbers(const char *p, int64_t *v, int max)
{
	int n = 0;

	for (;;) {
		const char *end;

		while (*p == ' ')
			p++;
		if (!*p)
			return n;
		if (n == max || number(p, &v[n], &end) < 0 || (*end && *end != ' '))
			return -1;
		n++;
		p = end;
	}
}

/* P ID NAME NARGS [UNAVAILABLE-MASK] */
static int parse_decl(struct mw_state *st, const char *p)
{
	char name[128];
	int id, nargs, used = 0, used2 = 0;
	unsigned mask = 0;

	if (sscanf(p, "%d %127s %d%n", &id, name, &nargs, &used) != 3 ||
	    id < 0 || nargs < 0 || nargs > 12)
		return -1;
	if (p[used] && (sscanf(p + used, " %u%n", &mask, &used2) != 1 || p[used + used2]))
		return -1;
	mw_state_declare(st, id, name, nargs, mask);
	return 0;
}

/* A record of the timeline mallocwatch samples (O, Y, U, C, X), tag and its
 * n fields v (n < 0: they did not parse); 0, or -1 when it is garbled. */
static int timeline_record(struct mw_state *st, int tag, const int64_t *v, int n)
{
	switch (tag) {
	case MW_REC_ORIGIN:
		if (n != MW_NF_ORIGIN || v[0] < 0)
			return -1;
		mw_state_origin_set(st, (uint64_t)v[0]);
		return 0;
	case MW_REC_SAMPLE:
		if ((n != MW_NF_SAMPLE && n != MW_NF_SAMPLE_MEM) || v[0] < 0 || v[5] < 0 ||
		    v[5] > 100000)
			return -1;
		mw_state_sample(st, &(struct mw_sample){ .ns = (uint64_t)v[0],
			.mmap_threshold = (uint64_t)v[1], .trim_threshold = (uint64_t)v[2],
			.sbrk_base = (uint64_t)v[3], .main_end = (uint64_t)v[4],
			.have_mem = n == MW_NF_SAMPLE_MEM,	/* streams before it: 6 fields */
			.mmapped = n == MW_NF_SAMPLE_MEM ? (uint64_t)v[6] : 0,
			.n_mmaps = n == MW_NF_SAMPLE_MEM ? (uint64_t)v[7] : 0,
			.rss = n == MW_NF_SAMPLE_MEM ? (uint64_t)v[8] : 0 }, (size_t)v[5]);
		return 0;
	case MW_REC_SARENA:
		if (n != MW_NF_SARENA || mw_state_sample_arena(st, &(struct mw_sample_arena){
				.arena = (uint64_t)v[0], .system = (uint64_t)v[1],
				.nheaps = (uint64_t)v[2], .heap_bytes = (uint64_t)v[3] }) < 0)
			return -1;
		return 0;
	case MW_REC_SWAITS:
		if (n != MW_NF_SWAITS || v[0] < 0 || mw_state_sample_waits(st, (uint64_t)v[0]) < 0)
			return -1;
		return 0;
	case MW_REC_GONE:
		if (n != MW_NF_GONE || v[0] <= 0 || v[0] > INT32_MAX || v[1] <= 0 ||
		    mw_state_thread_gone(st, (int)v[0], (uint64_t)v[1]) < 0)
			return -1;
		return 0;
	}
	return -1;
}

/* A total the script prints at the end of the run (N, H, G, W, S, K, A,
 * J, B), tag and its n fields v (n < 0: they did not parse); 0, or -1
 * when it is garbled or tag is no record at all. */
static int total_record(struct mw_state *st, int tag, const int64_t *v, int n)
{
	switch (tag) {
	case MW_REC_HITS:
		if (n != MW_NF_HITS || v[0] < 0 || v[2] < 0)
			return -1;
		return mw_state_hits(st, (int)v[0], (int)v[1], (uint64_t)v[2]);
	case MW_REC_HEAP:
	case MW_REC_HEAPHITS:
		if (n != MW_NF_HEAP || v[4] < 0 || v[5] < 0)
			return -1;
		return mw_state_heap(st, (uint64_t)v[0], (uint64_t)v[1], (uint64_t)v[2],
				     (uint64_t)v[3], (uint64_t)v[4], (uint64_t)v[5],
				     tag == MW_REC_HEAPHITS);
	case MW_REC_WAIT:	/* its hits came in N records before it */
		if (n != MW_NF_WAIT || v[2] < 0)
			return -1;
		return mw_state_wait(st, (int)v[0], (uint64_t)v[1], (uint64_t)v[2]);
	case MW_REC_SBRK: {
		struct mw_sbrk s;

		if (n != MW_NF_SBRK && n != MW_NF_SBRK_HITS)
			return -1;
		s = (struct mw_sbrk){ .grown = (uint64_t)v[0], .trimmed = (uint64_t)v[1],
			.nmore = (uint64_t)v[2], .nless = (uint64_t)v[3], .peak = v[4],
			.first_brk = (uint64_t)v[5], .last_brk = (uint64_t)v[6],
			.failed = (uint64_t)v[7],
			.failed_less = n == MW_NF_SBRK_HITS ? (uint64_t)v[8] : 0 };
		return mw_state_sbrk(st, &s, n == MW_NF_SBRK_HITS);
	}
	case MW_REC_JUMPS:
		if (n != MW_NF_JUMPS || v[0] < 0 || v[5] < 0 ||
		    mw_state_jump_tuple(st, (int)v[0], (int)v[1], v[2], v[3], v[4],
					(uint64_t)v[5]) < 0)
			return -1;
		return 0;
	case MW_REC_WAITS:
		if (n != MW_NF_WAITS || v[0] < 0 || v[3] < 0)
			return -1;
		return mw_state_wait_hits(st, (int)v[0], (int)v[1], (uint64_t)v[2],
					  (uint64_t)v[3]);
	case MW_REC_JUMP:
		if (n != MW_NF_JUMP || v[0] < 0 || v[3] < 0 ||
		    mw_state_jump(st, (int)v[0], (int)v[1], v[2], (uint64_t)v[3]) < 0)
			return -1;
		return 0;
	case MW_REC_BIAS:
		if (n != MW_NF_BIAS)
			return -1;
		mw_state_bias(st, (uint64_t)v[0]);
		return 0;
	}
	return -1;
}

int mw_stream_line(struct mw_state *st, const char *line)
{
	int64_t v[MAX_FIELDS];
	int n;

	if (line[0] == '#')	/* metadata of a saved stream */
		return 0;
	if (strcmp(line, MW_LINE_READY) == 0) {
		mw_state_ready(st);
		return 0;
	}
	if (strcmp(line, MW_LINE_END) == 0) {
		mw_state_end(st);
		return 0;
	}
	if (strcmp(line, MW_LINE_EXEC) == 0) {
		mw_state_exec(st);
		return 0;
	}
	if (!line[0] || line[1] != ' ')
		goto garbled;
	if (line[0] == MW_REC_DECLARE) {
		if (parse_decl(st, line + 2) < 0)
			goto garbled;
		return 0;
	}
	n = numbers(line + 2, v, MAX_FIELDS);
	if (mw_state_owed_take(st, line[0], n > 0 ? (int)v[0] : -1))
		return 0;	/* the image's before its exec, late */
	switch (line[0]) {
	case MW_REC_EVENT:
		if (n < 2 || v[0] < 0)
			goto garbled;
		if (mw_state_event(st, (int)v[0], (int)v[1], v + 2, n - 2) < 0)
			goto garbled;
		return 0;
	case MW_REC_TIMED:
		if (n < 3 || v[0] < 0 || v[2] < 0)
			goto garbled;
		if (mw_state_event_at(st, (int)v[0], (int)v[1], (uint64_t)v[2], v + 3, n - 3) < 0)
			goto garbled;
		return 0;
	case MW_REC_ORIGIN:
	case MW_REC_SAMPLE:
	case MW_REC_SARENA:
	case MW_REC_SWAITS:
	case MW_REC_GONE:
		if (timeline_record(st, line[0], v, n) < 0)
			goto garbled;
		return 0;
	default:
		if (total_record(st, line[0], v, n) < 0)
			goto garbled;
		return 0;
	}
garbled:
	mw_state_garbled(st);
	return -1;
}

/* ---- saved streams ---- */

/* s with '\\' and control bytes C-escaped (\\n, \\xNN): one line. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\')
			fputs("\\\\", f);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

/* Undo put_escaped into a new string. */
static char *unescape(const char *s)
{
	char *out = xmalloc(strlen(s) + 1), *o = out;

	while (*s) {
		unsigned v;

		if (s[0] == '\\' && s[1] == '\\') {
			*o++ = '\\';
			s += 2;
		} else if (s[0] == '\\' && s[1] == 'n') {
			*o++ = '\n';
			s += 2;
		} else if (s[0] == '\\' && s[1] == 'x' && sscanf(s + 2, "%2x", &v) == 1 &&
			   s[2] && s[3] && v) {
			*o++ = (char)v;
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

void mw_stream_write_header(FILE *f, const struct mw_stream_meta *m)
{
	fprintf(f, MW_STREAM_MAGIC "\n# " MW_META_LIBC " %s\n# " MW_META_RUNTIME " %s\n# "
		MW_META_MAIN_ARENA " %" PRIu64 "\n", m->libc, m->runtime, m->main_arena);
	if (m->libm[0])
		fprintf(f, "# " MW_META_LIBM " %d %s\n", m->libm_sites, m->libm);
	for (char **a = m->argv; a && *a; a++) {
		fputs("# " MW_META_ARG " ", f);
		put_escaped(f, *a);
		fputc('\n', f);
	}
}

void mw_stream_write_footer(FILE *f, const struct mw_stream_meta *m)
{
	fprintf(f, "# " MW_META_PID " %d\n", m->pid);
	if (m->have_status)
		fprintf(f, "# " MW_META_WAIT_STATUS " %d\n", m->wait_status);
	fprintf(f, "# " MW_META_TRACER_DIED " %d\n# " MW_META_TRACER_LOST " %llu\n",
		m->tracer_died, m->tracer_lost);
	if (m->stopped)
		fprintf(f, "# " MW_META_STOPPED " 1\n");
	if (m->traced_ns)
		fprintf(f, "# " MW_META_TRACED_NS " %" PRIu64 "\n", m->traced_ns);
	if (m->comm[0]) {
		fputs("# " MW_META_COMM " ", f);
		put_escaped(f, m->comm);
		fputc('\n', f);
	}
	if (m->tracer_msg[0]) {
		fputs("# " MW_META_TRACER_MSG " ", f);
		put_escaped(f, m->tracer_msg);
		fputc('\n', f);
	}
	for (const char *l = m->findings; l && *l;) {
		size_t len = strcspn(l, "\n");
		char *one = strndup(l, len);

		if (one) {
			fputs("# " MW_META_FINDING " ", f);
			put_escaped(f, one);
			fputc('\n', f);
			free(one);
		}
		l += len + (l[len] == '\n');
	}
}

void mw_stream_write_snapshot(FILE *f, const char *which, const char *json)
{
	fprintf(f, "# " MW_META_SNAPSHOT " %s %s\n", which, json);
}

void mw_stream_write_attach_refused(FILE *f, const char *why)
{
	fputs("# " MW_META_ATTACH_REFUSED " ", f);
	put_escaped(f, why);
	fputc('\n', f);
}

void mw_stream_write_images_mixed(FILE *f, uint64_t ns, const char *why)
{
	fprintf(f, "# " MW_META_IMAGES_MIXED " %" PRIu64 " ", ns);
	put_escaped(f, why);
	fputc('\n', f);
}

/* One more line of the findings' text into m, up to MW_META_FINDINGS_MAX. */
static void add_finding_line(struct mw_stream_meta *m, const char *val)
{
	char *u = unescape(val), *more;
	size_t have = m->findings ? strlen(m->findings) : 0, add = strlen(u) + 1;


	if (have + add < MW_META_FINDINGS_MAX && (more = realloc(m->findings, have + add + 1))) {
		m->findings = more;
		snprintf(m->findings + have, add + 1, "%s\n", u);
	}
	free(u);
}

/* One "# KEY VALUE" line into m (and st for what the model needs). */
static void meta_line(const char *line, struct mw_state *st, struct mw_stream_meta *m)
{
	static const char finding[] = "# " MW_META_FINDING " ";
	char key[32];
	int used = 0;
	const char *val;

	if (strncmp(line, finding, sizeof(finding) - 1) == 0) {	/* its spaces are its own */
		add_finding_line(m, line + sizeof(finding) - 1);
		return;
	}
	if (sscanf(line, "# %31s %n", key, &used) != 1 || !used)
		return;
	val = line + used;
	if (strcmp(key, MW_META_LIBC) == 0) {
		snprintf(m->libc, sizeof(m->libc), "%s", val);
	} else if (strcmp(key, MW_META_RUNTIME) == 0) {
		snprintf(m->runtime, sizeof(m->runtime), "%s", val);
	} else if (strcmp(key, MW_META_MAIN_ARENA) == 0) {
		m->main_arena = strtoull(val, NULL, 10);
		mw_state_set_main_arena_sym(st, m->main_arena);
	} else if (strcmp(key, MW_META_LIBM) == 0) {
		char *path;

		m->libm_sites = (int)strtol(val, &path, 10);
		snprintf(m->libm, sizeof(m->libm), "%s", path + (*path == ' '));
		mw_state_set_libm(st, m->libm, m->libm_sites);
	} else if (strcmp(key, MW_META_ARG) == 0 && m->argc < 4096) {
		m->argv = xrealloc(m->argv, (size_t)(m->argc + 2) * sizeof(*m->argv));
		m->argv[m->argc++] = unescape(val);
		m->argv[m->argc] = NULL;
	} else if (strcmp(key, MW_META_PID) == 0) {
		m->pid = atoi(val);
	} else if (strcmp(key, MW_META_WAIT_STATUS) == 0) {
		m->have_status = 1;
		m->wait_status = atoi(val);
	} else if (strcmp(key, MW_META_TRACER_DIED) == 0) {
		m->tracer_died = atoi(val);
	} else if (strcmp(key, MW_META_STOPPED) == 0) {
		m->stopped = atoi(val);
	} else if (strcmp(key, MW_META_TRACED_NS) == 0) {
		m->traced_ns = strtoull(val, NULL, 10);
	} else if (strcmp(key, MW_META_TRACER_LOST) == 0) {
		m->tracer_lost = strtoull(val, NULL, 10);
	} else if (strcmp(key, MW_META_SNAPSHOT) == 0 && m->on_snapshot) {
		char which[16];
		int w = 0;

		if (sscanf(val, "%15s %n", which, &w) == 1 && w)
			m->on_snapshot(m->ctx, st, which, val + w);
		else
			mw_state_garbled(st);
	} else if (strcmp(key, MW_META_ATTACH_REFUSED) == 0) {
		char *u = unescape(val);

		mw_state_attach_unknown(st, u);
		free(u);
	} else if (strcmp(key, MW_META_IMAGES_MIXED) == 0) {
		char *end, *u;
		uint64_t ns = strtoull(val, &end, 10);

		u = unescape(end + (*end == ' '));
		mw_state_images_mixed(st, u, ns);
		free(u);
	} else if (strcmp(key, MW_META_COMM) == 0) {
		char *u = unescape(val);

		snprintf(m->comm, sizeof(m->comm), "%s", u);
		free(u);
	} else if (strcmp(key, MW_META_TRACER_MSG) == 0) {
		char *u = unescape(val);

		snprintf(m->tracer_msg, sizeof(m->tracer_msg), "%s", u);
		free(u);
	}
}

int mw_stream_replay(FILE *f, struct mw_state *st, struct mw_stream_meta *m,
		     char *err, size_t errlen)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int first = 1, warned = 0;

	void (*on_snapshot)(void *, struct mw_state *, const char *, const char *) =
		m->on_snapshot;
	void *ctx = m->ctx;

	memset(m, 0, sizeof(*m));
	m->on_snapshot = on_snapshot;
	m->ctx = ctx;
	snprintf(m->libc, sizeof(m->libc), "?");
	snprintf(m->runtime, sizeof(m->runtime), "?");
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (first && strcmp(line, MW_STREAM_MAGIC) != 0) {
			snprintf(err, errlen, "not a mallocwatch stream (it does not begin "
				 "with '%s')", MW_STREAM_MAGIC);
			free(line);
			return -1;
		}
		first = 0;
		if (strlen(line) != (size_t)n) {	/* a NUL byte inside */
			mw_state_garbled(st);
			continue;
		}
		if (line[0] == '#') {
			meta_line(line, st, m);
		} else if (mw_stacks_record(line)) {
			if (mw_stacks_load_line(&m->stacks, line, m->libc[0] == '/' ? m->libc : NULL) < 0) {
				mw_state_garbled(st);
				if (!warned++)
					mw_warn("garbled stack record ignored and counted");
			}
		} else if (mw_stream_line(st, line) < 0 && !warned++) {
			const char *why = mw_state_why(st);
			char q[200];

			mw_warn("garbled tracer line ignored and counted: '%s'%s%s",
				mw_quote(line, q, sizeof(q)), why ? ": " : "", why ? why : "");
		}
	}
	free(line);
	if (ferror(f)) {
		snprintf(err, errlen, "read error: %s", strerror(errno));
		return -1;
	}
	if (first) {
		snprintf(err, errlen, "not a mallocwatch stream (it is empty)");
		return -1;
	}
	return 0;
}

void mw_stream_meta_free(struct mw_stream_meta *m)
{
	for (int i = 0; i < m->argc; i++)
		free(m->argv[i]);
	free(m->argv);
	m->argv = NULL;
	m->argc = 0;
	free(m->findings);
	m->findings = NULL;
	mw_stacks_free(m->stacks);
	m->stacks = NULL;
}
