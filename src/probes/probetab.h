/* probetab.h - the table of known glibc probes (probes.def) as C data.
 *
 * Every stage that needs to know what a probe means reads it from here:
 * the generator (which mode of reporting), the stream parser (how many
 * arguments), the state model and the reports (names and units).
 */
#ifndef MALLOCWATCH_PROBETAB_H
#define MALLOCWATCH_PROBETAB_H

#include <stddef.h>

enum mw_family {
	MW_FAM_ARENA, MW_FAM_HEAP, MW_FAM_SBRK, MW_FAM_THRESHOLD,
	MW_FAM_MALLOPT, MW_FAM_TUNABLE, MW_FAM_RETRY, MW_FAM_TCACHE,
	MW_FAM_SETJMP, MW_FAM_MATH, MW_FAM_UNKNOWN,
};

/* How the generated script reports a probe; see probes.def. */
enum mw_mode {
	MW_MODE_STREAM, MW_MODE_HEAP, MW_MODE_WAIT, MW_MODE_SBRK, MW_MODE_SETJMP,
	MW_MODE_MATH,
};

enum mw_unit {
	MW_UNIT_NONE, MW_UNIT_ADDR, MW_UNIT_BYTES, MW_UNIT_COUNT,
	MW_UNIT_VALUE, MW_UNIT_FLAG, MW_UNIT_PARAM,
	MW_UNIT_DPTR,	/* pointer to a double: the script reads its 8 bytes */
	MW_UNIT_IPTR,	/* pointer to an int: the script reads it */
};

/* Probe identifiers, MW_P_<name>, in table order. */
enum mw_probe_id {
#define MW_PROBE(name, fam, mode, n, a1, u1, a2, u2, a3, u3, doc) MW_P_##name,
#include "probes.def"
#undef MW_PROBE
	MW_P_COUNT,
	MW_P_UNKNOWN = MW_P_COUNT,	/* a memory_* probe not in the table */
};

#define MW_MAX_ARGS 12	/* SDT allows up to 12 arguments */

struct mw_probe_info {
	const char *name;		/* as glibc spells it */
	enum mw_family family;
	enum mw_mode mode;
	int nargs;			/* 0..4 for known probes */
	const char *arg_name[3];	/* "_" past nargs */
	enum mw_unit arg_unit[3];
	const char *doc;		/* one line, for docs and `probes` */
	const char *provider;		/* "libc" or "libm" */
};

/* The unit of argument i (0-based) of info: past the three the table
 * names, the unit of the third (slowatan2's 4th is a DPTR like its 3rd). */
enum mw_unit mw_probe_arg_unit(const struct mw_probe_info *info, int i);

/* The table entry of id (0 <= id < MW_P_COUNT); NULL otherwise. */
const struct mw_probe_info *mw_probe_info(int id);

/* The id of the probe called name, or MW_P_UNKNOWN. */
int mw_probe_lookup(const char *name);

/* The one rule for "does mallocwatch trace this SDT site": every probe
 * of the table under the table's provider, and libc's memory_* probes
 * that are not in it (family MW_FAM_UNKNOWN); and its family is in
 * families (bit per enum mw_family; 0 = all).  1 or 0. */
int mw_probe_traced(const char *provider, const char *name, unsigned families);

/* Lower-case family name ("arena", "heap", ...), for reports. */
const char *mw_family_name(enum mw_family fam);

/* Parse an event selection, strace -e style: a comma-separated list of
 * family names, "memory" (every memory_* family) and "all", each
 * optionally prefixed with '!' to leave it out.  A list that
 * starts with '!' starts from "all".  Sets *families (bit per enum
 * mw_family, MW_FAM_UNKNOWN for memory_* probes not in the table);
 * returns 0, or -1 with the bad word in err. */
int mw_events_parse(const char *list, unsigned *families, char *err, size_t errlen);

/* A setting probe (do_set_* in malloc.c) and what it sets: the mallopt
 * parameter (malloc.h) and the tunable (glibc manual, "Memory Allocation
 * Tunables").  param_name is NULL for the tcache tunables, which have no
 * mallopt parameter. */
struct mw_setting_info {
	int probe;			/* MW_P_* */
	const char *param_name;		/* "M_ARENA_MAX" */
	int param;			/* -8 */
	const char *tunable;		/* "glibc.malloc.arena_max" */
};

/* The setting probe id's entry, or NULL. */
const struct mw_setting_info *mw_setting_by_probe(int probe);

/* The mallopt parameter number's name ("M_ARENA_MAX"), or NULL. */
const char *mw_mallopt_param_name(int param);

#define MW_FAMILIES_ALL ((1u << (MW_FAM_UNKNOWN + 1)) - 1)

#endif /* MALLOCWATCH_PROBETAB_H */
