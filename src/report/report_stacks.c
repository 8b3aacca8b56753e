/* report_stacks.c - --stacks in the text report, the JSON report and
 * the folded file (report_stacks.h).
 *
 * A text line reads innermost first, the way a backtrace does:
 *
 *	arena 0x7f03cc000030 created by thread 7121 at: chain_c <- chain_b <- chain_a <- worker
 *
 * where the frames inside the libc (malloc, arena_get2, _int_new_arena)
 * are left out: the question is "from where in my code".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "msg.h"
#include "probetab.h"
#include "report_stacks.h"
#include "stacks.h"
#include "units.h"
#include "xalloc.h"

#define TEXT_FRAMES 8
#define TEXT_ROWS 10

/* One event's frames, symbolized: the user chain (text) and every frame
 * root first (folded). */
struct sym_ev {
	const struct mw_stack_event *e;
	char chain[1024];
	char folded[4096];
	uint64_t bytes;		/* the weight of a grow event, else 0 */
	uint64_t growths;	/* memory_heap_more: the hits a sample stands
				 * for (its period), else 0 */
};

/* A frame's name as the text shows it: names come from the target's
 * files, so they are quoted (msg.h: an ESC or a byte that is not UTF-8
 * as \x1b, \xff), wherever they go (text, folded lines, SVG, HTML). */
static void label(const struct mw_frame *f, char *buf, size_t len)
{
	char q[200];

	if (f->function[0])
		mw_quote(f->function, buf, len);
	else if (f->module[0])
		snprintf(buf, len, "%s+0x%" PRIx64, mw_quote(f->module, q, sizeof(q)), f->offset);
	else
		snprintf(buf, len, "0x%" PRIx64, f->pc);
}

static void append(char *buf, size_t len, const char *sep, const char *s)
{
	size_t n = strlen(buf);

	if (n + 1 < len)
		snprintf(buf + n, len - n, "%s%s", n ? sep : "", s);
}

static uint64_t grow_bytes(const struct mw_stack_event *e)
{
	/* memory_sbrk_more (brk, size); memory_heap_new (heap, size) */
	if ((e->probe == MW_P_memory_sbrk_more || e->probe == MW_P_memory_heap_new) &&
	    (e->args_known & 2) && e->args[1] > 0)
		return (uint64_t)e->args[1];
	return 0;
}

static void symbolize(struct mw_stacks *s, const struct mw_stack_event *e, struct sym_ev *o,
		      unsigned long heap_period)
{
	struct mw_frame fr[MW_MAX_FRAMES];
	char lab[200], libc_mod[64] = "";
	int shown = 0, in_libc = 1;

	memset(o, 0, sizeof(*o));
	o->e = e;
	o->bytes = grow_bytes(e);
	if (e->probe == MW_P_memory_heap_more)
		o->growths = heap_period ? heap_period : 1;
	for (int i = 0; i < e->npcs; i++)
		mw_stacks_frame(s, e, i, &fr[i]);
	if (e->npcs > 0)
		snprintf(libc_mod, sizeof(libc_mod), "%s", fr[0].module);
	for (int i = 0; i < e->npcs; i++) {
		if (in_libc && libc_mod[0] && strcmp(fr[i].module, libc_mod) == 0)
			continue;
		in_libc = 0;
		if (shown++ == TEXT_FRAMES) {
			append(o->chain, sizeof(o->chain), " <- ", "...");
			break;
		}
		label(&fr[i], lab, sizeof(lab));
		append(o->chain, sizeof(o->chain), " <- ", lab);
	}
	if (!o->chain[0])
		snprintf(o->chain, sizeof(o->chain), "(no frame outside the libc)");
	for (int i = e->npcs - 1; i >= 0; i--) {
		char q[sizeof(lab) - 2];

		if (fr[i].function[0])
			mw_quote(fr[i].function, lab, sizeof(lab));
		else
			snprintf(lab, sizeof(lab), "[%s]", fr[i].module[0] ?
				 mw_quote(fr[i].module, q, sizeof(q)) : "unknown");
		/* (a module+offset would split one caller into many: the module) */
		for (char *c = lab; *c; c++)
			if (*c == ';' || *c == ' ')
				*c = '_';
		append(o->folded, sizeof(o->folded), ";", lab);
	}
	append(o->folded, sizeof(o->folded), ";", mw_probe_info(e->probe)->name);
}

/* The events of process pid (0: all), symbolized, into a new array of *n. */
static struct sym_ev *symbolize_all(struct mw_stacks *s, pid_t pid, size_t *n)
{
	struct sym_ev *v;
	struct mw_stacks_stats st;
	size_t all = mw_stacks_count(s);

	mw_stacks_get_stats(s, &st);
	v = xcalloc(all ? all : 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < all; i++) {
		const struct mw_stack_event *e = mw_stacks_event(s, i);

		if (!pid || e->pid == pid)
			symbolize(s, e, &v[(*n)++], st.heap_period);
	}
	return v;
}

/* Stacks of one probe grouped by chain, by bytes then count. */
struct group {
	const char *chain;
	uint64_t bytes;
	unsigned long count;
};

static int by_weight(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* memory_heap_more's groups (bytes: their growths, estimated): glibc's
 * probe gives the heap's new size, not what it grew by, and a sample
 * stands for period hits, so the weight is the growths. */
static void heap_more_text(FILE *f, struct group *g, size_t ng, unsigned long samples,
			   uint64_t growths)
{
	qsort(g, ng, sizeof(*g), by_weight);
	fprintf(f, "  memory_heap_more: %lu sample%s of 1 in %" PRIu64 " hits (about %" PRIu64
		" heap growths); top stacks by heap growths:\n", samples, samples == 1 ? "" : "s",
		growths / samples, growths);
	for (size_t j = 0; j < ng && j < TEXT_ROWS; j++)
		fprintf(f, "    %10" PRIu64 " %5lu x  %s\n", g[j].bytes, g[j].count, g[j].chain);
	if (ng > TEXT_ROWS)
		fprintf(f, "    ... %zu more stacks\n", ng - TEXT_ROWS);
}

static void grouped_text(FILE *f, const struct sym_ev *v, size_t n, int probe)
{
	struct group *g = xcalloc(n ? n : 1, sizeof(*g));
	size_t ng = 0, j;
	uint64_t total = 0, growths = 0;
	unsigned long calls = 0;
	char b[32];

	for (size_t i = 0; i < n; i++) {
		if (v[i].e->probe != probe)
			continue;
		for (j = 0; j < ng && strcmp(g[j].chain, v[i].chain) != 0; j++)
			;
		if (j == ng)
			g[ng++].chain = v[i].chain;
		g[j].bytes += v[i].bytes + v[i].growths;
		g[j].count++;
		total += v[i].bytes;
		growths += v[i].growths;
		calls++;
	}
	if (ng && growths) {
		heap_more_text(f, g, ng, calls, growths);
	} else if (ng) {
		qsort(g, ng, sizeof(*g), by_weight);
		fprintf(f, "  %s: %lu hit%s", mw_probe_info(probe)->name, calls,
			calls == 1 ? "" : "s");
		if (total)
			fprintf(f, ", %s", mw_human_bytes(total, b, sizeof(b)));
		fprintf(f, "; %s:\n", total ? "top stacks by bytes" : "stacks by hits");
		for (j = 0; j < ng && j < TEXT_ROWS; j++) {
			if (total)
				fprintf(f, "    %10s %5lu x  %s\n",
					mw_human_bytes(g[j].bytes, b, sizeof(b)), g[j].count, g[j].chain);
			else
				fprintf(f, "    %5lu x  %s\n", g[j].count, g[j].chain);
		}
		if (ng > TEXT_ROWS)
			fprintf(f, "    ... %zu more stacks\n", ng - TEXT_ROWS);
	}
	free(g);
}

static void each_text(FILE *f, const struct sym_ev *v, size_t n, int probe)
{
	size_t shown = 0, all = 0;

	for (size_t i = 0; i < n; i++) {
		const struct mw_stack_event *e = v[i].e;

		if (e->probe != probe || all++ >= 2 * TEXT_ROWS)
			continue;
		shown++;
		if (probe == MW_P_memory_arena_new)
			fprintf(f, "  arena 0x%" PRIx64 " created by thread %d at: %s\n",
				(uint64_t)e->args[0], (int)e->tid, v[i].chain);
		else
			fprintf(f, "  tcache double free of 0x%" PRIx64 " by thread %d at: %s\n",
				(uint64_t)e->args[0], (int)e->tid, v[i].chain);
	}
	if (all > shown)
		fprintf(f, "  ... %zu more\n", all - shown);
}

int mw_report_stacks_text(FILE *f, struct mw_stacks *s, pid_t pid)
{
	struct mw_stacks_stats st;
	size_t n;
	struct sym_ev *v = symbolize_all(s, pid, &n);

	mw_stacks_get_stats_of(s, pid, &st);
	fprintf(f, "\nStacks (--stacks): %lu probe hits with a stack at %lu probe sites, "
		"%lu unwound past the probe, %lu lost, %lu of other processes left out\n",
		st.samples, st.sites, st.unwound, st.lost, st.foreign);
	if (st.stale)
		fprintf(f, "  %lu read after their process had exec'd another program: "
			"unwound in the libc alone, the program's modules unknown\n", st.stale);
	each_text(f, v, n, MW_P_memory_arena_new);
	grouped_text(f, v, n, MW_P_memory_sbrk_more);
	grouped_text(f, v, n, MW_P_memory_heap_new);
	grouped_text(f, v, n, MW_P_memory_heap_more);
	each_text(f, v, n, MW_P_memory_tcache_double_free);
	for (int id = 0; id < MW_P_COUNT; id++)
		if (mw_stacks_probe_stacked(id) && id != MW_P_memory_arena_new &&
		    id != MW_P_memory_sbrk_more && id != MW_P_memory_heap_new &&
		    id != MW_P_memory_tcache_double_free)
			grouped_text(f, v, n, id);
	free(v);
	return ferror(f) ? -1 : 0;
}

/* ---- the HTML page's tooltips ---- */

struct mw_stack_tips {
	struct sym_ev *v;
	size_t n;
	char *grow[2];		/* sbrk; heap_new and heap_more: the top stacks */
};

/* The top stacks of probe (and of also, when not -1) by bytes, a line
 * each, into a new string. */
static char *grow_tip(const struct sym_ev *v, size_t n, int probe, int also)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	grouped_text(f, v, n, probe);
	if (also >= 0)
		grouped_text(f, v, n, also);
	fclose(f);
	if (text && !text[0]) {
		free(text);
		text = NULL;
	}
	return text;
}

struct mw_stack_tips *mw_stack_tips_new(struct mw_stacks *s, pid_t pid)
{
	struct mw_stack_tips *t = xcalloc(1, sizeof(*t));

	t->v = symbolize_all(s, pid, &t->n);
	t->grow[0] = grow_tip(t->v, t->n, MW_P_memory_sbrk_more, -1);
	t->grow[1] = grow_tip(t->v, t->n, MW_P_memory_heap_new, MW_P_memory_heap_more);
	return t;
}

/* The stack of the first hit of probe whose first argument is a. */
static const char *tip_of(const struct mw_stack_tips *t, int probe, uint64_t a)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (t->v[i].e->probe == probe && (t->v[i].e->args_known & 1) &&
		    (uint64_t)t->v[i].e->args[0] == a)
			return t->v[i].chain;
	return NULL;
}

const char *mw_stack_tip_arena(const struct mw_stack_tips *t, uint64_t arena)
{
	return tip_of(t, MW_P_memory_arena_new, arena);
}

const char *mw_stack_tip_heap(const struct mw_stack_tips *t, uint64_t heap)
{
	return tip_of(t, MW_P_memory_heap_new, heap);
}

const char *mw_stack_tip_event(const struct mw_stack_tips *t, const char *probe, int tid,
			       uint64_t ns)
{
	const char *best = NULL;
	uint64_t gap = MW_STACK_TIP_NS + 1;

	for (size_t i = 0; t && i < t->n; i++) {
		const struct mw_stack_event *e = t->v[i].e;
		uint64_t d = e->time_ns > ns ? e->time_ns - ns : ns - e->time_ns;

		if (e->tid == tid && d < gap && strcmp(mw_probe_info(e->probe)->name, probe) == 0) {
			gap = d;
			best = t->v[i].chain;
		}
	}
	return best;
}

const char *mw_stack_tip_grow(const struct mw_stack_tips *t, int heaps)
{
	return t ? t->grow[heaps != 0] : NULL;
}

void mw_stack_tips_free(struct mw_stack_tips *t)
{
	if (!t)
		return;
	free(t->v);
	free(t->grow[0]);
	free(t->grow[1]);
	free(t);
}

static int by_folded(const void *a, const void *b)
{
	return strcmp(((const struct sym_ev *)a)->folded, ((const struct sym_ev *)b)->folded);
}

/* Do the events come from more than one process? */
static int several(const struct sym_ev *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (v[i].e->pid != v[0].e->pid)
			return 1;
	return 0;
}

/* The folded lines of v (sorted here), one per stack, its weights
 * summed; of probe only when not -1. */
static void folded_lines(FILE *f, struct sym_ev *v, size_t n, int probe)
{
	qsort(v, n, sizeof(*v), by_folded);
	for (size_t i = 0; i < n; ) {
		uint64_t sum = 0;
		size_t j;

		for (j = i; j < n && strcmp(v[j].folded, v[i].folded) == 0; j++)
			sum += v[j].bytes + v[j].growths;
		if (sum && (probe < 0 || v[i].e->probe == probe))
			fprintf(f, "%s %" PRIu64 "\n", v[i].folded, sum);
		i = j;
	}
}

int mw_report_stacks_folded(FILE *f, struct mw_stacks *s)
{
	size_t n;
	struct sym_ev *v = symbolize_all(s, 0, &n);

	if (several(v, n))	/* each process its own root: pid_4242;_start;... */
		for (size_t i = 0; i < n; i++) {
			char root[32];

			snprintf(root, sizeof(root), "pid_%d;", (int)v[i].e->pid);
			if (strlen(root) + strlen(v[i].folded) < sizeof(v[i].folded)) {
				memmove(v[i].folded + strlen(root), v[i].folded,
					strlen(v[i].folded) + 1);
				memcpy(v[i].folded, root, strlen(root));
			}
		}
	/* one line per stack, its bytes summed (memory_heap_more's: its
	 * growths, estimated: its leaf frame tells them apart) */
	folded_lines(f, v, n, -1);
	free(v);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

char *mw_report_stacks_folded_of(struct mw_stacks *s, pid_t pid, int probe)
{
	size_t n, len = 0;
	char *text = NULL;
	struct sym_ev *v = symbolize_all(s, pid, &n);
	FILE *f = open_memstream(&text, &len);

	if (f) {
		folded_lines(f, v, n, probe);
		fclose(f);
	}
	free(v);
	return text;
}

static json_t *json_frames(struct mw_stacks *s, const struct mw_stack_event *e)
{
	json_t *a = json_array();
	struct mw_frame fr;

	for (int i = 0; i < e->npcs; i++) {
		mw_stacks_frame(s, e, i, &fr);
		mw_json_append(&a, json_pack("{s:I, s:o, s:o, s:o, s:I, s:o, s:I}",
			"address", (json_int_t)fr.pc,
			"module", fr.module[0] ? mw_json_str(fr.module) : json_null(),
			"build_id", fr.build_id[0] ? mw_json_str(fr.build_id) : json_null(),
			"function", fr.function[0] ? mw_json_str(fr.function) : json_null(),
			"offset", (json_int_t)fr.offset,
			"file", fr.file[0] ? mw_json_str(fr.file) : json_null(),
			"line", (json_int_t)fr.line));
	}
	return a;
}

json_t *mw_report_stacks_json(struct mw_stacks *s, pid_t pid)
{
	struct mw_stacks_stats st;
	json_t *root = json_object(), *evs = json_array();

	mw_stacks_get_stats_of(s, pid, &st);
	for (size_t i = 0; i < mw_stacks_count(s); i++) {
		const struct mw_stack_event *e = mw_stacks_event(s, i);
		json_t *args;

		if (pid && e->pid != pid)
			continue;
		args = json_array();

		for (int k = 0; k < 3; k++)
			if (e->args_known & (1u << k))
				mw_json_append(&args, json_integer((json_int_t)e->args[k]));
		mw_json_append(&evs, json_pack("{s:s, s:i, s:i, s:I, s:o, s:I, s:o}",
			"probe", mw_probe_info(e->probe)->name, "pid", (int)e->pid,
			"tid", (int)e->tid, "time_ns", (json_int_t)e->time_ns,
			"args", args, "hits", (json_int_t)(e->probe == MW_P_memory_heap_more &&
							   st.heap_period ? st.heap_period : 1),
			"frames", json_frames(s, e)));
	}
	mw_json_set(&root, "stats", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I}",
		"sites", (json_int_t)st.sites, "cpus", (json_int_t)st.cpus,
		"samples", (json_int_t)st.samples, "unwound", (json_int_t)st.unwound,
		"lost", (json_int_t)st.lost, "foreign", (json_int_t)st.foreign,
		"stale", (json_int_t)st.stale, "unwind_us", st.unwind_us,
		"heap_more_period", (json_int_t)st.heap_period));
	mw_json_set(&root, "events", evs);
	return root;
}
