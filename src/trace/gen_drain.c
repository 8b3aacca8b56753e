/* gen_drain.c - the drain probe's emptying of a lingering session's
 * aggregate maps (gen.h, opts->linger), so that the next run served by
 * the same tracer starts from nothing.
 *
 * stap refuses a delete inside a foreach over the same map ("variable
 * modified during 'foreach' iteration") and stapbpf has no delete of a
 * whole map, so each map's keys are first copied into the key maps
 * mw_k1..mw_kN, indexed by a counter, and then deleted one by one.  The
 * keys are read back into locals first: stapbpf deletes nothing when a
 * delete's key is itself a map lookup.  For the hits map this gives:
 *
 *	n = 0
 *	foreach ([k1, k2, k3] in mw_n) { mw_k1[n] = k1; mw_k2[n] = k2; mw_k3[n] = k3; n = n + 1 }
 *	for (j = 0; j < n; j++) { k1 = mw_k1[j]; k2 = mw_k2[j]; k3 = mw_k3[j]; delete mw_n[k1, k2, k3] }
 */
#include <stdio.h>

#include "gen.h"
#include "probetab.h"

/* The aggregate maps of a script of several processes (gen.c's globals):
 * name, keys, and the mode whose probes fill them (-1: every script). */
static const struct {
	const char *name;
	int keys;
	int mode;
} maps[] = {
	{ "mw_n", 3, -1 },
	{ "mw_bias", 1, -1 },
	{ "mw_h", 2, MW_MODE_HEAP },
	{ "mw_hmhi", 2, MW_MODE_HEAP },
	{ "mw_hlhi", 2, MW_MODE_HEAP },
	{ "mw_harena", 2, MW_MODE_HEAP },
	{ "mw_wait", 3, MW_MODE_WAIT },
	{ "mw_sgrown", 1, MW_MODE_SBRK },
	{ "mw_strim", 1, MW_MODE_SBRK },
	{ "mw_snmore", 1, MW_MODE_SBRK },
	{ "mw_snless", 1, MW_MODE_SBRK },
	{ "mw_speak", 1, MW_MODE_SBRK },
	{ "mw_sfirst", 1, MW_MODE_SBRK },
	{ "mw_slast", 1, MW_MODE_SBRK },
	{ "mw_sfail", 1, MW_MODE_SBRK },
	{ "mw_slfail", 1, MW_MODE_SBRK },
	{ "mw_sany", 1, MW_MODE_SBRK },
	{ "mw_j", 6, MW_MODE_SETJMP },
	{ "mw_msamp", 1, MW_MODE_MATH },
};

static int present(int mode, unsigned modes)
{
	return mode < 0 || (modes & (1u << mode));
}

void mw_gen_drain_globals(FILE *out, unsigned modes)
{
	int most = 1;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (present(maps[i].mode, modes) && maps[i].keys > most)
			most = maps[i].keys;
	fprintf(out, "global ");
	for (int k = 1; k <= most; k++)
		fprintf(out, "%smw_k%d[%d]", k > 1 ? ", " : "", k, MW_MAP_HITS);
	fprintf(out, "\n");
}

/* "k1, k2, ..." of n keys */
static void keys(FILE *out, int n)
{
	for (int k = 1; k <= n; k++)
		fprintf(out, "%sk%d", k > 1 ? ", " : "", k);
}

void mw_gen_drain_clear(FILE *out, unsigned modes)
{
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		int n = maps[i].keys;

		if (!present(maps[i].mode, modes))
			continue;
		fprintf(out, "\tn = 0\n\tforeach (%s", n > 1 ? "[" : "");
		keys(out, n);
		fprintf(out, "%s in %s) {", n > 1 ? "]" : "", maps[i].name);
		for (int k = 1; k <= n; k++)
			fprintf(out, " mw_k%d[n] = k%d;", k, k);
		fprintf(out, " n = n + 1 }\n\tfor (j = 0; j < n; j++) {");
		for (int k = 1; k <= n; k++)
			fprintf(out, " k%d = mw_k%d[j];", k, k);
		fprintf(out, " delete %s[", maps[i].name);
		keys(out, n);
		fprintf(out, "] }\n");
	}
}
