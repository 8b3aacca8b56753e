/* report_html.c - the run as one self-contained HTML page (--html).
 *
 * Inline SVG drawn here, inline CSS, a few lines of JavaScript for the
 * hover read-out, the data it reads as a JSON island (jansson); no
 * network, no external file, a Content-Security-Policy that forbids
 * loading anything.  Everything on the page comes from the stream (the
 * run's view, view.h: its figures, tables and timeline, and the run's
 * stream-side facts), never from the clock or the live-only snapshots,
 * so `mallocwatch replay --html` of a saved stream writes the same bytes
 * as the run that saved it.
 *
 * Parts: bytes per arena over time (stacked areas of malloc_state.
 * system_mem from the --interval samples, main_arena's sbrk extent as a
 * dashed line), markers for threshold changes, mallopt calls, tunables,
 * retries and tcache checks; one lane per thread showing the arena it was
 * attached to and how (new, reuse, free list); lock waits per interval;
 * the text summary beneath.  A process without samples (-f and the other
 * runs of several processes take none) gets its arenas and heaps over
 * time from its probe events instead (report_html_events.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "idmap.h"
#include "msg.h"
#include "output.h"
#include "probetab.h"
#include "report.h"
#include "report_flame.h"
#include "report_ledger.h"
#include "report_stacks.h"
#include "report_html_int.h"
#include "report_int.h"
#include "view.h"
#include "xalloc.h"

/* The time axis: from the program's start (O record; else the first
 * thing timed) to the last thing timed. */
static void time_axis(struct page *pg)
{
	size_t ns = pg->tl->nr, nm = pg->tl->nm, nt = pg->nt;
	const struct mw_view_reading *s = pg->tl->r;
	const struct mw_view_mark *m = pg->tl->m;
	const struct page_thread *t = pg->t;
	uint64_t lo = UINT64_MAX, hi = 0, origin = (uint64_t)mw_view_get(pg->v, MW_VF_origin_ns)->v;

#define SEE(v) do { if ((v) && (v) < lo) lo = (v); if ((v) > hi) hi = (v); } while (0)
	for (size_t i = 0; i < ns; i++)
		SEE(s[i].ns);
	for (size_t i = 0; i < nm; i++)
		SEE(m[i].ns);
	for (size_t i = 0; i < nt; i++) {
		SEE(t[i].first_ns);
		SEE(t[i].last_ns);
	}
#undef SEE
	pg->t0 = origin ? origin : lo;
	if (pg->t0 == UINT64_MAX)
		pg->t0 = 0;
	pg->timed = hi > pg->t0;
	pg->t1 = pg->timed ? hi : pg->t0 + 1000000000ULL;
}

/* The main heap's extent in sample s, bytes: sbrk_base to the end of
 * main_arena's top. */
static uint64_t extent(const struct mw_view_reading *s)
{
	return s->main_end > s->sbrk_base ? s->main_end - s->sbrk_base : 0;
}

/* The system bytes of arena addr in sample s (0 when it is not there). */
static uint64_t sample_bytes(const struct mw_view_reading *s,
			     const struct mw_view_reading_arena *sa, uint64_t addr)
{
	for (size_t i = 0; i < s->n; i++)
		if (sa[s->first + i].arena == addr)
			return sa[s->first + i].system;
	return 0;
}

/* The stacks that made arena's heaps (--stacks), up to 4, in a title. */
static void arena_heap_tips(const struct page *pg, uint64_t arena)
{
	size_t nh = pg->nh, shown = 0;
	const struct page_heap *h = pg->h;
	char label[64];

	for (size_t i = 0; pg->tips && i < nh && shown < 4; i++) {
		const char *st = h[i].arena == arena ? mw_stack_tip_heap(pg->tips, h[i].addr) : NULL;

		snprintf(label, sizeof(label), "heap 0x%" PRIx64 " made at: ", h[i].addr);
		html_tip(pg->f, label, st);
		shown += st != NULL;
	}
}

/* Arena a's band of the stacked areas, drawn on top of base[] (which it
 * then raises by its values val[i * pg->nar + a], sample i's), scaled to
 * max; returns its series for the page's data, {name, colour, v}. */
static json_t *area_band(const struct page *pg, size_t a, const struct mw_view_reading *s,
			 size_t ns, const uint64_t *val, double *base, uint64_t max)
{
	FILE *f = pg->f;
	json_t *jv = json_array();
	char name[64];

	snprintf(name, sizeof(name), "%s0x%" PRIx64, pg->ar[a].is_main ? "main_arena " : "",
		 pg->ar[a].addr);
	fprintf(f, "<g class=\"series\" data-arena=\"0x%" PRIx64 "\"><path fill=\"%s\" d=\"",
		pg->ar[a].addr, html_colour((int)a));
	/* steps: a sample's value from the one before it (or the
	 * start) to its own time; the top edge left to right, then
	 * back along the base */
	for (size_t i = 0; i < ns; i++) {
		uint64_t v = val[i * pg->nar + a];
		double y = AREA_H - (base[i] + (double)v) * AREA_H / (double)max;

		json_array_append_new(jv, json_integer((json_int_t)v));
		fprintf(f, "%s%.1f,%.1f L%.1f,%.1f", i ? " L" : "M",
			html_x_of(pg, i ? s[i - 1].ns : pg->t0), y, html_x_of(pg, s[i].ns), y);
	}
	for (size_t i = ns; i-- > 0;) {
		double y = AREA_H - base[i] * AREA_H / (double)max;

		fprintf(f, " L%.1f,%.1f L%.1f,%.1f", html_x_of(pg, s[i].ns), y,
			html_x_of(pg, i ? s[i - 1].ns : pg->t0), y);
	}
	for (size_t i = 0; i < ns; i++)
		base[i] += (double)val[i * pg->nar + a];
	fprintf(f, "%s\"><title>", ns ? " Z" : "");
	mw_xml_escape(f, name);
	html_tip(f, "created at: ", mw_stack_tip_arena(pg->tips, pg->ar[a].addr));
	arena_heap_tips(pg, pg->ar[a].addr);
	fprintf(f, "</title></path></g>\n");
	return json_pack("{s:s, s:s, s:o}", "name", name, "colour", html_colour((int)a), "v", jv);
}

/* The main heap's extent (sbrk) in each of the ns samples s, as steps
 * scaled to max; nothing without samples. */
static void sbrk_line(const struct page *pg, const struct mw_view_reading *s, size_t ns,
		      uint64_t max)
{
	if (!ns)
		return;
	fprintf(pg->f, "<path class=\"sbrk\" d=\"");
	for (size_t i = 0; i < ns; i++) {
		double y = AREA_H - (double)extent(&s[i]) * AREA_H / (double)max;

		fprintf(pg->f, "%s%.1f,%.1f L%.1f,%.1f", i ? " L" : "M",
			html_x_of(pg, i ? s[i - 1].ns : pg->t0), y, html_x_of(pg, s[i].ns), y);
	}
	fprintf(pg->f, "\"><title>main heap extent (sbrk)");
	html_tip(pg->f, "grown by (--stacks):\n", mw_stack_tip_grow(pg->tips, 0));
	fprintf(pg->f, "</title></path>\n");
}

/* Whether any sample has the mmapped chunks and the RSS (Y records
 * with MW_NF_SAMPLE_MEM fields): streams saved before them draw as they
 * did. */
static int have_mem(const struct mw_view_reading *s, size_t ns)
{
	for (size_t i = 0; i < ns; i++)
		if (s[i].have_mem)
			return 1;
	return 0;
}

/* The byte axis, 0 to *max: a 1, 2 or 5 x 10^k step (0.1 up) in the
 * binary unit of *max (B, KiB, MiB, ...), at most 6 steps, and *max
 * raised to the next step so that the top is labelled; a grid line and
 * a label at each step. */
static void y_axis(const struct page *pg, uint64_t *max)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	static const double mult[] = { 1, 2, 5 };
	double u = 1, v, decade = 0.1, step = 0.1;
	uint64_t n;
	int ui = 0;

	while (ui < 4 && (double)*max >= u * 1024) {
		u *= 1024;
		ui++;
	}
	v = (double)*max / u;
	for (int k = 0; v / step > 6; k++) {
		if (k % 3 == 2)
			decade *= 10;
		step = mult[(k + 1) % 3] * decade;
	}
	if (!ui && step < 1)	/* whole bytes */
		step = 1;
	n = (uint64_t)(v / step);	/* steps, rounded up */
	if ((double)n < v / step - 1e-9)
		n++;
	*max = (uint64_t)((double)n * step * u);
	if (!*max)
		*max = 1;
	for (int i = 0;; i++) {
		double b = i * step * u, y = AREA_H - b * AREA_H / (double)*max;

		if (b > (double)*max * (1 + 1e-9))
			break;
		fprintf(pg->f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"2\" y=\"%.1f\">%g%s%s</text>\n", LEFT, y, LEFT + PLOT,
			y, i ? y + 4 : y, i * step, i ? " " : "", i ? unit[ui] : "");
	}
}

/* A step line through v[0..ns) (one value a sample) scaled to max. */
static void step_path(const struct page *pg, const struct mw_view_reading *s, size_t ns,
		      const uint64_t *v, uint64_t max)
{
	for (size_t i = 0; i < ns; i++) {
		double y = AREA_H - (double)v[i] * AREA_H / (double)max;

		fprintf(pg->f, "%s%.1f,%.1f L%.1f,%.1f", i ? " L" : "M",
			html_x_of(pg, i ? s[i - 1].ns : pg->t0), y, html_x_of(pg, s[i].ns), y);
	}
}

/* The mmapped chunks' band, on top of the arenas' (base[], their sum in
 * each sample), and the process's RSS as a solid line: what malloc holds
 * beside what the process holds. */
static void mem_series(const struct page *pg, const struct mw_view_reading *s, size_t ns,
		       const double *base, uint64_t max)
{
	FILE *f = pg->f;
	uint64_t *top = xcalloc(ns + 1, sizeof(*top)), *rss = xcalloc(ns + 1, sizeof(*rss));
	int any_rss = 0;

	for (size_t i = 0; i < ns; i++) {
		top[i] = (uint64_t)base[i] + s[i].mmapped;
		rss[i] = s[i].rss;
		any_rss |= s[i].rss != 0;
	}
	fprintf(f, "<g class=\"mmapped\"><path fill=\"#c9c9c9\" stroke=\"#777\" "
		"stroke-width=\"0.8\" d=\"");
	step_path(pg, s, ns, top, max);
	for (size_t i = ns; i-- > 0;) {
		double y = AREA_H - base[i] * AREA_H / (double)max;

		fprintf(f, " L%.1f,%.1f L%.1f,%.1f", html_x_of(pg, s[i].ns), y,
			html_x_of(pg, i ? s[i - 1].ns : pg->t0), y);
	}
	fprintf(f, "%s\"><title>mmapped chunks (mp_.mmapped_mem)</title></path></g>\n",
		ns ? " Z" : "");
	if (any_rss) {
		fprintf(f, "<path class=\"rss\" fill=\"none\" stroke=\"#7b3294\" stroke-width=\"1.8\" "
			"d=\"");
		step_path(pg, s, ns, rss, max);
		fprintf(f, "\"><title>the process's RSS (/proc/PID/statm)</title></path>\n");
	}
	free(top);
	free(rss);
}

/* The scale of the chart: the highest of the arenas' sum (with the
 * mmapped chunks when mem), the sbrk extent and the RSS; at least 1. */
static uint64_t chart_max(const struct page *pg, const struct mw_view_reading *s, size_t ns,
			  const uint64_t *val, int mem)
{
	uint64_t max = 1;

	for (size_t i = 0; i < ns; i++) {
		uint64_t sum = mem ? s[i].mmapped : 0;

		for (size_t a = 0; a < pg->nar; a++)
			sum += val[i * pg->nar + a];
		if (sum > max)
			max = sum;
		if (extent(&s[i]) > max)
			max = extent(&s[i]);
		if (mem && s[i].rss > max)
			max = s[i].rss;
	}
	return max;
}

/* Stacked areas of system bytes per arena, the mmapped chunks on top and
 * the RSS (streams that have them); the sbrk extent; markers. */
static void area_chart(struct page *pg, json_t *data)
{
	FILE *f = pg->f;
	size_t ns = pg->tl->nr;
	const struct mw_view_reading *s = pg->tl->r;
	const struct mw_view_reading_arena *sa = pg->tl->arenas;
	uint64_t max;
	int mem = have_mem(s, ns);
	double *base = xcalloc(ns + 1, sizeof(*base));
	/* val[i * nar + a]: arena a's bytes in sample i */
	uint64_t *val = xcalloc(ns * pg->nar + 1, sizeof(*val));
	json_t *jt = json_array(), *js = json_array(), *jb = json_array();
	json_t *jm = json_array(), *jr = json_array();

	for (size_t i = 0; i < ns; i++) {
		for (size_t a = 0; a < pg->nar; a++)
			val[i * pg->nar + a] = sample_bytes(&s[i], sa, pg->ar[a].addr);
		json_array_append_new(jt, json_real(html_secs(pg, s[i].ns)));
		json_array_append_new(jb, json_integer((json_int_t)extent(&s[i])));
		json_array_append_new(jm, json_integer((json_int_t)s[i].mmapped));
		json_array_append_new(jr, json_integer((json_int_t)s[i].rss));
	}
	max = chart_max(pg, s, ns, val, mem);
	fprintf(f, "<svg id=\"area%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n",
		pg->sfx, W, AREA_H + 30, W, AREA_H + 30);
	html_ticks(pg, 0, AREA_H);
	y_axis(pg, &max);	/* ns > 0: bytes_section */
	for (size_t a = 0; a < pg->nar; a++)
		json_array_append_new(js, area_band(pg, a, s, ns, val, base, max));
	if (mem)
		mem_series(pg, s, ns, base, max);
	sbrk_line(pg, s, ns, max);
	html_mark_lines(pg);
	fprintf(f, "<line id=\"cursor%s\" x1=\"%d\" y1=\"0\" x2=\"%d\" y2=\"%d\" "
		"style=\"display:none\"/>\n</svg>\n", pg->sfx, LEFT, LEFT, AREA_H);
	json_object_set_new(data, "t", jt);
	json_object_set_new(data, "series", js);
	json_object_set_new(data, "sbrk", jb);
	if (mem) {	/* only then: older streams' pages keep their bytes */
		json_object_set_new(data, "mmap", jm);
		json_object_set_new(data, "rss", jr);
	} else {
		json_decref(jm);
		json_decref(jr);
	}
	json_object_set_new(data, "x0", json_integer(LEFT));
	json_object_set_new(data, "plot", json_integer(PLOT));
	json_object_set_new(data, "span", json_real((double)(pg->t1 - pg->t0) / 1e9));
	free(base);
	free(val);
}

/* The legend: arenas, the mmapped chunks and the RSS (when mem), the
 * sbrk line and the markers. */
static void legend(struct page *pg, int mem)
{
	fprintf(pg->f, "<p class=\"legend\">");
	for (size_t a = 0; a < pg->nar; a++)
		fprintf(pg->f, "<span><i style=\"background:%s\"></i>%s0x%" PRIx64 "</span> ",
			html_colour((int)a), pg->ar[a].is_main ? "main_arena " : "", pg->ar[a].addr);
	if (mem)
		fprintf(pg->f, "<span><i style=\"background:#c9c9c9;outline:1px solid #777\">"
			"</i>mmapped chunks</span> <span><i style=\"border-top:2px solid #7b3294;"
			"height:0\"></i>process RSS</span> ");
	fprintf(pg->f, "<span><i class=\"dash\"></i>main heap extent (sbrk)</span> "
		"<span><i class=\"m threshold\"></i>threshold</span> "
		"<span><i class=\"m mallopt\"></i>mallopt</span> "
		"<span><i class=\"m setting\"></i>tunable/setting</span> "
		"<span><i class=\"m retry\"></i>retry</span> "
		"<span><i class=\"m tcache\"></i>tcache</span></p>\n");
}

static const char css[] =
"body{font:14px sans-serif;margin:16px;color:#222;max-width:1040px}"
"h1{font-size:18px}h2{font-size:15px;margin:18px 0 4px}"
"svg{display:block;overflow:visible}"
".tick{font:10px monospace;fill:#555}.grid{stroke:#e4e4e4}"
".sbrk{fill:none;stroke:#000;stroke-dasharray:4 3;stroke-width:1.2}"
".mark{stroke-width:1.5}.threshold{stroke:#c00;background:#c00}"
".mallopt{stroke:#06c;background:#06c}.setting{stroke:#990;background:#990}"
".retry{stroke:#f0f;background:#f0f}.tcache{stroke:#080;background:#080}"
".how{stroke:#000;stroke-width:1}.how.new{fill:#fff}.how.reuse{fill:#000}"
".how.freelist{fill:#888}.wait{fill:#c44}"
"#cursor{stroke:#000;stroke-width:.5}"
"#tip{position:fixed;background:#fff;border:1px solid #999;padding:4px 6px;"
"font:11px monospace;white-space:pre;pointer-events:none;display:none}"
".legend span{margin-right:10px;white-space:nowrap}"
".legend i{display:inline-block;width:12px;height:10px;margin-right:3px}"
".legend i.dash{border-top:2px dashed #000;height:0}.legend i.m{width:3px}"
".arenas{fill:none;stroke:#000;stroke-width:1.5}.arena-new{stroke:#000;stroke-width:1}"
".heap-new{fill:#1a7f37}.heap-free{fill:#c44}"
".legend i.line{border-top:2px solid #000;height:0}"
".legend i.dot{border-radius:50%;border:1px solid #000;width:8px;height:8px}"
"pre{font:12px monospace;background:#f6f6f6;padding:8px;overflow:auto}";

/* The hover read-out: nearest sample to the pointer, exact bytes; js_mem
 * (the mmapped chunks and the RSS) only in pages that have them, between
 * js and js_end. */
static const char js[] =
"(function(){var d=JSON.parse(document.getElementById('mw-data').textContent);"
"var svg=document.getElementById('area'),tip=document.getElementById('tip'),"
"cur=document.getElementById('cursor');if(!d.t.length)return;"
"svg.addEventListener('mousemove',function(e){var r=svg.getBoundingClientRect();"
"var x=(e.clientX-r.left)*svg.viewBox.baseVal.width/r.width;"
"var t=(x-d.x0)/d.plot*d.span,b=0;for(var i=1;i<d.t.length;i++)"
"if(Math.abs(d.t[i]-t)<Math.abs(d.t[b]-t))b=i;"
"var s=d.t[b].toFixed(3)+' s\\n';d.series.forEach(function(a){"
"s+=a.name+': '+a.v[b]+' bytes\\n';});s+='sbrk extent: '+d.sbrk[b]+' bytes';";
static const char js_mem[] =
"s+='\\nmmapped chunks: '+d.mmap[b]+' bytes\\nRSS: '+d.rss[b]+' bytes';";
static const char js_end[] =
"var cx=d.x0+d.t[b]/d.span*d.plot;cur.setAttribute('x1',cx);cur.setAttribute('x2',cx);"
"cur.style.display='inline';tip.textContent=s;tip.style.display='block';tip.style.left=(e.clientX+12)+'px';"
"tip.style.top=(e.clientY+12)+'px';});"
"svg.addEventListener('mouseleave',function(){tip.style.display='none';"
"cur.style.display='none';});})();";

/* The last reading in words, under the chart: what malloc holds (the
 * arenas and the mmapped chunks) and what the process holds (RSS). */
static void last_reading(const struct page *pg, const struct mw_view_reading *s,
			 const struct mw_view_reading_arena *sa)
{
	uint64_t arenas = 0;
	char a[16], m[16], t[16], r[16];

	for (size_t i = 0; i < s->n; i++)
		arenas += sa[s->first + i].system;
	fprintf(pg->f, "<p class=\"reading\">At %.3f s (the last reading): arenas %s + mmapped "
		"chunks %s (%" PRIu64 " chunk%s) = <b>%s</b> from malloc; the process's RSS <b>%s</b>"
		"</p>\n", html_secs(pg, s->ns), mw_human_bytes(arenas, a, sizeof(a)),
		mw_human_bytes(s->mmapped, m, sizeof(m)), s->n_mmaps, s->n_mmaps == 1 ? "" : "s",
		mw_human_bytes(arenas + s->mmapped, t, sizeof(t)),
		s->rss ? mw_human_bytes(s->rss, r, sizeof(r)) : "unknown");
}

/* The bytes chart under its heading and legend, and the last reading
 * when the samples have the mmapped chunks and the RSS; returns whether
 * they do. */
static int bytes_section(struct page *pg, json_t *data)
{
	size_t ns = pg->tl->nr;
	const struct mw_view_reading *s = pg->tl->r;
	const struct mw_view_reading_arena *sa = pg->tl->arenas;
	int mem = have_mem(s, ns);

	if (!ns) {	/* -f and other runs of several processes */
		html_events_section(pg, data);
		return 0;
	}
	if (mem)
		fprintf(pg->f, "<h2>Bytes from the system: per arena (malloc_state.system_mem) "
			"and in mmapped chunks (mp_.mmapped_mem), stacked, beside the process's "
			"RSS; read every interval and at the exit, each step ending at its "
			"reading</h2>\n");
	else	/* a stream saved before the samples had them */
		fprintf(pg->f, "<h2>System bytes per arena (malloc_state.system_mem), read every "
			"interval and at the exit; each step ends at its reading</h2>\n");
	legend(pg, mem);
	area_chart(pg, data);
	if (mem)
		last_reading(pg, &s[ns - 1], sa);
	return mem;
}

/* What ran, escaped: the command line, or the attached process. */
static void what(FILE *f, const struct mw_run_info *ri)
{
	for (size_t i = 0; ri->argv && ri->argv[i]; i++) {
		mw_xml_escape(f, ri->argv[i]);
		fputc(ri->argv[i + 1] ? ' ' : '\n', f);
	}
	if (!ri->argv)
		fprintf(f, "process %d", ri->pid);
}

/* The script's text with its element ids given suffix sfx ('mw-data',
 * 'area', 'cursor' become 'mw-data-N', ...; unchanged for ""). */
static void script_ids(FILE *f, const char *text, const char *sfx)
{
	static const char *const ids[] = { "'mw-data'", "'area'", "'cursor'" };

	while (*text) {
		size_t i;

		for (i = 0; i < 3; i++)
			if (strncmp(text, ids[i], strlen(ids[i])) == 0)
				break;
		if (i == 3) {
			fputc(*text++, f);
			continue;
		}
		/* the id without its closing quote, then sfx and the quote */
		fwrite(ids[i], 1, strlen(ids[i]) - 1, f);
		fprintf(f, "%s'", sfx);
		text += strlen(ids[i]);
	}
}

/* The hover script of a section: the samples' (with the mmapped chunks
 * and the RSS when mem), or, without samples, the events chart's. */
static void hover_script(FILE *f, size_t ns, int mem, const char *sfx)
{
	if (!ns) {
		script_ids(f, html_js_events, sfx);
		return;
	}
	script_ids(f, js, sfx);
	script_ids(f, mem ? js_mem : "", sfx);
	script_ids(f, js_end, sfx);
}

/* One process's part of a page: its title line, bytes chart, lanes,
 * waits, summary and findings, then its data and hover script.  0, or
 * -1 when its data could not be made (ENOMEM). */
/* The section's first lines: the process, its time, counts and libc,
 * and what of it is unknown. */
static void intro(const struct page *pg, const struct mw_run_info *ri, const struct mw_view *v,
		  size_t ns)
{
	FILE *f = pg->f;
	size_t nt = (size_t)mw_view_get(v, MW_VF_threads)->v;
	const char *why = mw_view_get(v, MW_VF_attach_unknown)->s;
	int mixed = mw_view_get(v, MW_VF_images_refused)->v != 0;

	fprintf(f, "<p>pid %d, ", ri->pid);
	if (pg->timed)
		fprintf(f, "%.3f s, ", html_secs(pg, pg->t1));
	else	/* t1 is only the axis's 1 s */
		fprintf(f, "no timed event, ");
	fprintf(f, "%s runtime, ", ri->runtime ? ri->runtime : "?");
	if (mixed)	/* they mix its images */
		fprintf(f, "? arenas, ");
	else if (why)	/* those there before tracing: unknown */
		fprintf(f, "? arenas (%" PRId64 " seen while traced), ",
			mw_view_get(v, MW_VF_arenas)->v);
	else
		fprintf(f, "%" PRId64 " arena%s, ", mw_view_get(v, MW_VF_arenas)->v,
			mw_view_get(v, MW_VF_arenas)->v == 1 ? "" : "s");
	if (mixed)
		fprintf(f, "? threads, ");
	else
		fprintf(f, "%zu thread%s, ", nt, nt == 1 ? "" : "s");
	fprintf(f, "%zu sample%s of the allocator; libc ", ns, ns == 1 ? "" : "s");
	mw_xml_escape(f, ri->libc);
	fprintf(f, "</p>\n");
	if (why) {
		fprintf(f, "<p class=\"unknown\"><strong>The allocator at attach is UNKNOWN</strong> (");
		mw_xml_escape(f, why);
		fprintf(f, "): the arenas, heaps and heap bytes at the end and the thresholds are "
			"not known; the charts show what changed while traced.</p>\n");
	}
}

/* The figures from the tracer refused (view.def's images_refused). */
static void refused_html(FILE *f, const struct mw_view *v)
{
	fprintf(f, "<p class=\"unknown\"><strong>Its figures from the tracer are REFUSED"
		"</strong>: ");
	mw_xml_escape(f, mw_view_get(v, MW_VF_images_refused)->s);
	fprintf(f, ". Its arenas, heaps, sbrk, threads, thresholds and events would not be its "
		"program's alone: unknown, no chart of them. The snapshot at exit, of its last "
		"program, is below.</p>\n");
}

#define CELL(i, c) ((uint64_t)mw_view_cell(v, (i), MW_VC_##c)->v)

/* The page's rows from v's tables: its arenas (with their threads
 * attached, from its timeline), threads and heaps. */
static void page_rows(struct page *pg, const struct mw_view *v)
{
	struct page_arena *ar;
	struct page_thread *t;
	struct page_heap *h;

	pg->nar = (size_t)mw_view_get(v, MW_VF_arenas)->v;
	pg->nt = (size_t)mw_view_get(v, MW_VF_threads)->v;
	pg->nh = (size_t)mw_view_get(v, MW_VF_heaps)->v;
	pg->ar = ar = xcalloc(pg->nar + 1, sizeof(*ar));
	pg->t = t = xcalloc(pg->nt + 1, sizeof(*t));
	pg->h = h = xcalloc(pg->nh + 1, sizeof(*h));
	for (size_t i = 0; i < pg->nar; i++)
		ar[i] = (struct page_arena){ .addr = CELL(i, arenas_address),
			.is_main = (int)CELL(i, arenas_main), .at_attach = (int)CELL(i, arenas_at_attach),
			.created_by_tid = (int)CELL(i, arenas_created_by_tid),
			.create_size = CELL(i, arenas_create_size), .waits = CELL(i, arenas_waits),
			.att = pg->tl->att[i], .natt = (size_t)CELL(i, arenas_threads) };
	for (size_t i = 0; i < pg->nt; i++)
		t[i] = (struct page_thread){ .tid = (int)CELL(i, threads_tid),
			.arena = CELL(i, threads_arena), .waits = CELL(i, threads_waits),
			.hits = CELL(i, threads_hits), .first_ns = CELL(i, threads_first_ns),
			.last_ns = CELL(i, threads_last_ns), .gone_ns = CELL(i, threads_gone_ns) };
	for (size_t i = 0; i < pg->nh; i++)
		h[i] = (struct page_heap){ .addr = CELL(i, heaps_address),
			.arena = CELL(i, heaps_arena), .freed = (int)CELL(i, heaps_freed),
			.new_ns = CELL(i, heaps_new_ns), .free_ns = CELL(i, heaps_free_ns) };
}

#undef CELL

static int section(FILE *f, const struct mw_view *v, const char *sfx)
{
	const struct mw_run_info *ri = mw_view_run_info(v);
	struct page pg = { .f = f, .sfx = sfx, .tl = mw_view_timeline(v), .v = v,
			   .pid = (int)mw_view_get(v, MW_VF_pid)->v };
	struct mw_stack_tips *tips = ri->stacks ? mw_stack_tips_new(ri->stacks, ri->stacks_pid) : NULL;
	/* only what the stream holds: a replay writes the same page */
	struct mw_run_info sri = { .argv = ri->argv, .pid = ri->pid, .libc = ri->libc,
		.runtime = ri->runtime, .have_status = ri->have_status,
		.exit_status = ri->exit_status, .term_signal = ri->term_signal,
		.tracer_died = ri->tracer_died, .stopped = ri->stopped,
		.findings_text = mw_view_findings_text(v), .stacks = ri->stacks,
		.stacks_pid = ri->stacks_pid };
	/* what tracing cost, without the time traced (not in the stream) */
	struct mw_report_cost cost = *mw_view_cost(v);
	json_t *data = json_object();
	char *dump, *text = NULL;
	size_t textlen = 0, ns = pg.tl->nr;
	FILE *tf;
	int mem;

	page_rows(&pg, v);
	pg.tips = tips;
	time_axis(&pg);
	intro(&pg, ri, v, ns);
	if (mw_view_get(v, MW_VF_images_refused)->v) {	/* no chart of mixed figures */
		refused_html(f, v);
		mem = 0;
	} else {
		mem = bytes_section(&pg, data);
		fprintf(f, "<h2>Threads: the arena each was attached to (o new, &#9679; reuse, "
			"grey: from the free list)</h2>\n");
		html_lanes(&pg);
		fprintf(f, "<h2>Arena lock waits per interval (memory_arena_reuse_wait)</h2>\n");
		html_waits_strip(&pg);
	}
	if (ri->stacks)
		mw_flame_html(f, ri->stacks, ri->stacks_pid, W);
	/* the summary, as the text report (stream-side facts only) */
	if ((tf = open_memstream(&text, &textlen))) {
		cost.traced_ns = 0;
		mw_report_cost_decide(&cost);
		mw_report_text_as(tf, v, &sri, &cost);
		fclose(tf);
	}
	fprintf(f, "<h2>Summary</h2>\n<pre class=\"summary\">");
	mw_xml_escape(f, text);
	free(text);
	fprintf(f, "</pre>\n");
	mw_findings_html(f, sri.findings_text);
	dump = json_dumps(data, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(9));
	fprintf(f, "%s<script type=\"application/json\" id=\"mw-data%s\">%s</script>\n<script>",
		*sfx ? "" : "<div id=\"tip\"></div>\n", sfx, dump ? dump : "{}");
	hover_script(f, ns, mem, sfx);
	fprintf(f, "</script>\n");
	json_decref(data);
	mw_stack_tips_free(tips);
	free((void *)pg.ar);
	free((void *)pg.t);
	free((void *)pg.h);
	if (!dump) {	/* the page's data could not be made: the page is not whole */
		errno = ENOMEM;
		return -1;
	}
	free(dump);
	return 0;
}

/* The page's head up to its first heading's text (the caller's). */
static void head(FILE *f, const struct mw_run_info *ri, const char *title)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n<title>mallocwatch: ");
	if (title)
		mw_xml_escape(f, title);
	else if (ri)
		what(f, ri);
	fprintf(f, "</title><style>%s%s</style></head><body>\n<h1>mallocwatch: ", css,
		title ? "[id^=cursor]{stroke:#000;stroke-width:.5}" : "");
	if (title)
		mw_xml_escape(f, title);
	else if (ri)
		what(f, ri);
	fprintf(f, "</h1>\n");
}

int mw_report_html(FILE *f, const struct mw_view *v)
{
	int ret;

	head(f, mw_view_run_info(v), NULL);
	ret = section(f, v, "");
	fprintf(f, "</body></html>\n");
	return ret < 0 || ferror(f) ? -1 : 0;
}

int mw_report_html_procs(FILE *f, const struct mw_view *const *v, size_t n,
			 const char *title, const char *intro)
{
	int ret = 0;

	head(f, NULL, title);
	if (intro) {
		fprintf(f, "<pre class=\"summary\">");
		mw_xml_escape(f, intro);
		fprintf(f, "</pre>\n");
	}
	fprintf(f, "<div id=\"tip\"></div>\n");
	for (size_t i = 0; i < n; i++) {
		const struct mw_run_info *ri = mw_view_run_info(v[i]);
		char sfx[24];

		snprintf(sfx, sizeof(sfx), "-%zu", i);
		fprintf(f, "<h1 id=\"process-%d\">", ri->pid);
		what(f, ri);
		if (ri->title) {	/* the title it gave itself, quoted (msg.h) */
			char q[512];

			fputs(" &mdash; ", f);
			mw_xml_escape(f, mw_quote(ri->title, q, sizeof(q)));
		}
		fprintf(f, "</h1>\n");
		if (section(f, v[i], sfx) < 0)
			ret = -1;
	}
	fprintf(f, "</body></html>\n");
	return ret < 0 || ferror(f) ? -1 : 0;
}
