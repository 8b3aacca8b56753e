/* gen.c - write the SystemTap script for one run; see gen.h.
 *
 * A generated handler, bpf runtime, for a two-site probe:
 *
 *	probe process("/x/libc.so.6").mark("memory_mallopt_arena_max") {
 *		pg = mw_pidtgid()
 *		pi = pg >> 32
 *		ti = (pg << 32) >> 32
 *		if (pi != mw_tgt) next
 *		ip = mw_ip()
 *		if ((ip & 4095) == 2995) {
 *			bias = ip - 580531
 *			a1 = mw_r_rax()
 *			a2 = mw_rd8(mw_r_rip_bias + ...)
 *		} else if ((ip & 4095) == 1332) { ... } else next
 *		mw_bias = bias
 *		mw_n[23, ti]++
 *		printf("E 23 %d %d %d\n", ti, a1, a2)
 *	}
 *
 * The kernel runtime's handlers call pid() and tid() instead: there they
 * are plain C; under stapbpf each is a helper call, and tid() is called
 * again each time a map key holding it is built (a ++ builds it twice).
 * The arguments' reads and the dispatch between sites are gen_args.c's.
 */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "msg.h"
#include "probetab.h"
#include "protocol.h"
#include "sdtarg.h"
#include "stacks.h"
#include "stpsrc.h"
#include "uprobe_multi.h"
#include "gen_int.h"

/* the lock waits' map stays preallocated under umulti-shim.so (gen.h) */
_Static_assert(MW_MAP_WAITS <= MW_UMULTI_PREALLOC_MAX,
	       "MW_MAP_WAITS above umulti-shim.so's preallocation bound");
/* the setjmp family's packed key word keeps the probe's id in its top
 * byte, positive (gen_int.h, MW_JW_*) */
_Static_assert(MW_P_COUNT < 128, "probe ids no longer fit mw_j's key word");

#define MAX_PROBES 128
#define MAX_SITES 16


/* Bytes a traced path may hold.  Everything else is refused, not escaped:
 * '"' and '\\' end or bend the string literal, '*', '?' and '[' are
 * globs in stap's process("...") paths, control bytes break lines. */
static int path_byte_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("/._-+@,=:~ ", c);
}

/* Everything the script takes from outside - the libc and libm paths
 * (with -p, whatever the target process maps) and the probe names in
 * their notes - is checked before it goes in; nothing is escaped.
 * A path must be absolute, under 1024 bytes, of letters, digits, space
 * and "/._-+@,=:~".  Returns 1, or 0 with the reason in why. */
static int mw_gen_path_ok(const char *path, char *why, size_t len)
{
	char q[256];

	if (path[0] != '/') {
		snprintf(why, len, "'%s' is not an absolute path", mw_quote(path, q, sizeof(q)));
		return 0;
	}
	for (const char *p = path; *p; p++) {
		if (!path_byte_ok((unsigned char)*p)) {
			snprintf(why, len, "refusing to trace '%s': byte 0x%02x at offset %zu is not "
				 "allowed in a path that goes into a SystemTap script",
				 mw_quote(path, q, sizeof(q)), (unsigned char)*p, (size_t)(p - path));
			return 0;
		}
	}
	if (strlen(path) >= 1024) {
		snprintf(why, len, "refusing to trace a path of %zu bytes", strlen(path));
		return 0;
	}
	return 1;
}

/* A probe name must be a C identifier under 128 bytes (as <sys/sdt.h>
 * makes them).  1 or 0.  A site with another name is warned about and
 * not traced. */
static int mw_gen_name_ok(const char *name)
{
	size_t n = 0;

	if (!(isalpha((unsigned char)name[0]) || name[0] == '_'))
		return 0;
	for (; name[n]; n++)
		if (!isalnum((unsigned char)name[n]) && name[n] != '_')
			return 0;
	return n < 128;
}

/* Known probes: the table's count.  Unknown ones: the first site's. */
static int probe_nargs(const struct group *gr)
{
	struct mw_sdt_arg args[MW_MAX_ARGS];
	char err[256];
	int n;

	if (gr->info)
		return gr->info->nargs;
	n = mw_sdt_args_parse(gr->site[0]->args, args, MW_MAX_ARGS, err, sizeof(err));
	return n < 0 ? 0 : n;
}

/* Add elf's traced sites to the groups, by probe name. */
static int collect_from(struct gen *g, const struct mw_elf *elf, const char *path,
			int *next_dyn, char *err, size_t errlen)
{
	for (size_t i = 0; i < mw_elf_nsites(elf); i++) {
		const struct mw_sdt_site *s = mw_elf_site(elf, i);
		struct group *gr = NULL;

		if (!mw_probe_traced(s->provider, s->name, g->o->families))
			continue;
		if (!mw_gen_name_ok(s->name)) {	/* it would go into the script */
			char q[200];

			mw_warn("SDT note '%s' in '%s' is not a probe name; not traced",
				mw_quote(s->name, q, sizeof(q)), mw_elf_path(elf));
			continue;
		}
		for (int j = 0; j < g->ng; j++)
			if (g->g[j].elf == elf && strcmp(g->g[j].name, s->name) == 0)
				gr = &g->g[j];
		if (!gr) {
			if (g->ng == MAX_PROBES) {
				snprintf(err, errlen, "more than %d probes", MAX_PROBES);
				return -1;
			}
			gr = &g->g[g->ng++];
			memset(gr, 0, sizeof(*gr));
			gr->elf = elf;
			gr->path = path;
			gr->name = s->name;
			gr->id = mw_probe_lookup(s->name);
			if (gr->id == MW_P_UNKNOWN) {
				gr->id = (*next_dyn)++;
				g->st->unknown++;
			} else {
				gr->info = mw_probe_info(gr->id);
				g->modes |= 1u << gr->info->mode;
			}
		}
		if (gr->nsites == MAX_SITES) {
			mw_warn("probe %s has more than %d sites; extra sites not traced",
				s->name, MAX_SITES);
			continue;
		}
		gr->site[gr->nsites++] = s;
		g->st->sites++;
		g->st->math_sites += gr->info && gr->info->family == MW_FAM_MATH;
	}
	return 0;
}

/* Group the traced sites of libc and libm by probe name. */
static int collect(struct gen *g, char *err, size_t errlen)
{
	int next_dyn = MW_P_COUNT;

	if (collect_from(g, g->elf, g->o->libc_path, &next_dyn, err, errlen) < 0)
		return -1;
	if (g->o->libm &&
	    collect_from(g, g->o->libm, g->o->libm_path, &next_dyn, err, errlen) < 0)
		return -1;
	if (!g->ng) {
		snprintf(err, errlen, "no SDT probes to trace in '%s'%s", mw_elf_path(g->elf),
			 g->o->families ? " for the selected events" : "");
		return -1;
	}
	for (int i = 0; i < g->ng; i++)
		g->g[i].nargs = probe_nargs(&g->g[i]);
	return 0;
}

/* MW_MODE_HEAP: memory_heap_more/less counted per heap, with its size,
 * peak and arena, in mw_h (printed as G records at the end). */
static void heap_body(struct gen *g, const struct group *gr)
{
	FILE *f = g->out;
	int more = gr->id == MW_P_memory_heap_more;

	/* the arena is read at a heap's first grow or shrink only (after
	 * one, the value holds a size, never 0) */
	fprintf(f, "\tv = mw_h[%sa1]\n\tif (v == 0 && mw_harena[%sa1] == 0) "
		"mw_harena[%sa1] = mw_rd8(a1)\n", g->pk, g->pk, g->pk);
	/* c: the two counts, the hit's counted, a full one carried */
	fprintf(f, "\tc = v - ((v >> %d) << %d)\n", 2 * HEAP_CBITS, 2 * HEAP_CBITS);
	if (more)
		fprintf(f, "\tif ((c & %d) == %d) { mw_hmhi[%sa1] += %d; c -= %d } else c += 1\n",
			HEAP_CMASK, HEAP_CMASK, g->pk, HEAP_CMASK + 1, HEAP_CMASK);
	else
		fprintf(f, "\tif ((c >> %d) == %d) { mw_hlhi[%sa1] += %d; c -= %d }"
			" else c += %d\n", HEAP_CBITS, HEAP_CMASK, g->pk, HEAP_CMASK + 1,
			HEAP_CMASK << HEAP_CBITS, HEAP_CMASK + 1);
	/* k: the peak, which can only rise when the heap grows */
	fprintf(f, "\tp = a2 >> %d\n\tk = v >> %d\n", HEAP_PAGE_SHIFT,
		2 * HEAP_CBITS + HEAP_PBITS);
	if (more)
		fprintf(f, "\tif (p > k) k = p\n");
	fprintf(f, "\tmw_h[%sa1] = (((k << %d) + p) << %d) + c\n", g->pk, HEAP_PBITS,
		2 * HEAP_CBITS);
}

/* MW_MODE_SBRK: memory_sbrk_more/less summed for main_arena in mw_s*
 * (printed as the S record at the end). */
static void sbrk_body(struct gen *g, const struct group *gr)
{
	const char *k = g->sk;

	if (g->multi)	/* the processes that have an S record */
		fprintf(g->out, "\tmw_sany[%s] = 1\n", g->pe);
	if (gr->id == MW_P_memory_sbrk_more)
		/* glibc's MORECORE_FAILURE is 0: __glibc_morecore returns
		 * NULL when sbrk fails (malloc/morecore.c) */
		/* the net growth is grown less trimmed, not a map of
		 * its own: one update less a hit (a hash map's, keyed by
		 * process, in a run of several) */
		fprintf(g->out, "\tif (a1 == 0 || a1 == -1) { mw_sfail%s++; next }\n"
			"\tmw_sgrown%s += a2; mw_snmore%s++\n"
			"\tnet = mw_sgrown%s - mw_strim%s\n"
			"\tif (net > mw_speak%s) mw_speak%s = net\n"
			"\tif (mw_sfirst%s == 0) mw_sfirst%s = a1\n\tmw_slast%s = a1 + a2\n",
			k, k, k, k, k, k, k, k, k, k);
	else
		fprintf(g->out, "\tif (a1 == 0 || a1 == -1) { mw_slfail%s++; next }\n"
			"\tmw_strim%s += a2; mw_snless%s++\n"
			"\tmw_slast%s = a1\n", k, k, k, k);
}

/* MW_MODE_MATH: only the first MW_MATH_SAMPLES hits (of the process and
 * its image: protocol.h, mw_msamp) go on, their pointer arguments read
 * through to the doubles and ints they point to. */
static void math_body(struct gen *g, const struct group *gr)
{
	FILE *f = g->out;

	fprintf(f, "\tif (mw_msamp[%s%d] >= %d) next\n\tmw_msamp[%s%d]++\n", g->pk, gr->id,
		MW_MATH_SAMPLES, g->pk, gr->id);
	for (int i = 0; i < gr->nargs; i++) {
		enum mw_unit u = mw_probe_arg_unit(gr->info, i);

		if (u == MW_UNIT_DPTR)
			fprintf(f, "\ta%d = mw_rd8(a%d)\n", i + 1, i + 1);
		else if (u == MW_UNIT_IPTR)
			fprintf(f, "\ta%d = mw_sext(mw_rd4(a%d), 32)\n", i + 1, i + 1);
	}
}

/* A probe that is streamed: libc's load bias noted, a freed heap's final
 * account (H, or G when heaps are aggregated) and its aggregates
 * deleted, then the event itself as a T record. */
static void stream_body(struct gen *g, const struct group *gr, int heap_agg)
{
	FILE *f = g->out;
	/* T: the event with its time, CLOCK_MONOTONIC ns (both
	 * runtimes' ktime_get_ns()) */
	const char *const a[] = { g->te, "ns", "a1", "a2", "a3", "a4", "a5", "a6",
				  "a7", "a8", "a9", "a10", "a11", "a12" };
	char tag[32];

	if (gr->elf == g->elf)	/* mw_bias is libc's: main_arena's address */
		fprintf(f, "\tif (bias) mw_bias%s = bias\n", g->sk);
	if (gr->id == MW_P_memory_heap_free) {	/* the freed heap's final account */
		/* the aggregates of heap a1, of the hit's process (g->pk) */
		char peak[64], nmore[128], nless[128];
		const char *const agg[] = { "a1", "ar", "a2", peak, nmore, nless };
		static const char *const none[] = { "a1", "ar", "a2", "a2", "0", "0" };

		snprintf(peak, sizeof(peak), HEAP_PEAK("mw_h[%sa1]"), g->pk);
		snprintf(nmore, sizeof(nmore), HEAP_NMORE("mw_h[%sa1]", "mw_hmhi[%sa1]"),
			 g->pk, g->pk);
		snprintf(nless, sizeof(nless), HEAP_NLESS("mw_h[%sa1]", "mw_hlhi[%sa1]"),
			 g->pk, g->pk);
		fprintf(f, "\tar = mw_rd8(a1)\n");
		/* G: the counts are also the hits of heap_more/less */
		mw_gen_emit_print(g, "\t", heap_agg ? "G" : "H", 0, 6, heap_agg ? agg : none);
	}
	/* the aggregates exist only when memory_heap_more/less do */
	if (heap_agg && (gr->id == MW_P_memory_heap_new || gr->id == MW_P_memory_heap_free))
		fprintf(f, "\tdelete mw_h[%sa1]; delete mw_hmhi[%sa1]\n"
			"\tdelete mw_hlhi[%sa1]; delete mw_harena[%sa1]\n", g->pk, g->pk,
			g->pk, g->pk);
	snprintf(tag, sizeof(tag), "T %d", gr->id);
	/* once: the bpf runtime prints it in two halves */
	fprintf(f, "\tns = ktime_get_ns()\n");
	mw_gen_emit_print(g, "\t", tag, 1, 2 + gr->nargs, a);
}

/* What a probe does with a1..aN, by mode (probes.def). */
static void mode_body(struct gen *g, const struct group *gr)
{
	FILE *f = g->out;
	enum mw_mode mode = gr->info ? gr->info->mode : MW_MODE_STREAM;
	int heap_agg = !!(g->modes & (1u << MW_MODE_HEAP));

	/* hot handlers do as few hash-map operations (50-70 ns each under
	 * stapbpf) as they can: the setjmp family and the lock waits count
	 * hits in their own map (K and A records); heap_more/less and
	 * sbrk_more/less are counted per heap (G) and for main_arena (S),
	 * not per thread */
	if (mode == MW_MODE_STREAM || mode == MW_MODE_MATH)
		fprintf(f, "\tmw_n[%d, %s%s]++\n", gr->id, g->pk, g->te);
	switch (mode) {
	case MW_MODE_HEAP:
		heap_body(g, gr);
		return;
	case MW_MODE_WAIT:
		fprintf(f, "\tmw_wait[%s%s, a2]++\n", g->pk, g->te);
		return;
	case MW_MODE_SBRK:
		sbrk_body(g, gr);
		return;
	case MW_MODE_SETJMP:	/* per thread, jmp_buf, value, return address */
		/* the probe, the thread and the value in one word (MW_JW_*,
		 * gen_int.h): a 24-byte key, not 40 (a shorter hash and
		 * compare each hit); the word last, or stap's registers defeat
		 * the in-place count (shim/inplace.c; t-umulti checks it) */
		fprintf(f, "\tjw = (%d << %d) | (%s << %d) | mw_zext(a2, %d)\n"
			"\tmw_j[%sa1, a3, jw]++\n", gr->id, MW_JW_ID_SHIFT, g->te, MW_JW_TID_SHIFT,
			MW_JW_TID_SHIFT, g->pk);
		return;
	case MW_MODE_MATH:	/* the first samples, arguments read through */
		math_body(g, gr);
		break;
	case MW_MODE_STREAM:
		break;
	}
	stream_body(g, gr, heap_agg);
}

/* --stacks, kernel runtime: the hit's user stack from the script, a Q
 * record (MW_REC_USTACK): ubacktrace() is a string of hex addresses,
 * innermost first, unwound in the kernel with the unwind data the
 * module was built with (stap --ldd -d PROGRAM).  Never run here: this
 * machine's kernel loads no modules; only translated (stap -p3). */
static void ustack_body(struct gen *g, const struct group *gr)
{
	fprintf(g->out, "\tprintf(\"%c %d %%d %%d %%d %%d %%d %%d %%s\\n\", pid(), tid(), "
		"ktime_get_ns(), %s, %s, %s, ubacktrace())\n", MW_REC_USTACK, gr->id,
		gr->nargs > 0 ? "a1" : "0", gr->nargs > 1 ? "a2" : "0",
		gr->nargs > 2 ? "a3" : "0");
}

/* The process and thread the script's code names: pe and te (pid() and
 * tid(), or the bpf handlers' locals), and the keys built from the
 * process in a run of several. */
static void use_ids(struct gen *g, const char *pe, const char *te)
{
	g->pe = pe;
	g->te = te;
	g->pk[0] = g->sk[0] = '\0';
	if (g->multi) {
		snprintf(g->pk, sizeof(g->pk), "%s, ", pe);
		snprintf(g->sk, sizeof(g->sk), "[%s]", pe);
	}
}

static void handler(struct gen *g, struct group *gr)
{
	fprintf(g->out, "\nprobe process(\"%s\").mark(\"%s\") {\n", gr->path, gr->name);
	if (g->o->runtime == MW_RT_BPF)
		fprintf(g->out, "\tpg = mw_pidtgid()\n\tpi = pg >> 32\n\tti = (pg << 32) >> 32\n");
	if (g->multi)
		fprintf(g->out, "\tif (!mw_tgt || !(%s in mw_pids)) next\n", g->pe);
	else
		fprintf(g->out, "\tif (%s != mw_tgt) next\n", g->pe);
	fprintf(g->out, "\tip = mw_ip()\n");
	mw_gen_dispatch(g, gr);
	/* (before the mode's body: the sbrk account ends a failed hit with
	 * next) */
	if (g->o->stacks && g->o->runtime == MW_RT_KERNEL && !g->multi && gr->elf == g->elf &&
	    mw_stacks_probe_stacked(gr->id))
		ustack_body(g, gr);
	mode_body(g, gr);
	fprintf(g->out, "}\n");
	g->st->probes++;
}

/* opts->sites_out's lines (gen.h): every site of each group's name in
 * its file; all of them or none (a site in no loaded segment, memory):
 * the file only lets the sites be armed early, and an empty one is
 * armed as without it. */
static void write_sites(struct gen *g, FILE *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return;
	for (int i = 0; i < g->ng; i++) {
		const struct group *gr = &g->g[i];

		for (size_t j = 0; j < mw_elf_nsites(gr->elf); j++) {
			const struct mw_sdt_site *s = mw_elf_site(gr->elf, j);
			uint64_t off;

			if (strcmp(s->name, gr->name) != 0)
				continue;
			if (mw_elf_file_offset(gr->elf, s->pc, &off) < 0) {
				fclose(m);
				free(buf);
				return;
			}
			fprintf(m, "%#" PRIx64 " %s\n", off, gr->path);
		}
	}
	if (fclose(m) == 0)
		fwrite(buf, 1, len, out);
	free(buf);
}

static void globals_and_begin(struct gen *g)
{
	FILE *f = g->out;
	int untargeted = mw_gen_untargeted(g->o);

	fprintf(f, "\nglobal mw_n[%d], mw_bias, mw_tgt, mw_flushed\n", MW_MAP_HITS);
	if (g->modes & (1u << MW_MODE_HEAP))
		fprintf(f, "global mw_h[%d], mw_hmhi[%d]\n"
			"global mw_hlhi[%d], mw_harena[%d]\n", MW_MAP_HEAPS,
			MW_MAP_HEAPS, MW_MAP_HEAPS, MW_MAP_HEAPS);
	if (g->modes & (1u << MW_MODE_WAIT))
		fprintf(f, "global mw_wait[%d]\n", MW_MAP_WAITS);
	if (g->modes & (1u << MW_MODE_SBRK))
		fprintf(f, "global mw_sgrown, mw_strim, mw_snmore, mw_snless\n"
			"global mw_speak, mw_sfirst, mw_slast, mw_sfail, mw_slfail\n");
	if (g->modes & (1u << MW_MODE_SETJMP))
		fprintf(f, "global mw_j[%d]\n", MW_MAP_JUMPS);
	if (g->modes & (1u << MW_MODE_MATH))
		fprintf(f, "global mw_msamp[%d]\n", g->multi ? MW_MAP_HITS : MW_MSAMP_ONE);
	if (g->multi && g->o->linger)
		mw_gen_drain_globals(f, g->modes);
	if ((!g->multi && g->o->runtime == MW_RT_BPF) || (g->multi && g->o->dynamic))
		mw_gen_exec_globals(f, g->modes, g->multi);	/* the exec probe's */
	if (g->multi)
		fprintf(f, "global mw_pids[%zu]%s\n",
			g->o->dynamic || untargeted ? MW_MAP_PIDS : g->o->npids,
			g->modes & (1u << MW_MODE_SBRK) ? ", mw_sany" : "");
	/* untargeted (no -x): mw_tgt only says the handlers are on, and the
	 * set starts empty: every process joins it through MW_PIDS_FILE
	 * (tracer.c), so that the script, and its module, are the same
	 * whatever the pids */
	fprintf(f, "\nprobe begin {\n\tmw_tgt = %s\n", untargeted ? "1" : "target()");
	if (g->o->dynamic && !g->o->npids && !untargeted)
		fprintf(f, "\tmw_pids[mw_tgt] = 1\n");
	for (size_t i = 0; g->multi && !untargeted && i < g->o->npids; i++)
		fprintf(f, "\tmw_pids[%d] = 1\n", g->o->pids[i]);
	for (int i = 0; i < g->ng; i++) {
		fprintf(f, "\tprintf(\"P %d %s %d", g->g[i].id, g->g[i].name, g->g[i].nargs);
		if (g->g[i].unavail)	/* protocol: optional mask of unreadable args */
			fprintf(f, " %u", g->g[i].unavail);
		fprintf(f, "\\n\")\n");
	}
	fprintf(f, "\tprintf(\"MW 1 ready\\n\")\n}\n");
}

int mw_gen_script(const struct mw_elf *libc, const struct mw_gen_opts *opts,
		  FILE *out, struct mw_gen_stats *stats, char *err, size_t errlen)
{
	struct gen *g = calloc(1, sizeof(*g));
	char *body = NULL;
	size_t body_len = 0;
	int ret = -1;

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(stats, 0, sizeof(*stats));
	if (opts->runtime == MW_RT_BPF && mw_elf_machine(libc) != EM_X86_64) {
		snprintf(err, errlen, "'%s' is %s: the bpf runtime's argument reading is "
			 "implemented for x86_64 only; use --runtime=kernel",
			 mw_elf_path(libc), mw_arch_name(mw_arch_of_machine(mw_elf_machine(libc))));
		free(g);
		return -1;
	}
	g->elf = libc;
	g->o = opts;
	g->multi = opts->npids >= 2 || opts->dynamic;
	use_ids(g, "pid()", "tid()");
	g->out = out;
	g->st = stats;
	if (!mw_gen_path_ok(opts->libc_path, err, errlen) ||
	    (opts->libm && !mw_gen_path_ok(opts->libm_path, err, errlen)))
		goto cleanup;
	if (collect(g, err, errlen) < 0)
		goto cleanup;
	fprintf(out, "// generated by mallocwatch for %s (%s runtime)\n\n%s\n%s\n",
		opts->libc_path, mw_runtime_name(opts->runtime), mw_stp_common,
		opts->runtime == MW_RT_BPF ? mw_stp_bpf : mw_stp_kernel);
	/* handlers first, into memory: they find which arguments cannot be
	 * read, which the begin probe's P records declare */
	g->out = open_memstream(&body, &body_len);
	if (!g->out) {
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	if (opts->sites_out)
		write_sites(g, opts->sites_out);
	if (opts->runtime == MW_RT_BPF)	/* the handlers' pid and tid */
		use_ids(g, "pi", "ti");
	for (int i = 0; i < g->ng; i++)
		handler(g, &g->g[i]);
	use_ids(g, "pid()", "tid()");
	fclose(g->out);
	g->out = out;
	globals_and_begin(g);
	fwrite(body, 1, body_len, out);
	mw_gen_end_probes(g);
	if (g->unresolved[0])
		mw_warn("cannot resolve %s in '%s' (stripped, and no debuginfo found: install "
			"it, e.g. libc6-dbg or glibc-debuginfo, or set MW_DEBUGINFO_PATH); %d "
			"arguments will be reported unavailable", g->unresolved,
			mw_elf_path(libc), stats->unavailable);
	if (fflush(out) != 0 || ferror(out)) {
		snprintf(err, errlen, "cannot write the script");
		goto cleanup;
	}
	ret = 0;
cleanup:
	free(body);
	free(g);
	return ret;
}
