/* probetab.c - probes.def expanded into a static table. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "probetab.h"

static const struct mw_probe_info table[MW_P_COUNT] = {
#define MW_PROBE(pname, fam, pmode, n, a1, u1, a2, u2, a3, u3, pdoc)	\
	[MW_P_##pname] = {						\
		.name = #pname,						\
		.family = MW_FAM_##fam,					\
		.mode = MW_MODE_##pmode,				\
		.nargs = n,						\
		.arg_name = { #a1, #a2, #a3 },				\
		.arg_unit = { MW_UNIT_##u1, MW_UNIT_##u2, MW_UNIT_##u3 }, \
		.doc = pdoc,						\
		.provider = MW_FAM_##fam == MW_FAM_MATH ? "libm" : "libc", \
	},
#include "probes.def"
#undef MW_PROBE
};

static const char *const family_names[] = {
	[MW_FAM_ARENA] = "arena",	[MW_FAM_HEAP] = "heap",
	[MW_FAM_SBRK] = "sbrk",		[MW_FAM_THRESHOLD] = "threshold",
	[MW_FAM_MALLOPT] = "mallopt",	[MW_FAM_TUNABLE] = "tunable",
	[MW_FAM_RETRY] = "retry",	[MW_FAM_TCACHE] = "tcache",
	[MW_FAM_SETJMP] = "setjmp",	[MW_FAM_MATH] = "math",
	[MW_FAM_UNKNOWN] = "unknown",
};

const struct mw_probe_info *mw_probe_info(int id)
{
	if (id < 0 || id >= MW_P_COUNT)
		return NULL;
	return &table[id];
}

int mw_probe_lookup(const char *name)
{
	for (int i = 0; i < MW_P_COUNT; i++)
		if (strcmp(table[i].name, name) == 0)
			return i;
	return MW_P_UNKNOWN;
}

const char *mw_family_name(enum mw_family fam)
{
	if ((unsigned)fam > MW_FAM_UNKNOWN)
		return "unknown";
	return family_names[fam];
}

/* The family called name, or -1. */
static int mw_family_lookup(const char *name)
{
	for (int f = 0; f <= MW_FAM_UNKNOWN; f++)
		if (strcmp(family_names[f], name) == 0)
			return f;
	return -1;
}

/* The families that make up "memory": every memory_* probe. */
#define MEMORY_FAMILIES							\
	((1u << MW_FAM_ARENA) | (1u << MW_FAM_HEAP) | (1u << MW_FAM_SBRK) |	\
	 (1u << MW_FAM_THRESHOLD) | (1u << MW_FAM_MALLOPT) |		\
	 (1u << MW_FAM_TUNABLE) | (1u << MW_FAM_RETRY) |		\
	 (1u << MW_FAM_TCACHE) | (1u << MW_FAM_UNKNOWN))

int mw_events_parse(const char *list, unsigned *families, char *err, size_t errlen)
{
	char buf[512], *save = NULL, *w;

	snprintf(buf, sizeof(buf), "%s", list);
	*families = buf[0] == '!' ? MW_FAMILIES_ALL : 0;
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int neg = w[0] == '!', f;
		unsigned bits;
		const char *name = w + neg;

		if (strcmp(name, "all") == 0)
			bits = MW_FAMILIES_ALL;
		else if (strcmp(name, "memory") == 0)
			bits = MEMORY_FAMILIES;
		else if ((f = mw_family_lookup(name)) >= 0)
			bits = 1u << f;
		else {
			snprintf(err, errlen, "unknown event family '%s' (arena, heap, sbrk, "
				 "threshold, mallopt, tunable, retry, tcache, setjmp, math, "
				 "unknown, memory, all)", name);
			return -1;
		}
		if (neg)
			*families &= ~bits;
		else
			*families |= bits;
	}
	return 0;
}

static const struct mw_setting_info settings[] = {
	{ MW_P_memory_mallopt_mxfast, "M_MXFAST", 1, "glibc.malloc.mxfast" },
	{ MW_P_memory_mallopt_trim_threshold, "M_TRIM_THRESHOLD", -1,
	  "glibc.malloc.trim_threshold" },
	{ MW_P_memory_mallopt_top_pad, "M_TOP_PAD", -2, "glibc.malloc.top_pad" },
	{ MW_P_memory_mallopt_mmap_threshold, "M_MMAP_THRESHOLD", -3,
	  "glibc.malloc.mmap_threshold" },
	{ MW_P_memory_mallopt_mmap_max, "M_MMAP_MAX", -4, "glibc.malloc.mmap_max" },
	{ MW_P_memory_mallopt_check_action, "M_CHECK_ACTION", -5, "glibc.malloc.check" },
	{ MW_P_memory_mallopt_perturb, "M_PERTURB", -6, "glibc.malloc.perturb" },
	{ MW_P_memory_mallopt_arena_test, "M_ARENA_TEST", -7, "glibc.malloc.arena_test" },
	{ MW_P_memory_mallopt_arena_max, "M_ARENA_MAX", -8, "glibc.malloc.arena_max" },
	{ MW_P_memory_tunable_tcache_max_bytes, NULL, 0, "glibc.malloc.tcache_max" },
	{ MW_P_memory_tunable_tcache_count, NULL, 0, "glibc.malloc.tcache_count" },
	{ MW_P_memory_tunable_tcache_unsorted_limit, NULL, 0,
	  "glibc.malloc.tcache_unsorted_limit" },
};

const struct mw_setting_info *mw_setting_by_probe(int probe)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (settings[i].probe == probe)
			return &settings[i];
	return NULL;
}

const char *mw_mallopt_param_name(int param)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (settings[i].param_name && settings[i].param == param)
			return settings[i].param_name;
	return NULL;
}

enum mw_unit mw_probe_arg_unit(const struct mw_probe_info *info, int i)
{
	if (!info || i < 0 || i >= info->nargs)
		return MW_UNIT_NONE;
	return info->arg_unit[i < 3 ? i : 2];
}

int mw_probe_traced(const char *provider, const char *name, unsigned families)
{
	const struct mw_probe_info *info = mw_probe_info(mw_probe_lookup(name));
	int fam;

	if (info && strcmp(provider, info->provider) != 0)
		return 0;
	if (!info && strcmp(provider, "libc") != 0)
		return 0;
	if (info)
		fam = info->family;
	else if (strncmp(name, "memory_", 7) == 0)
		fam = MW_FAM_UNKNOWN;
	else
		return 0;
	return !families || (families & (1u << fam));
}
