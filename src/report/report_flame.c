/* report_flame.c - flame graphs of the --stacks folded lines, as inline
 * SVG in the --html page (report_flame.h).
 *
 * The input is what --folded writes (report_stacks.h), root first:
 *
 *	_start;__libc_start_main;main;grow_a;grow_b;grow_c;malloc;sysmalloc;memory_sbrk_more 4128768
 *
 * The lines are merged into a tree (a frame's callees are its children,
 * each weighing the sum of the lines through it) and drawn as an icicle:
 * the root on top, each child under its parent, as wide as its share of
 * the total.  The same picture flamegraph.pl --inverted draws, without
 * its JavaScript: each frame's <title> is its tooltip.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "probetab.h"
#include "report_flame.h"
#include "report_stacks.h"
#include "units.h"
#include "xalloc.h"

#define ROW 16		/* px per frame */
#define MAX_DEPTH 80	/* 64 frames, the probe, a process: room to spare */

struct node {
	char *name;
	uint64_t weight;
	size_t child, next;	/* first child, next sibling; 0: none (0 is
				 * the root, never a child) */
};

struct tree {
	struct node *n;
	size_t nn, cn;
	int depth;		/* the deepest frame's */
};

static size_t add_node(struct tree *t, const char *name, size_t len)
{
	XGROW(t->n, t->nn + 1, t->cn);
	t->n[t->nn] = (struct node){ .name = strndup(name, len) };
	if (!t->n[t->nn].name)
		t->n[t->nn].name = xstrdup("?");
	return t->nn++;
}

/* One folded line into t.  0, or -1 when it does not parse. */
static int add_line(struct tree *t, const char *line, size_t len)
{
	const char *sp = memrchr(line, ' ', len), *p = line;
	char *end;
	uint64_t w;
	size_t at = 0;
	int depth = 0;

	if (!sp || sp == line)
		return -1;
	w = strtoull(sp + 1, &end, 10);
	if (end != line + len || end == sp + 1 || w == 0 || w > UINT64_MAX - t->n[0].weight)
		return -1;
	t->n[0].weight += w;
	while (p < sp && depth < MAX_DEPTH) {
		const char *semi = memchr(p, ';', (size_t)(sp - p));
		size_t flen = semi ? (size_t)(semi - p) : (size_t)(sp - p), c;

		for (c = t->n[at].child; c; c = t->n[c].next)
			if (strlen(t->n[c].name) == flen && memcmp(t->n[c].name, p, flen) == 0)
				break;
		if (!c) {
			c = add_node(t, p, flen);
			t->n[c].next = t->n[at].child;
			t->n[at].child = c;
		}
		t->n[c].weight += w;
		at = c;
		if (++depth > t->depth)
			t->depth = depth;
		p = semi ? semi + 1 : sp;
	}
	return 0;
}

static int by_weight(const void *a, const void *b, void *arg)
{
	const struct node *n = arg;
	const struct node *x = &n[*(const size_t *)a], *y = &n[*(const size_t *)b];

	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* A warm colour from the name, the same for the same name on every page. */
static void colour(const char *name, char *buf, size_t len)
{
	unsigned h = 2166136261u;

	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	snprintf(buf, len, "rgb(%u,%u,%u)", 205 + h % 50, 80 + (h >> 8) % 130, 40 + (h >> 16) % 40);
}

struct draw {
	FILE *f;
	const struct tree *t;
	const char *unit;	/* NULL: the weights are bytes */
	double scale;		/* px per unit of weight */
};

static void draw_node(const struct draw *d, size_t i, int depth, double x)
{
	const struct node *n = &d->t->n[i];
	double w = (double)n->weight * d->scale;
	char c[32], b[32];
	size_t kids[256], nk = 0;	/* (a frame's first 256 callees drawn) */

	if (i) {
		colour(n->name, c, sizeof(c));
		fprintf(d->f, "<g class=\"fl\" data-depth=\"%d\" data-frame=\"", depth);
		mw_xml_escape(d->f, n->name);
		fprintf(d->f, "\" data-weight=\"%" PRIu64 "\"><title>", n->weight);
		mw_xml_escape(d->f, n->name);
		if (!d->unit)
			fprintf(d->f, ": %s", mw_human_bytes(n->weight, b, sizeof(b)));
		else
			fprintf(d->f, ": %" PRIu64 " %s", n->weight, d->unit);
		fprintf(d->f, ", %.2f%%</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
			"height=\"%d\" fill=\"%s\"/>", 100.0 * (double)n->weight /
			(double)d->t->n[0].weight, x, (depth - 1) * ROW, w, ROW - 1, c);
		if (w >= 30) {	/* a label where it fits, about 7 px a letter */
			size_t fit = (size_t)((w - 6) / 7), len = strlen(n->name);
			char *lab = xstrdup(n->name);

			if (len > fit) {
				size_t cut = fit > 2 ? fit - 2 : 0;

				while (cut && ((unsigned char)lab[cut] & 0xc0) == 0x80)
					cut--;	/* not inside a UTF-8 character */
				snprintf(lab + cut, 3, "..");
			}
			fprintf(d->f, "<text x=\"%.2f\" y=\"%d\">", x + 3, depth * ROW - 4);
			mw_xml_escape(d->f, lab);
			fprintf(d->f, "</text>");
			free(lab);
		}
		fprintf(d->f, "</g>\n");
	}
	for (size_t k = n->child; k && nk < sizeof(kids) / sizeof(kids[0]); k = d->t->n[k].next)
		kids[nk++] = k;
	qsort_r(kids, nk, sizeof(kids[0]), by_weight, d->t->n);
	for (size_t k = 0; k < nk; k++) {
		draw_node(d, kids[k], depth + 1, x);
		x += (double)d->t->n[kids[k]].weight * d->scale;
	}
}

int mw_flame_svg(FILE *f, const char *folded, const char *unit, int width)
{
	struct tree t = { 0 };
	size_t nn;

	add_node(&t, "", 0);	/* the root: all */
	for (const char *l = folded; l && *l; ) {
		size_t len = strcspn(l, "\n");

		add_line(&t, l, len);
		l += len + (l[len] == '\n');
	}
	if (t.n[0].weight) {
		fprintf(f, "<svg class=\"flame\" width=\"%d\" height=\"%d\" "
			"font-family=\"monospace\" font-size=\"11\" "
			"xmlns=\"http://www.w3.org/2000/svg\">\n", width, t.depth * ROW);
		draw_node(&(struct draw){ .f = f, .t = &t, .unit = unit,
			  .scale = (double)width / (double)t.n[0].weight }, 0, 0, 0);
		fprintf(f, "</svg>\n");
	}
	nn = t.n[0].weight ? t.nn - 1 : 0;
	for (size_t i = 0; i < t.nn; i++)
		free(t.n[i].name);
	free(t.n);
	return (int)nn;
}

void mw_flame_html(FILE *f, struct mw_stacks *s, pid_t pid, int width)
{
	static const struct { int probe; const char *unit, *what; } g[] = {
		{ MW_P_memory_sbrk_more, NULL, "the break's growth (memory_sbrk_more), bytes" },
		{ MW_P_memory_heap_new, NULL, "heaps made (memory_heap_new), bytes" },
		{ MW_P_memory_heap_more, "heap growths", "heap growths (memory_heap_more, sampled: "
					    "each sample stands for its period's hits)" },
	};

	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		char *folded = mw_report_stacks_folded_of(s, pid, g[i].probe);

		if (folded && *folded) {
			fprintf(f, "<h2 class=\"flame\">Flame graph (--stacks): %s by call "
				"stack, the root on top</h2>\n", g[i].what);
			mw_flame_svg(f, folded, g[i].unit, width);
		}
		free(folded);
	}
}
