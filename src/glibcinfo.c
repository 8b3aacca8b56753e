/* glibcinfo.c - glibc's allocator globals and structure layouts from
 * libdwfl and libdw; see glibcinfo.h. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glibcinfo.h"
#include "sdtnote.h"

#define DEBUG_PACKAGES "Debian: libc6-dbg, Fedora/RHEL: glibc-debuginfo"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int is_libc(const char *name)
{
	const char *b = base_name(name);

	return strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libc-", 5) == 0;
}

struct find {
	Dwfl_Module *libc;
};

/* The libc module. */
static int find_module(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start,
		       void *arg)
{
	struct find *f = arg;

	(void)ud;
	(void)start;
	if (name && is_libc(name) && !f->libc)
		f->libc = mod;
	return DWARF_CB_OK;
}

/* glibc's allocator globals: their runtime addresses into g (0 when
 * absent), in one pass over mod's symbol table (libc's has thousands). */
static void symbols(Dwfl_Module *mod, struct mw_glibc *g)
{
	const struct { const char *name; uint64_t *addr; } want[] = {
		{ "main_arena", &g->main_arena }, { "mp_", &g->mp }, { "narenas", &g->narenas },
		{ "free_list", &g->free_list }, { "__curbrk", &g->curbrk },
	};
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!nm || sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
			continue;
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			if (!*want[k].addr && strcmp(nm, want[k].name) == 0)
				*want[k].addr = addr;
	}
}

/* A structure type called name, defined (not declared) among die's
 * children, or one level down. */
static int find_struct(Dwarf_Die *parent, const char *name, Dwarf_Die *out)
{
	Dwarf_Die c;

	if (dwarf_child(parent, &c) != 0)
		return -1;
	do {
		const char *nm = dwarf_diename(&c);
		bool decl = false;
		Dwarf_Attribute a;

		if (dwarf_tag(&c) != DW_TAG_structure_type || !nm || strcmp(nm, name) != 0)
			continue;
		if (dwarf_attr(&c, DW_AT_declaration, &a))
			dwarf_formflag(&a, &decl);
		if (!decl) {
			*out = c;
			return 0;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return -1;
}

/* The compile unit of malloc.c first (arena.c is part of it), then all. */
static int find_struct_anywhere(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	for (int pass = 0; pass < 2; pass++) {
		Dwarf_Off off = 0, next;
		size_t hsize;

		while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu;
			const char *cn;

			if (dwarf_offdie(dw, off + hsize, &cu)) {
				cn = dwarf_diename(&cu);
				if ((pass == 1 || (cn && strstr(cn, "malloc/malloc.c"))) &&
				    find_struct(&cu, name, out) == 0)
					return 0;
			}
			off = next;
		}
	}
	return -1;
}

static int64_t type_size(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	Dwarf_Word size;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t) ||
	    dwarf_aggregate_size(&t, &size) != 0)
		return -1;
	return (int64_t)size;
}

/* The element size of die's array type. */
static int64_t element_size(Dwarf_Die *member)
{
	Dwarf_Attribute a;
	Dwarf_Die t, peeled;

	if (!dwarf_attr_integrate(member, DW_AT_type, &a) || !dwarf_formref_die(&a, &t) ||
	    dwarf_peel_type(&t, &peeled) != 0 || dwarf_tag(&peeled) != DW_TAG_array_type)
		return -1;
	return type_size(&peeled);
}

static struct mw_member member(Dwarf_Die *st, const char *name, int64_t *elem)
{
	struct mw_member m = { -1, -1 };
	Dwarf_Die c;

	if (dwarf_child(st, &c) != 0)
		return m;
	do {
		Dwarf_Attribute a;
		Dwarf_Word off;
		const char *nm = dwarf_diename(&c);

		if (dwarf_tag(&c) != DW_TAG_member || !nm || strcmp(nm, name) != 0)
			continue;
		if (!dwarf_attr(&c, DW_AT_data_member_location, &a) ||
		    dwarf_formudata(&a, &off) != 0)
			return m;
		m.off = (int64_t)off;
		m.size = type_size(&c);
		if (elem)
			*elem = element_size(&c);
		return m;
	} while (dwarf_siblingof(&c, &c) == 0);
	return m;
}

static int64_t struct_size(Dwarf_Die *st)
{
	Dwarf_Word size;

	return dwarf_aggregate_size(st, &size) == 0 ? (int64_t)size : -1;
}

/* The layouts, or -1 naming the first thing missing. */
static int layouts(Dwarf *dw, struct mw_glibc *g, char *what, size_t len)
{
	Dwarf_Die ms, ch, hi, mp;
	int64_t fast_elem = -1, bin_elem = -1;

	if (find_struct_anywhere(dw, "malloc_state", &ms) < 0) {
		snprintf(what, len, "struct malloc_state");
		return -1;
	}
	if (find_struct_anywhere(dw, "malloc_chunk", &ch) < 0 ||
	    find_struct_anywhere(dw, "_heap_info", &hi) < 0 ||
	    find_struct_anywhere(dw, "malloc_par", &mp) < 0) {
		snprintf(what, len, "struct malloc_chunk, _heap_info or malloc_par");
		return -1;
	}
	g->mstate_size = struct_size(&ms);
	g->ms_top = member(&ms, "top", NULL);
	g->ms_fastbins = member(&ms, "fastbinsY", &fast_elem);
	g->ms_bins = member(&ms, "bins", &bin_elem);
	g->ms_next = member(&ms, "next", NULL);
	g->ms_next_free = member(&ms, "next_free", NULL);
	g->ms_attached_threads = member(&ms, "attached_threads", NULL);
	g->ms_system_mem = member(&ms, "system_mem", NULL);
	g->ms_max_system_mem = member(&ms, "max_system_mem", NULL);
	g->chunk_struct_size = struct_size(&ch);
	g->ch_size = member(&ch, "mchunk_size", NULL);
	g->ch_fd = member(&ch, "fd", NULL);
	g->ch_bk = member(&ch, "bk", NULL);
	g->ch_fd_nextsize = member(&ch, "fd_nextsize", NULL);
	g->hi_ar_ptr = member(&hi, "ar_ptr", NULL);
	g->hi_prev = member(&hi, "prev", NULL);
	g->hi_size = member(&hi, "size", NULL);
	g->hi_mprotect_size = member(&hi, "mprotect_size", NULL);
	g->mp_trim_threshold = member(&mp, "trim_threshold", NULL);
	g->mp_top_pad = member(&mp, "top_pad", NULL);
	g->mp_mmap_threshold = member(&mp, "mmap_threshold", NULL);
	g->mp_arena_test = member(&mp, "arena_test", NULL);
	g->mp_arena_max = member(&mp, "arena_max", NULL);
	g->mp_hp_pagesize = member(&mp, "hp_pagesize", NULL);	/* 2.35+ */
	g->mp_n_mmaps = member(&mp, "n_mmaps", NULL);
	g->mp_n_mmaps_max = member(&mp, "n_mmaps_max", NULL);
	g->mp_max_n_mmaps = member(&mp, "max_n_mmaps", NULL);
	g->mp_no_dyn_threshold = member(&mp, "no_dyn_threshold", NULL);
	g->mp_mmapped_mem = member(&mp, "mmapped_mem", NULL);
	g->mp_max_mmapped_mem = member(&mp, "max_mmapped_mem", NULL);
	g->mp_sbrk_base = member(&mp, "sbrk_base", NULL);
	g->fastbin_slot = fast_elem;
	g->bin_slot = bin_elem;
	if (fast_elem > 0 && g->ms_fastbins.size > 0)
		g->nfastbins = (int)(g->ms_fastbins.size / fast_elem);
	if (bin_elem > 0 && g->ms_bins.size > 0)
		g->nbin_slots = (int)(g->ms_bins.size / bin_elem);
	/* what the walk cannot do without */
	{
		const struct { const struct mw_member *m; const char *name; } need[] = {
			{ &g->ms_top, "malloc_state.top" }, { &g->ms_fastbins, "malloc_state.fastbinsY" },
			{ &g->ms_bins, "malloc_state.bins" }, { &g->ms_next, "malloc_state.next" },
			{ &g->ms_system_mem, "malloc_state.system_mem" },
			{ &g->ch_size, "malloc_chunk.mchunk_size" }, { &g->ch_fd, "malloc_chunk.fd" },
			{ &g->hi_ar_ptr, "_heap_info.ar_ptr" }, { &g->hi_prev, "_heap_info.prev" },
			{ &g->hi_size, "_heap_info.size" }, { &g->mp_sbrk_base, "malloc_par.sbrk_base" },
		};

		for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
			if (need[i].m->off < 0) {
				snprintf(what, len, "%s", need[i].name);
				return -1;
			}
	}
	if (g->nfastbins <= 0 || g->nbin_slots <= 0 || g->chunk_struct_size <= 0) {
		snprintf(what, len, "the sizes of fastbinsY[], bins[] and struct malloc_chunk");
		return -1;
	}
	/* the walk reads pointers as 8-byte words (snapshot.c) */
	if (g->fastbin_slot != 8 || g->bin_slot != 8 || g->ch_fd.size != 8) {
		snprintf(what, len, "8-byte pointers (a 64-bit libc)");
		return -1;
	}
	return 0;
}

int mw_glibc_load(pid_t pid, struct mw_glibc *g, char *err, size_t errlen)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	struct find f = { 0 };
	Dwfl *dwfl;
	Dwarf *dw;
	Dwarf_Addr bias;
	const char *name = NULL, *mainfile = NULL, *debugfile = NULL;
	char what[128];
	int ret = -1, r;

	memset(g, 0, sizeof(*g));
	debuginfo_path = getenv("MW_DEBUGINFO_PATH");
	if (!(dwfl = dwfl_begin(&cb))) {
		snprintf(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
		return -1;
	}
	dwfl_report_begin(dwfl);
	r = dwfl_linux_proc_report(dwfl, pid);
	dwfl_report_end(dwfl, NULL, NULL);
	if (r == ENOENT || r == ESRCH) {
		snprintf(err, errlen, "no process %d", (int)pid);
		goto cleanup;
	}
	if (r != 0) {
		snprintf(err, errlen, "cannot read the modules of process %d: %s", (int)pid,
			 r > 0 ? strerror(r) : dwfl_errmsg(-1));
		goto cleanup;
	}
	dwfl_getmodules(dwfl, find_module, &f, 0);
	if (!f.libc) {
		snprintf(err, errlen, "process %d maps no libc.so.6: a static binary or not "
			 "glibc; its allocator cannot be read", (int)pid);
		goto cleanup;
	}
	name = dwfl_module_info(f.libc, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
	snprintf(g->module, sizeof(g->module), "%s", mainfile ? mainfile : name ? name : "?");
	symbols(f.libc, g);
	if (!g->main_arena || !g->mp) {
		snprintf(err, errlen, "no symbols for glibc's 'main_arena' and 'mp_' in '%s' or "
			 "its debuginfo: install its debug symbols (%s) or set MW_DEBUGINFO_PATH",
			 g->module, DEBUG_PACKAGES);
		goto cleanup;
	}
	if (!(dw = dwfl_module_getdwarf(f.libc, &bias))) {
		snprintf(err, errlen, "no DWARF for '%s' (glibc's struct layouts): install its "
			 "debug symbols (%s) or set MW_DEBUGINFO_PATH", g->module, DEBUG_PACKAGES);
		goto cleanup;
	}
	dwfl_module_info(f.libc, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	snprintf(g->dwarf_file, sizeof(g->dwarf_file), "%s", debugfile ? debugfile : g->module);
	if (layouts(dw, g, what, sizeof(what)) < 0) {
		snprintf(err, errlen, "the DWARF of '%s' lacks %s: install the debug symbols of "
			 "that exact libc (%s)", g->dwarf_file, what, DEBUG_PACKAGES);
		goto cleanup;
	}
	{
		GElf_Addr ebias;

		g->version_minor = mw_glibc_minor_of(dwfl_module_getelf(f.libc, &ebias));
	}
	/* safe-linking of fastbin and tcache pointers: glibc 2.32 */
	g->safe_linking = g->version_minor == 0 || g->version_minor >= 32;
	ret = 0;
cleanup:
	dwfl_end(dwfl);
	return ret;
}
