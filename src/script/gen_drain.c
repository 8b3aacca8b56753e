/* gen_drain.c - the drain probe's emptying of a lingering session's
 * aggregate maps (gen.h, opts->linger), so that the next run served by
 * the same tracer starts from nothing; and the exec probe's emptying of
 * one process's, so that its next program image starts from nothing
 * (protocol.h, MW_EXEC_FILE).
 *
 * stap refuses a delete inside a foreach over the same map ("variable
 * modified during 'foreach' iteration") and stapbpf has no delete of a
 * whole map, so each map's keys are first copied into the key maps
 * mw_k1..mw_kN, indexed by a counter, MW_DRAIN_CHUNK at a time, and then
 * deleted one by one, until a round finds fewer.  The keys are read back
 * into locals first: stapbpf deletes nothing when a delete's key is itself
 * a map lookup.  For the hits map this gives:
 *
 *	n = 1024
 *	r = 0
 *	while (n == 1024 && r < 66) {
 *		n = 0
 *		foreach ([k1, k2, k3] in mw_n limit 1024) { mw_k1[n] = k1; ...; n = n + 1 }
 *		for (j = 0; j < n; j++) { k1 = mw_k1[j]; ...; delete mw_n[k1, k2, k3] }
 *		r = r + 1
 *	}
 */
#include <stdio.h>

#include "gen.h"
#include "probetab.h"
#include "protocol.h"

/* The aggregate maps of a script of several processes (gen.c's globals):
 * name, keys, the mode whose probes fill them (-1: every script), which
 * of the keys is the process (from 1; 0: none); one: its keys in a
 * script of one process, for the exec probe (0: a scalar there, set to
 * 0; -1: not emptied, mw_sany is not there). */
static const struct {
	const char *name;
	int keys;
	int mode;
	int pkey;
	int one;
} maps[] = {
	{ "mw_n", 3, -1, 2, 2 },
	{ "mw_bias", 1, -1, 1, 0 },
	{ "mw_h", 2, MW_MODE_HEAP, 1, 1 },
	{ "mw_hmhi", 2, MW_MODE_HEAP, 1, 1 },
	{ "mw_hlhi", 2, MW_MODE_HEAP, 1, 1 },
	{ "mw_harena", 2, MW_MODE_HEAP, 1, 1 },
	{ "mw_wait", 3, MW_MODE_WAIT, 1, 2 },
	{ "mw_sgrown", 1, MW_MODE_SBRK, 1, 0 },
	{ "mw_strim", 1, MW_MODE_SBRK, 1, 0 },
	{ "mw_snmore", 1, MW_MODE_SBRK, 1, 0 },
	{ "mw_snless", 1, MW_MODE_SBRK, 1, 0 },
	{ "mw_speak", 1, MW_MODE_SBRK, 1, 0 },
	{ "mw_sfirst", 1, MW_MODE_SBRK, 1, 0 },
	{ "mw_slast", 1, MW_MODE_SBRK, 1, 0 },
	{ "mw_sfail", 1, MW_MODE_SBRK, 1, 0 },
	{ "mw_slfail", 1, MW_MODE_SBRK, 1, 0 },
	{ "mw_sany", 1, MW_MODE_SBRK, 1, -1 },
	{ "mw_j", 4, MW_MODE_SETJMP, 1, 3 },	/* gen_int.h, MW_JW_* */
	{ "mw_msamp", 2, MW_MODE_MATH, 1, 1 },	/* protocol.h: per process and image */
};

static int present(int mode, unsigned modes)
{
	return mode < 0 || (modes & (1u << mode));
}

/* global PREFIX1[MW_DRAIN_CHUNK], ...: room for the keys of the maps
 * of modes with the most keys (one: in a script of one process) */
static void key_maps(FILE *out, unsigned modes, int one, const char *prefix)
{
	int most = 1;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (present(maps[i].mode, modes) && (one ? maps[i].one : maps[i].keys) > most)
			most = one ? maps[i].one : maps[i].keys;
	fprintf(out, "global ");
	for (int k = 1; k <= most; k++)
		fprintf(out, "%s%s%d[%d]", k > 1 ? ", " : "", prefix, k, MW_DRAIN_CHUNK);
	fprintf(out, "\n");
}

/* "k1, k2, ..." of n keys */
static void keys(FILE *out, int n)
{
	for (int k = 1; k <= n; k++)
		fprintf(out, "%sk%d", k > 1 ? ", " : "", k);
}

/* Empty map, of n keys, through the key maps PREFIX1..PREFIXn:
 * MW_DRAIN_CHUNK keys at a time, until a round finds fewer (stapbpf
 * runs no do-while: it loops for ever; a bound on the rounds, the
 * largest map's and one more, keeps a broken map from doing so).  With
 * pkey (from 1), only the entries whose process (that key) is marked in
 * mw_pids: every entry is looked at each round, a chunk's worth kept. */
static void empty_map(FILE *out, const char *map, int n, const char *prefix, int pkey)
{
	fprintf(out, "\tn = %d\n\tr = 0\n\twhile (n == %d && r < %d) {\n\t\tn = 0\n"
		"\t\tforeach (%s", MW_DRAIN_CHUNK, MW_DRAIN_CHUNK, MW_MAP_HITS / MW_DRAIN_CHUNK + 2,
		n > 1 ? "[" : "");
	keys(out, n);
	if (pkey)
		fprintf(out, "%s in %s) if (n < %d && mw_pids[k%d] == %d) {", n > 1 ? "]" : "",
			map, MW_DRAIN_CHUNK, pkey, MW_PIDS_MARKED);
	else
		fprintf(out, "%s in %s limit %d) {", n > 1 ? "]" : "", map, MW_DRAIN_CHUNK);
	for (int k = 1; k <= n; k++)
		fprintf(out, " %s%d[n] = k%d;", prefix, k, k);
	fprintf(out, " n = n + 1 }\n\t\tfor (j = 0; j < n; j++) {");
	for (int k = 1; k <= n; k++)
		fprintf(out, " k%d = %s%d[j];", k, prefix, k);
	fprintf(out, " delete %s[", map);
	keys(out, n);
	fprintf(out, "] }\n\t\tr = r + 1\n\t}\n");
}

void mw_gen_drain_globals(FILE *out, unsigned modes)
{
	key_maps(out, modes, 0, "mw_k");
}

void mw_gen_drain_clear(FILE *out, unsigned modes)
{
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (present(maps[i].mode, modes))
			empty_map(out, maps[i].name, maps[i].keys, "mw_k", 0);
}

void mw_gen_exec_globals(FILE *out, unsigned modes, int multi)
{
	key_maps(out, modes, !multi, "mw_x");
}

void mw_gen_exec_clear_marked(FILE *out, unsigned modes)
{
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (present(maps[i].mode, modes) && maps[i].pkey)
			empty_map(out, maps[i].name, maps[i].keys, "mw_x", maps[i].pkey);
}

void mw_gen_exec_clear(FILE *out, unsigned modes, int bpf)
{
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		int n = maps[i].one;

		if (!present(maps[i].mode, modes) || n < 0)
			continue;
		if (n == 0)
			fprintf(out, "\t%s = 0\n", maps[i].name);
		else if (!bpf)	/* the kernel runtime deletes a whole map */
			fprintf(out, "\tdelete %s\n", maps[i].name);
		else
			empty_map(out, maps[i].name, n, "mw_x", 0);
	}
}
