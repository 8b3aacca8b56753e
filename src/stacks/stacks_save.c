/* stacks_save.c - --stacks in a saved stream (--save-stream) and back
 * (stacks.h; docs/protocol.md, "Stacks").  mallocwatch writes these
 * records itself after the tracer's, one line each, plain decimal:
 *
 *	L 4242 0 94251520000000 94251520004096 0 6b5c...e1 /usr/bin/python3.11
 *	X memory_arena_new 4242 4250 0 36750905011511 3 139830511960112 0 0 139... 94...
 *	Z 30 2 27 26 0 32 0 41250
 *
 * L PID IMAGE START END OFFSET BUILDID PATH: one file mapping of module
 * map IMAGE of process PID (BUILDID hex, "-" unknown; PATH to the end of
 * the line, '\\' and control bytes as \\xNN).  X PROBE PID TID IMAGE NS
 * KNOWN A1 A2 A3 PC...: one stacked hit (KNOWN the bits of the
 * arguments read, IMAGE -1 when none, the program counters innermost
 * first).  Z SITES CPUS SAMPLES UNWOUND LOST FOREIGN STALE UNWIND_NS
 * [HEAP_PERIOD] (memory_heap_more's sample period, 0 not stacked; absent
 * in older streams): the
 * counts of the run.  Only raw addresses are saved: a replay symbolizes
 * them from the files named, when they are there with the same build-id.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probetab.h"
#include "protocol.h"
#include "stacks_int.h"
#include "xalloc.h"

#define MAX_IMAGES 4096		/* per process, in a saved stream */

static void put_path(FILE *f, const char *p)
{
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '\\' || c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static void save_images(struct mw_stacks *s, FILE *f)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		struct stk_proc *p = &s->procs[i];

		for (size_t j = 0; j < p->nimg; j++) {
			struct stk_image *im = &p->img[j];

			if (!im->nev)
				continue;
			stk_image_map(im);
			for (size_t k = 0; k < im->nmap; k++) {
				const struct stk_map *m = &im->map[k];

				fprintf(f, "%c %d %zu %" PRIu64 " %" PRIu64 " %" PRIu64 " %s ",
					MW_REC_STACKMAP, (int)p->pid, j, m->start, m->end, m->offset,
					m->build_id[0] ? m->build_id : "-");
				put_path(f, m->path);
				fputc('\n', f);
			}
		}
	}
}

int mw_stacks_save(struct mw_stacks *s, FILE *f)
{
	const struct mw_stacks_stats *st = &s->st;
	double mean = st->samples ? s->unwind_us_sum / (double)st->samples : 0;

	save_images(s, f);
	for (size_t i = 0; i < s->nev; i++) {
		const struct mw_stack_event *e = &s->ev[i];

		fprintf(f, "%c %s %d %d %d %" PRIu64 " %u %" PRId64 " %" PRId64 " %" PRId64,
			MW_REC_STACK, mw_probe_info(e->probe)->name, (int)e->pid, (int)e->tid, e->image,
			e->time_ns, e->args_known, e->args[0], e->args[1], e->args[2]);
		for (int k = 0; k < e->npcs; k++)
			fprintf(f, " %" PRIu64, e->pcs[k]);
		fputc('\n', f);
	}
	fprintf(f, "%c %lu %lu %lu %lu %lu %lu %lu %.0f %lu\n", MW_REC_STACKSTATS, st->sites, st->cpus,
		st->samples, st->unwound, st->lost, st->foreign, st->stale, mean * 1e3,
		st->heap_period);
	return ferror(f) ? -1 : 0;
}

/* Up to max numbers of p (decimal, signed or not, ' ' between) into v;
 * *end after the last.  How many, -1 on anything else. */
static int numbers(const char *p, uint64_t *v, int max, const char **end)
{
	int n = 0;

	while (*p == ' ')
		p++;
	while (*p && n < max) {
		char *q;

		if (!(*p == '-' || (*p >= '0' && *p <= '9')))
			return -1;
		v[n++] = *p == '-' ? (uint64_t)strtoll(p, &q, 10) : strtoull(p, &q, 10);
		if (q == p || (*q && *q != ' '))
			return -1;
		p = q;
		while (*p == ' ')
			p++;
	}
	*end = p;
	return n;
}

/* The rest of an L line: BUILDID PATH (PATH unescaped). */
static int load_map(struct stk_map *m, const char *p)
{
	size_t id = strcspn(p, " ");
	char *o;

	if (id == 0 || id > 40 || !p[id] || !p[id + 1])
		return -1;
	if (!(id == 1 && p[0] == '-'))
		for (size_t i = 0; i < id; i++)
			if (!strchr("0123456789abcdef", p[i]))
				return -1;
	if (p[0] != '-')
		memcpy(m->build_id, p, id);
	m->build_id[p[0] == '-' ? 0 : id] = '\0';
	p += id + 1;
	if (*p != '/')
		return -1;
	m->path = o = xmalloc(strlen(p) + 1);
	for (unsigned c; *p; )
		if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &c) == 1 && c) {
			*o++ = (char)c;
			p += 4;
		} else
			*o++ = *p++;
	*o = '\0';
	return 0;
}

static int load_l(struct mw_stacks *s, const char *p)
{
	uint64_t v[5];
	const char *rest;
	struct stk_proc *pr;
	struct stk_image *im;
	struct stk_map m = { 0 };

	if (numbers(p, v, 5, &rest) != 5 || (int64_t)v[0] <= 0 || v[0] > INT32_MAX ||
	    v[1] >= MAX_IMAGES || v[2] >= v[3] || load_map(&m, rest) < 0)
		return -1;
	if (!(pr = stk_proc_find(s, (pid_t)v[0])))
		pr = stk_proc_add(s, (pid_t)v[0]);
	im = stk_image_at(pr, (size_t)v[1]);
	im->mapped = 1;
	m.start = v[2];
	m.end = v[3];
	m.offset = v[4];
	XGROW(im->map, im->nmap + 1, im->cmap);
	im->map[im->nmap++] = m;
	return 0;
}

static int load_x(struct mw_stacks *s, const char *p)
{
	char name[64];
	int used = 0, n, id;
	uint64_t v[8 + MW_MAX_FRAMES];
	const char *rest;
	struct mw_stack_event *e;

	if (sscanf(p, "%63s%n", name, &used) != 1 || (id = mw_probe_lookup(name)) < 0 ||
	    !(mw_stacks_probe_stacked(id) || id == MW_P_memory_heap_more))
		return -1;
	n = numbers(p + used, v, 8 + MW_MAX_FRAMES, &rest);
	if (n < 9 || *rest || (int64_t)v[0] <= 0 || v[0] > INT32_MAX || v[1] > INT32_MAX ||
	    ((int64_t)v[2] < -1 || (int64_t)v[2] >= MAX_IMAGES) || v[4] > 7)
		return -1;
	XGROW(s->ev, s->nev + 1, s->cev);
	e = &s->ev[s->nev++];
	*e = (struct mw_stack_event){ .probe = id, .pid = (pid_t)v[0], .tid = (pid_t)v[1],
		.image = (int)(int64_t)v[2], .time_ns = v[3], .args_known = (unsigned)v[4],
		.args = { (int64_t)v[5], (int64_t)v[6], (int64_t)v[7] }, .npcs = n - 8 };
	memcpy(e->pcs, v + 8, (size_t)e->npcs * sizeof(uint64_t));
	return 0;
}

static int load_z(struct mw_stacks *s, const char *p)
{
	uint64_t v[9] = { 0 };
	const char *rest;
	int n = numbers(p, v, 9, &rest);

	/* HEAP_PERIOD: absent in streams saved before heap_more was stacked */
	if ((n != 8 && n != 9) || *rest || v[8] > 1000000)
		return -1;
	s->st = (struct mw_stacks_stats){ .sites = v[0], .cpus = v[1], .samples = v[2],
		.unwound = v[3], .lost = v[4], .foreign = v[5], .stale = v[6],
		.heap_period = v[8] };
	s->unwind_us_sum = (double)v[7] / 1e3 * (double)v[2];
	return 0;
}

static struct mw_stacks *new_saved(const char *libc)
{
	struct mw_stacks *s = xcalloc(1, sizeof(*s));
	const char *slash = libc ? strrchr(libc, '/') : NULL;

	s->saved = 1;
	s->stop_pipe[0] = s->stop_pipe[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	if (slash)
		s->search_dir = strndup(libc, (size_t)(slash - libc));
	return s;
}

struct mw_stacks *mw_stacks_new_script(const char *libc_path)
{
	struct mw_stacks *s = new_saved(NULL);

	s->saved = 0;	/* live: processes read from /proc */
	s->libc_path = xstrdup(libc_path);
	return s;
}

int mw_stacks_script_line(struct mw_stacks *s, const char *line)
{
	uint64_t v[7];
	const char *p;
	int n = numbers(line + 2, v, 7, &p);
	struct mw_stack_event e = { 0 };
	struct stk_proc *pr;

	if (n != 7 || !mw_stacks_probe_stacked((int)v[0]) || (int64_t)v[1] <= 0 ||
	    v[1] > INT32_MAX || v[2] > INT32_MAX)
		return -1;
	e = (struct mw_stack_event){ .probe = (int)v[0], .pid = (pid_t)v[1], .tid = (pid_t)v[2],
		.time_ns = v[3], .args = { (int64_t)v[4], (int64_t)v[5], (int64_t)v[6] },
		.args_known = 7 };
	/* ubacktrace(): "0x7f2c4a2a1c37 0x55d0c1a01189 ..." */
	while (*p && e.npcs < MW_MAX_FRAMES) {
		char *end;

		if (p[0] != '0' || p[1] != 'x')
			return -1;
		e.pcs[e.npcs++] = strtoull(p + 2, &end, 16);
		if (end == p + 2 || (*end && *end != ' '))
			return -1;
		for (p = end; *p == ' '; p++)
			;
	}
	if (e.npcs == 0)
		return -1;
	if (!(pr = stk_proc_get(s, e.pid))->watched) {
		s->st.foreign++;
		return 0;
	}
	stk_proc_place(s, pr, &e);
	XGROW(s->ev, s->nev + 1, s->cev);
	s->ev[s->nev++] = e;
	s->st.samples++;
	return 0;
}

int mw_stacks_record(const char *line)
{
	return (line[0] == MW_REC_STACKMAP || line[0] == MW_REC_STACK ||
		line[0] == MW_REC_STACKSTATS) && line[1] == ' ';
}

int mw_stacks_load_line(struct mw_stacks **sp, const char *line, const char *libc)
{
	if (!mw_stacks_record(line))
		return -1;
	if (!*sp)
		*sp = new_saved(libc);
	switch (line[0]) {
	case MW_REC_STACKMAP: return load_l(*sp, line + 2);
	case MW_REC_STACK: return load_x(*sp, line + 2);
	default: return load_z(*sp, line + 2);
	}
}
