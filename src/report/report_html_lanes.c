/* report_html_lanes.c - the page's drawing primitives (the timeline
 * markers' lines among them), one lane per
 * thread (the arenas it was attached to, from when, and how; where it
 * was found gone), and the lock-wait strip; see report_html.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "output.h"
#include "report_html_int.h"
#include "xalloc.h"

/* Arena colours: main_arena's blue first, then each the candidate (hue
 * every 5 degrees, three saturations, six lightnesses, none lighter than
 * L* 80 on the white page) farthest in CIELAB from all before it, so
 * neighbours in the list differ most: any 16 differ by a CIE76 delta E of
 * 39 or more, 32 by 25 (the 16 of Tableau's palette used before had two
 * blues 10 apart).  Beyond 32 arenas they repeat. */
static const char *const palette[] = {
	"#4e79a7", "#17d317", "#d31717", "#1717d3", "#ddbe5f", "#e82ca9", "#3dd6b0",
	"#732639", "#9e75f0", "#3c7e1b", "#f08a75", "#262673", "#d98cbf", "#735926",
	"#b4d317", "#267360", "#c82ce8", "#51d2ec", "#e82c6a", "#d37517", "#7f0f8a",
	"#5fdd74", "#8a2e0f", "#132dae", "#7594f0", "#a0226b", "#d9b28c", "#f075f0",
	"#a6cf6e", "#8a800f", "#61ae13", "#22a061",
};
#define NPAL (sizeof(palette) / sizeof(palette[0]))

/* "\nLABEL STACK" escaped into a title, when there is a stack */
void html_tip(FILE *f, const char *label, const char *stack)
{
	if (!stack)
		return;
	fprintf(f, "\n%s", label);
	mw_xml_escape(f, stack);
}


double html_x_of(const struct page *pg, uint64_t ns)
{
	if (ns <= pg->t0 || pg->t1 <= pg->t0)
		return LEFT;
	if (ns >= pg->t1)
		return LEFT + PLOT;
	return LEFT + (double)(ns - pg->t0) * PLOT / (double)(pg->t1 - pg->t0);
}

double html_secs(const struct page *pg, uint64_t ns)
{
	return ns > pg->t0 ? (double)(ns - pg->t0) / 1e9 : 0.0;
}

const char *html_colour(int i)
{
	return i < 0 ? "#999999" : palette[(size_t)i % NPAL];
}

/* How a thread attached, in words. */
static const char *html_how_name(enum mw_view_attach_how how)
{
	switch (how) {
	case MW_VIEW_ATTACH_NEW: return "new";
	case MW_VIEW_ATTACH_REUSE: return "reuse";
	case MW_VIEW_ATTACH_FREE_LIST: return "free list";
	default: return "attached";
	}
}

void html_ticks(const struct page *pg, int y0, int h)
{
	static const double mult[] = { 1, 2, 5 };
	double span = (double)(pg->t1 - pg->t0) / 1e9, decade = 0.001, step = decade;

	/* 1, 2, 5 x 10^k seconds: at most 10 ticks */
	for (int k = 1; span / step > 10; k++) {
		if (k % 3 == 0)
			decade *= 10;
		step = mult[k % 3] * decade;
	}
	for (int i = 0;; i++) {
		double t = i * step, x;

		if (t > span + 1e-9)
			break;
		x = LEFT + t / span * PLOT;

		fprintf(pg->f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%d\">%gs</text>\n", x, y0, x, y0 + h,
			x, y0 + h + 14, t);
	}
}

/* An attachment in the lanes' order: by thread, then by time; ties in
 * the model's order (arena by arena, each in stream order). */
struct lane_att {
	size_t thread;		/* index in pg->t */
	size_t order;		/* position in the model's order */
	const struct mw_view_attach *x;
	int arena;		/* index in pg->ar */
};

static int lane_att_cmp(const void *pa, const void *pb)
{
	const struct lane_att *a = pa, *b = pb;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->x->ns != b->x->ns)
		return a->x->ns < b->x->ns ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Every attachment of every arena, sorted by lane_att_cmp, in one
 * array the caller frees; *n its length.  O(A log A) for A attachments,
 * a thread found by its tid through an idmap. */
static struct lane_att *lane_index(const struct page *pg, const struct page_thread *t,
				   size_t nt, size_t *n)
{
	struct mw_idmap ix = { 0 };
	struct lane_att *v;
	size_t total = 0, k = 0;

	for (size_t a = 0; a < pg->nar; a++)
		total += pg->ar[a].natt;
	v = xcalloc(total + 1, sizeof(*v));
	for (size_t i = 0; i < nt; i++)
		mw_idmap_put(&ix, (uint64_t)(uint32_t)t[i].tid, i);
	for (size_t a = 0; a < pg->nar; a++)
		for (size_t j = 0; j < pg->ar[a].natt; j++) {
			const struct mw_view_attach *x = &pg->ar[a].att[j];
			size_t i = mw_idmap_get(&ix, (uint64_t)(uint32_t)x->tid);

			if (i != MW_IDMAP_NONE)
				v[k] = (struct lane_att){ .thread = i, .order = k, .x = x,
							  .arena = (int)a }, k++;
		}
	qsort(v, k, sizeof(*v), lane_att_cmp);
	mw_idmap_free(&ix);
	*n = k;
	return v;
}

/* Where thread t's lane ends: the sample that found it gone (V records),
 * else the axis's end. */
static uint64_t lane_end(const struct page *pg, const struct page_thread *t)
{
	return t->gone_ns && t->gone_ns < pg->t1 ? t->gone_ns : pg->t1;
}

/* The mark at the end of a lane whose thread was found gone. */
static void lane_gone(struct page *pg, const struct page_thread *t, double y)
{
	if (!t->gone_ns || t->gone_ns >= pg->t1)
		return;
	fprintf(pg->f, "<text class=\"tick gone\" x=\"%.1f\" y=\"%.0f\">&#215;<title>tid %d "
		"had exited by %.3f s (the sample then found it gone)</title></text>\n",
		html_x_of(pg, t->gone_ns) + 2, y + 13, t->tid, html_secs(pg, t->gone_ns));
}

/* Thread t's lane at height y: from `from` (0: not yet on an arena) on
 * arena cur, the attachments att[0..n) (its own, by time) after from,
 * each ending the bar before it, the last at the lane's end.  Returns
 * whether a bar was drawn. */
static int lane_bars(struct page *pg, const struct page_thread *t, double y, uint64_t from,
		     int cur, const struct lane_att *att, size_t n)
{
	FILE *f = pg->f;
	size_t k = 0;
	int drawn = 0;

	for (;;) {
		const struct lane_att *next = NULL;

		/* the first later than from: the earliest, the model's
		 * first among equals; those at the same time are passed */
		while (k < n && !next)
			if (att[k++].x->ns > from)
				next = &att[k - 1];
		if (cur >= 0 || from) {
			uint64_t to = next ? next->x->ns : lane_end(pg, t);

			to = to < from ? from : to;

			drawn = 1;
			fprintf(f, "<rect fill=\"%s\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
				"height=\"%d\"><title>tid %d on arena 0x%" PRIx64
				" from %.3f s</title></rect>\n", html_colour(cur), html_x_of(pg, from),
				y + 3, html_x_of(pg, to) - html_x_of(pg, from) + 0.5, LANE_H - 6,
				t->tid, cur >= 0 ? pg->ar[cur].addr : 0, html_secs(pg, from));
		}
		if (!next)
			return drawn;
		fprintf(f, "<circle class=\"how %s\" cx=\"%.1f\" cy=\"%.0f\" r=\"4\">"
			"<title>%.3f s  tid %d: %s arena 0x%" PRIx64,
			next->x->how == MW_VIEW_ATTACH_NEW ? "new" : next->x->how == MW_VIEW_ATTACH_REUSE ?
			"reuse" : "freelist", html_x_of(pg, next->x->ns), y + LANE_H / 2.0,
			html_secs(pg, next->x->ns), t->tid, html_how_name(next->x->how),
			pg->ar[next->arena].addr);
		if (next->x->how == MW_VIEW_ATTACH_NEW)
			html_tip(f, "created at: ", mw_stack_tip_arena(pg->tips, pg->ar[next->arena].addr));
		fprintf(f, "</title></circle>\n");
		cur = next->arena;
		from = next->x->ns;
	}
}

/* Thread t's attachments att[0..n) (by time) begin with untimed ones
 * (time 0: an old stream's E records, or threads that reused main_arena
 * before its address was known, merged when it was): draw the last of
 * them at lane height y from the thread's first timed event (else the
 * axis's start) to its first timed attachment (else the end), so that a
 * thread the table shows attached is not drawn as if on none.  1 when
 * drawn. */
static int lane_untimed(struct page *pg, const struct page_thread *t, double y,
			const struct lane_att *att, size_t n)
{
	size_t u = 0;
	uint64_t from = t->first_ns ? t->first_ns : pg->t0, to;

	while (u < n && !att[u].x->ns)
		u++;
	to = u < n ? att[u].x->ns : lane_end(pg, t);
	if (!u || from >= to)
		return 0;
	fprintf(pg->f, "<rect class=\"untimed\" fill=\"%s\" x=\"%.1f\" y=\"%.0f\" "
		"width=\"%.1f\" height=\"%d\"><title>tid %d on arena 0x%" PRIx64 " (%s) from "
		"its first event at %.3f s: when it attached is not in the stream</title></rect>\n",
		html_colour(att[u - 1].arena), html_x_of(pg, from), y + 3, html_x_of(pg, to) - html_x_of(pg, from) + 0.5,
		LANE_H - 6, t->tid, pg->ar[att[u - 1].arena].addr, html_how_name(att[u - 1].x->how),
		html_secs(pg, from));
	return 1;
}

/* One lane per thread: the arenas it was attached to, from when.
 * Linear in threads and attachments (after one sort of these). */
void html_lanes(struct page *pg)
{
	FILE *f = pg->f;
	size_t nt = pg->nt, natt, k = 0;
	const struct page_thread *t = pg->t;
	struct lane_att *att = lane_index(pg, t, nt, &natt);
	int pid = pg->pid;

	fprintf(f, "<svg id=\"lanes%s\" viewBox=\"0 0 %d %zu\" width=\"%d\" height=\"%zu\">\n",
		pg->sfx, W, nt * LANE_H + 24, W, nt * LANE_H + 24);
	html_ticks(pg, 0, (int)(nt * LANE_H));
	for (size_t i = 0; i < nt; i++) {
		double y = (double)i * LANE_H;
		int main_thread = t[i].tid == pid, drawn;
		size_t first = k;

		while (k < natt && att[k].thread == i)
			k++;
		fprintf(f, "<g class=\"lane\" data-tid=\"%d\"><text class=\"tick\" x=\"2\" y=\"%.0f\">"
			"%s%d</text>\n", t[i].tid, y + 13, main_thread ? "main " : "", t[i].tid);
		/* the main thread starts on main_arena, the model's first */
		drawn = !main_thread && lane_untimed(pg, &t[i], y, &att[first], k - first);
		lane_gone(pg, &t[i], y);
		if (!lane_bars(pg, &t[i], y, main_thread ? pg->t0 : 0, main_thread ? 0 : -1,
			       &att[first], k - first) && !drawn)	/* seen only in hits:
								 * setjmp... */
			fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.0f\">no arena event "
				"seen (%" PRIu64 " probe hit%s)</text>\n", LEFT + 4, y + 13, t[i].hits,
				t[i].hits == 1 ? "" : "s");
		if (t[i].waits)
			fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.0f\">%" PRIu64
				" waits</text>\n", W - 60, y + 13, t[i].waits);
		fprintf(f, "</g>\n");
	}
	fprintf(f, "</svg>\n");
	free(att);
}

/* Lock waits per interval: the differences of the C records' totals. */
void html_waits_strip(struct page *pg)
{
	FILE *f = pg->f;
	size_t ns = pg->tl->nr;
	const struct mw_view_reading *s = pg->tl->r;
	uint64_t prev = 0, max = 1, total = 0;
	uint64_t prev_ns = pg->t0;
	int counted = 0;

	for (size_t i = 0; i < ns; i++)
		if (s[i].have_waits) {
			if (s[i].waits - prev > max)
				max = s[i].waits - prev;
			total += s[i].waits - prev;
			prev = s[i].waits;
			counted = 1;
		}
	fprintf(f, "<svg id=\"waits%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n",
		pg->sfx, W, WAITS_H + 20, W, WAITS_H + 20);
	fprintf(f, "<text class=\"tick\" x=\"2\" y=\"12\">%" PRIu64 "/interval</text>\n", max);
	prev = 0;
	for (size_t i = 0; i < ns; i++) {
		uint64_t d;
		double h;

		if (!s[i].have_waits)
			continue;
		d = s[i].waits - prev;
		h = (double)d * WAITS_H / (double)max;
		if (d)
			fprintf(f, "<rect class=\"wait\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\"><title>%.3f-%.3f s: %" PRIu64 " lock waits"
				"</title></rect>\n", html_x_of(pg, prev_ns), WAITS_H - h,
				html_x_of(pg, s[i].ns) - html_x_of(pg, prev_ns) + 0.5, h, html_secs(pg, prev_ns),
				html_secs(pg, s[i].ns), d);
		prev = s[i].waits;
		prev_ns = s[i].ns;
	}
	for (size_t a = 0; a < pg->nar && !ns; a++)	/* counted at the end (A records) */
		total += pg->ar[a].waits;
	if (!ns && total)
		fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\">%" PRIu64 " lock wait%s in all, "
			"counted at the end: not over time (no sample of the allocator asked for "
			"them; each thread's are on its lane)</text>\n", LEFT + 4, WAITS_H / 2 + 4,
			total, total == 1 ? "" : "s");
	else if (!total)	/* an empty strip is not a broken one */
		fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\">%s</text>\n", LEFT + 4,
			WAITS_H / 2 + 4, counted ? "no waits: no thread waited for an arena's "
			"lock" : "no waits counted: no sample of the allocator asked for them");
	fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></svg>\n", LEFT,
		WAITS_H, LEFT + PLOT, WAITS_H);
}

/* A vertical line at each timeline marker, classed by its kind (retry,
 * mallopt, tcache, setting, threshold), its time, thread, probe and
 * arguments as its title. */
void html_mark_lines(const struct page *pg)
{
	size_t nm = pg->tl->nm;
	const struct mw_view_mark *m = pg->tl->m;

	for (size_t i = 0; i < nm; i++) {
		const char *kind = strstr(m[i].name, "retry") ? "retry" :
				   strstr(m[i].name, "mallopt") && !strstr(m[i].name, "dyn") ?
				   "mallopt" : strstr(m[i].name, "tcache") ? "tcache" :
				   strstr(m[i].name, "tunable") || strstr(m[i].name, "do_set") ?
				   "setting" : "threshold";
		double x = html_x_of(pg, m[i].ns);

		fprintf(pg->f, "<line class=\"mark %s\" x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%d\">"
			"<title>%.3f s  tid %d  ", kind, x, x, AREA_H, html_secs(pg, m[i].ns), m[i].tid);
		mw_xml_escape(pg->f, m[i].name);
		fprintf(pg->f, " %" PRId64 " %" PRId64, m[i].arg[0], m[i].arg[1]);
		html_tip(pg->f, "at: ", mw_stack_tip_event(pg->tips, m[i].name, m[i].tid, m[i].ns));
		fprintf(pg->f, "</title></line>\n");
	}
}
