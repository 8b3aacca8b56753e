/* report_html_events.c - a process's arenas and heaps over time, drawn
 * from its probe events, on a page without readings of the allocator (a
 * run of several processes, -f, -p PID,PID, takes none; see
 * report_html.c).
 *
 * What the events give exactly: when each arena was made
 * (memory_arena_new: its thread's attachment "new"), and when each heap
 * (heap_info) was made and freed (memory_heap_new, memory_heap_free; the
 * view's heaps table carries the times, its new_ns and free_ns).  So the
 * chart is of counts: the heaps live in each arena, stacked, in the
 * arena's colour, the arenas known as a step line with a dot where each
 * was made, and a strip of heaps made and freed.  Bytes are not drawn:
 * a heap's growth (memory_heap_more/less) and the main heap's sbrk
 * (memory_sbrk_more/less) are counted by the script, not streamed, so
 * they are known at the end only, and the page says so.
 *
 * Bounded: the steps are merged by pixel column (the state after the
 * last change in each of the PLOT columns), so a process draws at most
 * PLOT + 1 steps and PLOT + 1 markers of each kind however many heaps it
 * made; the model keeps two times per heap, beside the heap it keeps
 * anyway.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "idmap.h"
#include "output.h"
#include "report_html_int.h"
#include "units.h"
#include "xalloc.h"

enum { EV_ARENA_MADE, EV_ARENA_SEEN, EV_HEAP_NEW, EV_HEAP_FREE };

struct ev {
	uint64_t ns;
	int kind;		/* EV_* */
	size_t arena;		/* index in pg->ar; pg->nar: no known arena */
};

/* The steps: after step i (from ns[i] to the next), arenas[i] arenas
 * known and live[i * k + a] heaps live in arena a (a == nar: in none
 * known). */
struct steps {
	size_t n, k;
	uint64_t *ns;
	unsigned *arenas, *live;
	unsigned max;		/* the highest of the arenas and the heaps live */
	unsigned *made_at;	/* made_at[a]: arenas known once a was made */
	/* the strip: heaps made and freed in each pixel column */
	unsigned hnew[PLOT + 1], hfree[PLOT + 1];
	uint64_t hnew_n, hfree_n, amade;
};

static int ev_cmp(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns < b->ns ? -1 : 1;
	return (a->kind > b->kind) - (a->kind < b->kind);
}

static size_t col(const struct page *pg, uint64_t ns)
{
	return (size_t)(html_x_of(pg, ns) - LEFT);
}

/* When arena a is known from, and whether it was made then: main_arena
 * and those there at attach from the start; one made while traced at
 * its "new" attachment; one first seen reused (made before tracing, a
 * forked child's parent's) from then. */
static struct ev arena_ev(const struct page *pg, size_t a)
{
	const struct page_arena *ar = &pg->ar[a];
	struct ev e = { .ns = pg->t0, .kind = EV_ARENA_SEEN, .arena = a };

	if (ar->is_main || ar->at_attach)
		return e;
	for (size_t j = 0; j < ar->natt; j++)
		if (ar->att[j].how == MW_VIEW_ATTACH_NEW) {
			e.kind = EV_ARENA_MADE;
			e.ns = ar->att[j].ns;
			break;
		}
	if (e.kind == EV_ARENA_SEEN && ar->natt)
		e.ns = ar->att[0].ns;
	if (e.ns < pg->t0)
		e.ns = pg->t0;
	return e;
}

/* Every event, sorted by time (arenas before heaps made before heaps
 * freed at the same time); *n their count. */
static struct ev *events(const struct page *pg, size_t *n)
{
	size_t nh = pg->nh, k = 0;
	const struct page_heap *h = pg->h;
	struct ev *v = xcalloc(pg->nar + 2 * nh + 1, sizeof(*v));
	struct mw_idmap ix = { 0 };

	for (size_t a = 0; a < pg->nar; a++) {
		v[k++] = arena_ev(pg, a);
		mw_idmap_put(&ix, pg->ar[a].addr, a);
	}
	for (size_t i = 0; i < nh; i++) {
		size_t a = h[i].arena ? mw_idmap_get(&ix, h[i].arena) : MW_IDMAP_NONE;
		uint64_t made = h[i].new_ns > pg->t0 ? h[i].new_ns : pg->t0;

		a = a == MW_IDMAP_NONE ? pg->nar : a;
		v[k++] = (struct ev){ .ns = made, .kind = EV_HEAP_NEW, .arena = a };
		if (h[i].freed)	/* an untimed free: at its making */
			v[k++] = (struct ev){ .ns = h[i].free_ns > made ? h[i].free_ns : made,
					      .kind = EV_HEAP_FREE, .arena = a };
	}
	mw_idmap_free(&ix);
	qsort(v, k, sizeof(*v), ev_cmp);
	*n = k;
	return v;
}

/* Apply event e to the state (arenas *na, heaps live cur[]) and count it
 * in the strip and sp's totals. */
static void apply(const struct page *pg, struct steps *sp, const struct ev *e, unsigned *na,
		  unsigned *cur)
{
	switch (e->kind) {
	case EV_ARENA_MADE:
		sp->amade++;
		__attribute__((fallthrough));
	case EV_ARENA_SEEN:
		sp->made_at[e->arena] = ++*na;
		break;
	case EV_HEAP_NEW:
		cur[e->arena]++;
		sp->hnew[col(pg, e->ns)]++;
		sp->hnew_n++;
		break;
	case EV_HEAP_FREE:
		if (cur[e->arena])
			cur[e->arena]--;
		sp->hfree[col(pg, e->ns)]++;
		sp->hfree_n++;
		break;
	}
}

/* The steps of the process's events: one per pixel column that has
 * any, the state after its last. */
static struct steps *steps_new(const struct page *pg)
{
	size_t nev, room;
	struct ev *v = events(pg, &nev);
	struct steps *sp = xcalloc(1, sizeof(*sp));
	unsigned na = 0, *cur;

	sp->k = pg->nar + 1;
	room = nev < PLOT + 1 ? nev : PLOT + 1;
	sp->ns = xcalloc(room + 1, sizeof(*sp->ns));
	sp->arenas = xcalloc(room + 1, sizeof(*sp->arenas));
	sp->live = xcalloc((room + 1) * sp->k, sizeof(*sp->live));
	sp->made_at = xcalloc(sp->k, sizeof(*sp->made_at));
	cur = xcalloc(sp->k, sizeof(*cur));
	for (size_t j = 0; j < nev; j++) {
		unsigned total = 0;

		apply(pg, sp, &v[j], &na, cur);
		if (j + 1 < nev && col(pg, v[j + 1].ns) == col(pg, v[j].ns))
			continue;
		sp->ns[sp->n] = v[j].ns;
		sp->arenas[sp->n] = na;
		memcpy(&sp->live[sp->n * sp->k], cur, sp->k * sizeof(*cur));
		for (size_t a = 0; a < sp->k; a++)
			total += cur[a];
		sp->max = total > sp->max ? total : sp->max;
		sp->max = na > sp->max ? na : sp->max;
		sp->n++;
	}
	free(cur);
	free(v);
	return sp;
}

static void steps_free(struct steps *sp)
{
	if (!sp)
		return;
	free(sp->ns);
	free(sp->arenas);
	free(sp->live);
	free(sp->made_at);
	free(sp);
}

/* The count axis, 0 to *max: a step of 1, 2 or 5 x 10^k, at most 6,
 * *max raised to the last; a grid line and a label at each. */
static void count_axis(const struct page *pg, unsigned *max)
{
	static const unsigned mult[] = { 1, 2, 5 };
	unsigned step = 1, decade = 1, m = *max ? *max : 1;

	for (int k = 0; (m + step - 1) / step > 5; k++) {	/* 2, 5, 10, 20, ... */
		if (k % 3 == 2)
			decade *= 10;
		step = mult[(k + 1) % 3] * decade;
	}
	*max = (m + step - 1) / step * step;
	for (unsigned v = 0; v <= *max; v += step) {
		double y = AREA_H - (double)v * AREA_H / *max;

		fprintf(pg->f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"2\" y=\"%.1f\">%u</text>\n", LEFT, y, LEFT + PLOT,
			y, v ? y + 4 : y, v);
	}
}

static double y_of(unsigned v, unsigned max)
{
	return AREA_H - (double)v * AREA_H / max;
}

/* The end of step i: the next step's time, the axis's end for the last. */
static uint64_t step_end(const struct page *pg, const struct steps *sp, size_t i)
{
	return i + 1 < sp->n ? sp->ns[i + 1] : pg->t1;
}

/* Arena a's band of heaps live (a == nar: those of no known arena), on
 * top of base[] which it then raises; its series {name, colour, v} for
 * the hover, NULL when it never had a heap (the band is then empty). */
static json_t *heap_band(const struct page *pg, const struct steps *sp, size_t a, unsigned *base,
			 unsigned max)
{
	FILE *f = pg->f;
	json_t *jv;
	int any = 0;
	char name[64];

	for (size_t i = 0; i < sp->n && !any; i++)
		any = sp->live[i * sp->k + a] != 0;
	if (!any && a == pg->nar)	/* every heap's arena known */
		return NULL;
	if (a < pg->nar)
		snprintf(name, sizeof(name), "%s0x%" PRIx64, pg->ar[a].is_main ? "main_arena " : "",
			 pg->ar[a].addr);
	else
		snprintf(name, sizeof(name), "no known arena");
	if (a < pg->nar)
		fprintf(f, "<g class=\"series\" data-arena=\"0x%" PRIx64 "\">", pg->ar[a].addr);
	else
		fprintf(f, "<g class=\"unattributed\">");
	fprintf(f, "<path fill=\"%s\" d=\"", html_colour(a < pg->nar ? (int)a : -1));
	if (!any) {	/* no heap ever: an empty band */
		fprintf(f, "\"><title>no heap in ");
		mw_xml_escape(f, name);
		fprintf(f, "</title></path></g>\n");
		return NULL;
	}
	jv = json_array();
	for (size_t i = 0; i < sp->n; i++) {
		unsigned v = sp->live[i * sp->k + a];
		double y = y_of(base[i] + v, max);

		json_array_append_new(jv, json_integer(v));
		fprintf(f, "%s%.1f,%.1f L%.1f,%.1f", i ? " L" : "M", html_x_of(pg, sp->ns[i]), y,
			html_x_of(pg, step_end(pg, sp, i)), y);
	}
	for (size_t i = sp->n; i-- > 0;) {
		double y = y_of(base[i], max);

		fprintf(f, " L%.1f,%.1f L%.1f,%.1f", html_x_of(pg, step_end(pg, sp, i)), y,
			html_x_of(pg, sp->ns[i]), y);
		base[i] += sp->live[i * sp->k + a];
	}
	fprintf(f, "%s\"><title>heaps live in ", sp->n ? " Z" : "");
	mw_xml_escape(f, name);
	fprintf(f, "</title></path></g>\n");
	return json_pack("{s:s, s:s, s:o}", "name", name, "colour",
			 html_colour(a < pg->nar ? (int)a : -1), "v", jv);
}

/* The arenas known, a step line, with a dot where each was made. */
static void arena_line(const struct page *pg, const struct steps *sp, unsigned max)
{
	FILE *f = pg->f;

	fprintf(f, "<path class=\"arenas\" d=\"");
	for (size_t i = 0; i < sp->n; i++)
		fprintf(f, "%s%.1f,%.1f L%.1f,%.1f", i ? " L" : "M", html_x_of(pg, sp->ns[i]),
			y_of(sp->arenas[i], max), html_x_of(pg, step_end(pg, sp, i)),
			y_of(sp->arenas[i], max));
	fprintf(f, "\"><title>arenas known: main_arena and those there at attach from the "
		"start, each made from its memory_arena_new, one first seen reused from "
		"then</title></path>\n");
	for (size_t a = 0; a < pg->nar; a++) {
		struct ev e = arena_ev(pg, a);

		if (e.kind != EV_ARENA_MADE)
			continue;
		fprintf(f, "<circle class=\"arena-new\" data-arena=\"0x%" PRIx64 "\" fill=\"%s\" "
			"cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>%.3f s  tid %d made arena 0x%" PRIx64
			" (memory_arena_new, size %" PRIu64 ")", pg->ar[a].addr, html_colour((int)a),
			html_x_of(pg, e.ns), y_of(sp->made_at[a], max), html_secs(pg, e.ns),
			pg->ar[a].created_by_tid, pg->ar[a].addr, pg->ar[a].create_size);
		html_tip(f, "created at: ", mw_stack_tip_arena(pg->tips, pg->ar[a].addr));
		fprintf(f, "</title></circle>\n");
	}
}

/* The strip under the chart from y0: a triangle up per pixel column
 * where heaps were made, down where freed, the count in its title. */
static void heap_strip(const struct page *pg, const struct steps *sp, int y0)
{
	FILE *f = pg->f;

	fprintf(f, "<text class=\"tick\" x=\"2\" y=\"%d\">heaps +</text>"
		"<text class=\"tick\" x=\"2\" y=\"%d\">heaps -</text>\n", y0 + 8, y0 + 20);
	for (int up = 1; up >= 0; up--)
		for (size_t c = 0; c <= PLOT; c++) {
			unsigned n = up ? sp->hnew[c] : sp->hfree[c];
			double t0 = (double)c / PLOT * (double)(pg->t1 - pg->t0) / 1e9;

			if (!n)
				continue;
			fprintf(f, "<path class=\"%s\" data-n=\"%u\" d=\"M%zu,%d l-3,%d h6 z\">"
				"<title>%.3f-%.3f s: %u heap%s %s (%s)</title></path>\n",
				up ? "heap-new" : "heap-free", n, LEFT + c, up ? y0 + 2 : y0 + 20,
				up ? 7 : -7, t0, t0 + (double)(pg->t1 - pg->t0) / 1e9 / PLOT, n,
				n == 1 ? "" : "s", up ? "made" : "freed",
				up ? "memory_heap_new" : "memory_heap_free");
		}
}

/* The chart's data for the hover: steps' times, arenas, heaps live. */
static void chart_data(const struct page *pg, const struct steps *sp, json_t *data, json_t *js)
{
	json_t *jt = json_array(), *ja = json_array(), *jh = json_array();

	for (size_t i = 0; i < sp->n; i++) {
		unsigned total = 0;

		for (size_t a = 0; a < sp->k; a++)
			total += sp->live[i * sp->k + a];
		json_array_append_new(jt, json_real(html_secs(pg, sp->ns[i])));
		json_array_append_new(ja, json_integer(sp->arenas[i]));
		json_array_append_new(jh, json_integer(total));
	}
	json_object_set_new(data, "ev", json_pack("{s:o, s:o, s:o, s:o}", "t", jt, "arenas", ja,
						  "heaps", jh, "series", js));
	json_object_set_new(data, "x0", json_integer(LEFT));
	json_object_set_new(data, "plot", json_integer(PLOT));
	json_object_set_new(data, "span", json_real((double)(pg->t1 - pg->t0) / 1e9));
}

/* The main heap's sbrk account (the view's), known at the end only. */
static void sbrk_words(const struct page *pg)
{
	uint64_t grown = (uint64_t)mw_view_get(pg->v, MW_VF_sbrk_grown)->v;
	uint64_t trimmed = (uint64_t)mw_view_get(pg->v, MW_VF_sbrk_trimmed)->v;
	uint64_t nmore = (uint64_t)mw_view_get(pg->v, MW_VF_sbrk_grow_calls)->v;
	uint64_t nless = (uint64_t)mw_view_get(pg->v, MW_VF_sbrk_trim_calls)->v;
	char g[16], t[16];

	fprintf(pg->f, "Not over time: a heap's growth (memory_heap_more/less) and the main "
		"heap's sbrk (memory_sbrk_more/less) are counted by the script, not streamed; at "
		"the end, sbrk grew %s in %" PRIu64 " call%s and trimmed %s in %" PRIu64
		" (the summary below).", mw_human_bytes(grown, g, sizeof(g)), nmore,
		nmore == 1 ? "" : "s", mw_human_bytes(trimmed, t, sizeof(t)), nless);
}

/* What the chart is from, its bound and what it leaves out, beneath it. */
static void chart_note(const struct page *pg, const struct steps *sp)
{
	fprintf(pg->f, "<p class=\"reading\">From the probes: %" PRIu64 " arena%s made "
		"(memory_arena_new), %" PRIu64 " heap%s made and %" PRIu64 " freed "
		"(memory_heap_new, memory_heap_free), in %zu step%s: each is the state after the "
		"last change in its pixel column, at most %d. ", sp->amade,
		sp->amade == 1 ? "" : "s", sp->hnew_n, sp->hnew_n == 1 ? "" : "s", sp->hfree_n,
		sp->n, sp->n == 1 ? "" : "s", PLOT + 1);
	sbrk_words(pg);
	fprintf(pg->f, "</p>\n");
}

/* A process with no timed event: a line in place of the chart. */
static void untimed_note(const struct page *pg)
{
	size_t nh = (size_t)mw_view_get(pg->v, MW_VF_heaps)->v;

	fprintf(pg->f, "<p class=\"reading\">Nothing to draw over time: no timed event (no "
		"arena or heap made, no threshold, mallopt, retry or tcache event while traced, "
		"or a stream saved before events had times); %zu arena%s, %zu heap%s%s. ",
		pg->nar, pg->nar == 1 ? "" : "s", nh, nh == 1 ? "" : "s",
		mw_view_get(pg->v, MW_VF_attach_unknown)->v ?
		" seen while traced (those at attach unknown)" : "");
	sbrk_words(pg);
	fprintf(pg->f, "</p>\n");
}

static void legend(const struct page *pg)
{
	fprintf(pg->f, "<p class=\"legend\">heaps live in: ");
	for (size_t a = 0; a < pg->nar; a++)
		fprintf(pg->f, "<span><i style=\"background:%s\"></i>%s0x%" PRIx64 "</span> ",
			html_colour((int)a), pg->ar[a].is_main ? "main_arena " : "", pg->ar[a].addr);
	fprintf(pg->f, "<span><i class=\"line\"></i>arenas known</span> "
		"<span><i class=\"dot\"></i>arena made</span> "
		"<span><i class=\"m threshold\"></i>threshold</span> "
		"<span><i class=\"m mallopt\"></i>mallopt</span> "
		"<span><i class=\"m setting\"></i>tunable/setting</span> "
		"<span><i class=\"m retry\"></i>retry</span> "
		"<span><i class=\"m tcache\"></i>tcache</span></p>\n");
}

void html_events_section(struct page *pg, json_t *data)
{
	FILE *f = pg->f;
	struct steps *sp;
	unsigned max, *base;
	json_t *js;

	fprintf(f, "<h2>Arenas and heaps over time, from the probes: heaps live per arena "
		"(stacked), the arenas known (line); no reading of the allocator was taken "
		"during the run (runs of several processes, -f, take none)</h2>\n");
	json_object_set_new(data, "t", json_array());	/* no samples */
	if (!pg->timed) {
		untimed_note(pg);
		return;
	}
	sp = steps_new(pg);
	max = sp->max;
	base = xcalloc(sp->n + 1, sizeof(*base));
	js = json_array();
	legend(pg);
	fprintf(f, "<svg id=\"area%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n",
		pg->sfx, W, AREA_H + 56, W, AREA_H + 56);
	html_ticks(pg, 0, AREA_H);
	count_axis(pg, &max);
	for (size_t a = 0; a < sp->k; a++) {
		json_t *s = heap_band(pg, sp, a, base, max);

		if (s)
			json_array_append_new(js, s);
	}
	arena_line(pg, sp, max);
	heap_strip(pg, sp, AREA_H + 30);
	html_mark_lines(pg);
	fprintf(f, "<line id=\"cursor%s\" x1=\"%d\" y1=\"0\" x2=\"%d\" y2=\"%d\" "
		"style=\"display:none\"/>\n</svg>\n", pg->sfx, LEFT, LEFT, AREA_H);
	chart_data(pg, sp, data, js);
	chart_note(pg, sp);
	free(base);
	steps_free(sp);
}

/* The hover read-out: the state at the pointer's time (the last step
 * at or before it), the arenas and the heaps live, per arena. */
const char html_js_events[] =
"(function(){var d=JSON.parse(document.getElementById('mw-data').textContent);"
"var svg=document.getElementById('area'),tip=document.getElementById('tip'),"
"cur=document.getElementById('cursor'),e=d.ev;if(!e||!e.t.length)return;"
"svg.addEventListener('mousemove',function(m){var r=svg.getBoundingClientRect();"
"var x=(m.clientX-r.left)*svg.viewBox.baseVal.width/r.width;"
"var t=(x-d.x0)/d.plot*d.span,b=-1;for(var i=0;i<e.t.length&&e.t[i]<=t;i++)b=i;"
"var s=Math.max(t,0).toFixed(3)+' s\\n';if(b<0)s+='before the first event';"
"else{s+='arenas known: '+e.arenas[b]+'\\nheaps live: '+e.heaps[b];"
"e.series.forEach(function(a){if(a.v[b])s+='\\n  '+a.name+': '+a.v[b];});}"
"cur.setAttribute('x1',x);cur.setAttribute('x2',x);cur.style.display='inline';"
"tip.textContent=s;tip.style.display='block';tip.style.left=(m.clientX+12)+'px';"
"tip.style.top=(m.clientY+12)+'px';});"
"svg.addEventListener('mouseleave',function(){tip.style.display='none';"
"cur.style.display='none';});})();";
