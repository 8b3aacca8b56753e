/* gen_end.c - the records' printers and the end of a generated script
 * (gen_int.h): the aggregates printed once, by whichever of the flush and the end probe
 * runs first, and the procfs probes that read a running tracer (the
 * pid set, serve's live reading, --linger's drain, the sample's lock
 * waits).  The protocol's words are in protocol.h.
 */
#include <stdio.h>

#include "gen_int.h"
#include "protocol.h"

/* See gen.h.  Here, not in gen.c: gen.c calls this file's printers and
 * end probes, and this file calls nothing of gen.c's back. */
int mw_gen_untargeted(const struct mw_gen_opts *opts)
{
	return opts->runtime == MW_RT_KERNEL && (opts->npids >= 2 || opts->dynamic);
}

/* printf("TAG v1 v2 ...\n") of stap expressions.  stapbpf prints %d as
 * 32 bits, so under the bpf runtime each value past the first nplain
 * (ids and thread ids, which always fit) goes out as two halves, "HI:LO"
 * (docs/protocol.md); the kernel runtime prints plain %d.  The low half is
 * v - ((v >> 32) << 32): no helper call (each inlined call costs BPF
 * stack, 512 bytes in all) and no 64-bit immediate. */
static void mw_gen_emit_print_of(struct gen *g, const char *indent, const char *who,
			  const char *tag, int nplain, int n, const char *const *v)
{
	int bpf = g->o->runtime == MW_RT_BPF;

	fprintf(g->out, "%sprintf(\"%s%s", indent, who ? "@%d " : "", tag);
	for (int i = 0; i < n; i++)
		fprintf(g->out, bpf && i >= nplain ? " %%d:%%d" : " %%d");
	fprintf(g->out, "\\n\"");
	if (who)
		fprintf(g->out, ", %s", who);
	for (int i = 0; i < n; i++) {
		if (bpf && i >= nplain)
			fprintf(g->out, ", (%s) >> 32, (%s) - (((%s) >> 32) << 32)",
				v[i], v[i], v[i]);
		else
			fprintf(g->out, ", %s", v[i]);
	}
	fprintf(g->out, ")\n");
}

/* A record of the process the handler runs in: in a run of several
 * processes prefixed "@PID " (protocol.h, MW_REC_PROCESS). */
void mw_gen_emit_print(struct gen *g, const char *indent, const char *tag,
		       int nplain, int n, const char *const *v)
{
	mw_gen_emit_print_of(g, indent, g->multi ? g->pe : NULL, tag, nplain, n, v);
}

/* "\tforeach (KEYS in MAP)\n" of a record per entry, and while writing
 * the exec probe (g->marked) a test that the entry's process (p) is one
 * marked in mw_pids; the indent of the record's printf. */
static const char *each(struct gen *g, const char *keys, const char *map)
{
	fprintf(g->out, "\tforeach (%s in %s)\n", keys, map);
	if (!g->marked)
		return "\t\t";
	fprintf(g->out, "\t\tif (mw_pids[p] == %d)\n", MW_PIDS_MARKED);
	return "\t\t\t";
}

/* The per-process aggregates of a run of several processes that later
 * hits add to - live heaps (G), lock waits (A), sbrk (S) - each record
 * prefixed with its process, from maps keyed by process first: the end's
 * dump and the live probe's. */
static void dump_counted(struct gen *g)
{
	static const char *const h[] = { "h", "mw_harena[p, h]", HEAP_SIZE("mw_h[p, h]"),
					 HEAP_PEAK("mw_h[p, h]"),
					 HEAP_NMORE("mw_h[p, h]", "mw_hmhi[p, h]"),
					 HEAP_NLESS("mw_h[p, h]", "mw_hlhi[p, h]") };
	static const char *const w[] = { "t", "a", "mw_wait[p, t, a]" };
	static const char *const s[] = { "mw_sgrown[p]", "mw_strim[p]", "mw_snmore[p]",
					 "mw_snless[p]", "mw_speak[p]", "mw_sfirst[p]",
					 "mw_slast[p]", "mw_sfail[p]", "mw_slfail[p]" };
	char waits_tag[32];

	if (g->modes & (1u << MW_MODE_HEAP))
		mw_gen_emit_print_of(g, each(g, "[p, h]", "mw_h"), "p", "G", 0, 6, h);
	if (g->modes & (1u << MW_MODE_WAIT)) {
		snprintf(waits_tag, sizeof(waits_tag), "A %d", MW_P_memory_arena_reuse_wait);
		mw_gen_emit_print_of(g, each(g, "[p, t, a]", "mw_wait"), "p", waits_tag, 1, 3, w);
	}
	if (g->modes & (1u << MW_MODE_SBRK))
		mw_gen_emit_print_of(g, each(g, "p", "mw_sany"), "p", "S", 0, 9, s);
}

/* Kernel runtime: the hits stap's runtime skipped, before MW_LINE_END
 * (protocol.h, MW_LINE_SKIPPED; kernel.stp's mw_skipped). */
static void skipped(struct gen *g)
{
	if (g->o->runtime == MW_RT_KERNEL)
		fprintf(g->out, "\tprintf(\"%s %%d\\n\", mw_skipped())\n", MW_LINE_SKIPPED);
}

/* The records of a run of several processes, each prefixed with its
 * process, from maps keyed by process first. */
static void dump_multi_records(struct gen *g)
{
	static const char *const n[] = { "i", "t", "mw_n[i, p, t]" };
	static const char *const jt[] = { MW_JW_ID("jw"), MW_JW_TID("jw"), "k",
					  MW_JW_VALUE("jw"), "r", "mw_j[p, k, r, jw]" };
	static const char *const b[] = { "mw_bias[p]" };

	mw_gen_emit_print_of(g, each(g, "[i, p, t]", "mw_n"), "p", "N", 2, 3, n);
	dump_counted(g);
	if (g->modes & (1u << MW_MODE_SETJMP))
		mw_gen_emit_print_of(g, each(g, "[p, k, r, jw]", "mw_j"), "p", "K", 2, 6, jt);
	mw_gen_emit_print_of(g, each(g, "p", "mw_bias"), "p", "B", 0, 1, b);
}

/* dump() for a run of several processes. */
static void dump_multi(struct gen *g)
{
	FILE *f = g->out;

	dump_multi_records(g);
	if (g->o->linger && g->draining)	/* the next run starts from nothing */
		mw_gen_drain_clear(f, g->modes);
	skipped(g);
	fprintf(f, "\tprintf(\"%s\\n\")\n", MW_LINE_END);
}

/* The aggregates of a script of one process, as records. */
static void dump_one(struct gen *g)
{
	static const char *const n[] = { "i", "t", "mw_n[i, t]" };
	static const char *const h[] = { "h", "mw_harena[h]", HEAP_SIZE("mw_h[h]"),
					 HEAP_PEAK("mw_h[h]"), HEAP_NMORE("mw_h[h]", "mw_hmhi[h]"),
					 HEAP_NLESS("mw_h[h]", "mw_hlhi[h]") };
	static const char *const w[] = { "t", "a", "mw_wait[t, a]" };
	char waits_tag[32];
	static const char *const s[] = { "mw_sgrown", "mw_strim", "mw_snmore", "mw_snless",
					 "mw_speak", "mw_sfirst", "mw_slast", "mw_sfail",
					 "mw_slfail" };
	static const char *const b[] = { "mw_bias" };
	FILE *f = g->out;

	fprintf(f, "\tforeach ([i, t] in mw_n)\n");
	mw_gen_emit_print(g, "\t\t", "N", 2, 3, n);
	if (g->modes & (1u << MW_MODE_HEAP)) {
		fprintf(f, "\tforeach (h in mw_h)\n");
		mw_gen_emit_print(g, "\t\t", "G", 0, 6, h);
	}
	if (g->modes & (1u << MW_MODE_WAIT)) {
		snprintf(waits_tag, sizeof(waits_tag), "A %d", MW_P_memory_arena_reuse_wait);
		fprintf(f, "\tforeach ([t, a] in mw_wait)\n");
		mw_gen_emit_print(g, "\t\t", waits_tag, 1, 3, w);
	}
	if (g->modes & (1u << MW_MODE_SBRK))
		mw_gen_emit_print(g, "\t", "S", 0, 9, s);
	if (g->modes & (1u << MW_MODE_SETJMP)) {
		static const char *const jt[] = { MW_JW_ID("jw"), MW_JW_TID("jw"), "k",
						  MW_JW_VALUE("jw"), "r", "mw_j[k, r, jw]" };

		fprintf(f, "\tforeach ([k, r, jw] in mw_j)\n");
		mw_gen_emit_print(g, "\t\t", "K", 2, 6, jt);
	}
	mw_gen_emit_print(g, "\t", "B", 0, 1, b);
}

/* The aggregates, then MW_LINE_END: printed once, by whichever of the
 * flush and the end probe runs first. */
static void dump(struct gen *g)
{
	if (g->multi) {
		dump_multi(g);
		return;
	}
	dump_one(g);
	skipped(g);
	fprintf(g->out, "\tprintf(\"%s\\n\")\n", MW_LINE_END);
}

/* The flush (procfs("flush").read, MW_FLUSH_FILE): the driver reads it
 * when the program has exited but the tracer still holds its uprobes, so
 * the report need not wait for their removal (stapbpf runs end probes
 * only after it has detached every uprobe, about 0.11 s each).  It also
 * turns every handler off (mw_tgt = 0): nothing is traced after it, even
 * a new process that got the old pid.  The end probe prints the
 * aggregates when no flush came first (-p, --duration, a tracer stopped
 * early). */
void mw_gen_end_probes(struct gen *g)
{
	FILE *f = g->out;

	fprintf(f, "\nprobe procfs(\"%s\").read {\n\tmw_tgt = 0\n"
		"\tif (mw_flushed) next\n\tmw_flushed = 1\n", MW_FLUSH_FILE);
	dump(g);
	fprintf(f, "\t$value = \"1\\n\"\n}\n");
	fprintf(f, "\nprobe end {\n\tif (mw_flushed) next\n\tmw_flushed = 1\n");
	dump(g);
	fprintf(f, "}\n");
	/* the kernel runtime learns the pids of a changing set here; the
	 * bpf runtime's script cannot parse a number (no strtol), its map
	 * is written from outside (pidset.h) */
	if (mw_gen_untargeted(g->o)) {
		fprintf(f, "\nprobe procfs(\"%s\").write {\n\tp = strtol($value, 10)\n"
			"\tif (p > %lld)\n\t\tmw_pids[p - %lld] = %d\n"
			"\telse if (p > 0)\n\t\tmw_pids[p] = 1\n\telse if (p < 0)\n"
			"\t\tdelete mw_pids[-p]\n}\n", MW_PIDS_FILE, MW_PIDS_MARK, MW_PIDS_MARK,
			MW_PIDS_MARKED);
		/* "1" once the session runs: a write before that is dropped
		 * (the module makes the file, then starts its task finder,
		 * then runs; handlers run only then), pidset.c waits for it */
		fprintf(f, "\nprobe procfs(\"%s\").read {\n\t$value = \"1\\n\"\n}\n",
			MW_PIDS_FILE);
	}
	/* -f: processes replaced their images (protocol.h, MW_EXEC_FILE):
	 * the records of those marked, their aggregates emptied, the marks
	 * taken off */
	if (g->multi && g->o->dynamic) {
		fprintf(f, "\nprobe procfs(\"%s\").read {\n\tif (mw_flushed) next\n", MW_EXEC_FILE);
		g->marked = 1;
		dump_multi_records(g);
		g->marked = 0;
		mw_gen_exec_clear_marked(f, g->modes);
		fprintf(f, "\tn = 0\n\tforeach (p in mw_pids)\n\t\tif (n < %d && mw_pids[p] == %d) "
			"{ mw_x1[n] = p; n = n + 1 }\n\tfor (j = 0; j < n; j++) { p = mw_x1[j]; "
			"mw_pids[p] = 1; printf(\"%c%%d %s\\n\", p) }\n\t$value = \"1\\n\"\n}\n",
			MW_DRAIN_CHUNK, MW_PIDS_MARKED, MW_REC_PROCESS, MW_LINE_EXEC);
	}
	/* serve: the aggregates so far, between two lines, without ending
	 * anything (protocol.h, MW_LIVE_FILE) */
	if (g->multi && g->o->live) {
		fprintf(f, "\nprobe procfs(\"%s\").read {\n\tif (mw_flushed) next\n"
			"\tprintf(\"%s\\n\")\n", MW_LIVE_FILE, MW_LINE_LIVE);
		dump_counted(g);
		fprintf(f, "\tprintf(\"%s\\n\")\n\t$value = \"1\\n\"\n}\n", MW_LINE_LIVE_END);
	}
	/* --linger: the aggregates so far, emptied, for the run that
	 * ended; the tracer goes on (protocol.h, MW_DRAIN_FILE) */
	if (g->multi && g->o->linger) {
		fprintf(f, "\nprobe procfs(\"%s\").read {\n\tif (mw_flushed) next\n",
			MW_DRAIN_FILE);
		g->draining = 1;
		dump(g);
		g->draining = 0;
		fprintf(f, "\t$value = \"1\\n\"\n}\n");
	}
	if (g->multi)	/* no samples of several processes (trace_multi.h) */
		return;
	/* the program replaced its image: the old image's aggregates, and
	 * the new one's start from nothing (protocol.h, MW_EXEC_FILE) */
	fprintf(f, "\nprobe procfs(\"%s\").read {\n\tif (mw_flushed) next\n", MW_EXEC_FILE);
	dump_one(g);
	mw_gen_exec_clear(f, g->modes, g->o->runtime == MW_RT_BPF);
	fprintf(f, "\tprintf(\"%s\\n\")\n\t$value = \"1\\n\"\n}\n", MW_LINE_EXEC);
	/* the lock waits so far, for mallocwatch's periodic samples: a sum
	 * over the (small) wait table in the reader, nothing in the hot
	 * handler */
	fprintf(f, "\nprobe procfs(\"%s\").read {\n\tmw_ws = 0\n", MW_SAMPLE_FILE);
	if (g->modes & (1u << MW_MODE_WAIT))
		fprintf(f, "\tforeach ([t, a] in mw_wait)\n\t\tmw_ws += mw_wait[t, a]\n");
	{
		static const char *const c[] = { "mw_ws" };

		mw_gen_emit_print(g, "\t", "C", 0, 1, c);
	}
	fprintf(f, "\t$value = \"1\\n\"\n}\n");
}
