/* glibcinfo_dwarf.c - the layouts of glibc's allocator structures,
 * read from the libc's DWARF through libdw (glibcinfo.h): struct
 * malloc_state, malloc_chunk, _heap_info and malloc_par, each member's
 * offset and size as the compiler laid it out, never assumed per glibc
 * version.  Take glibc 2.36's malloc/malloc.c:
 *
 *	struct malloc_chunk {
 *	  INTERNAL_SIZE_T      mchunk_prev_size;
 *	  INTERNAL_SIZE_T      mchunk_size;
 *	  struct malloc_chunk* fd;
 *	  struct malloc_chunk* bk;
 *	  struct malloc_chunk* fd_nextsize;
 *	  struct malloc_chunk* bk_nextsize;
 *	};
 *
 * Its DW_TAG_structure_type gives DW_AT_byte_size 48 on x86_64, each
 * DW_TAG_member its DW_AT_data_member_location (fd: 16) and type.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <string.h>

#include "glibcinfo.h"
#include "glibcinfo_int.h"

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

/* A structure called name: in malloc_cu first (the unit of malloc.c,
 * which includes arena.c, found from __libc_malloc's address through
 * .debug_aranges), then in any unit named malloc.c, then anywhere.  A
 * walk of every unit's top-level entries costs some 80 ms on a libc
 * built with -g, paid at each -c run's exit. */
static int find_struct_anywhere(Dwarf *dw, Dwarf_Die *malloc_cu, const char *name,
				Dwarf_Die *out)
{
	if (malloc_cu && find_struct(malloc_cu, name, out) == 0)
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		Dwarf_Off off = 0, next;
		size_t hsize;

		while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu;
			const char *cn;
			size_t len;

			if (dwarf_offdie(dw, off + hsize, &cu)) {
				cn = dwarf_diename(&cu);
				len = cn ? strlen(cn) : 0;
				if ((pass == 1 || (len >= 8 && strcmp(cn + len - 8, "malloc.c") == 0 &&
						   (len == 8 || cn[len - 9] == '/'))) &&
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

/* struct malloc_chunk's and _heap_info's members. */
static void chunk_and_heap(Dwarf_Die *ch, Dwarf_Die *hi, struct mw_glibc *g)
{
	g->chunk_struct_size = struct_size(ch);
	g->ch_prev_size = member(ch, "mchunk_prev_size", NULL);
	g->ch_size = member(ch, "mchunk_size", NULL);
	g->ch_fd = member(ch, "fd", NULL);
	g->ch_bk = member(ch, "bk", NULL);
	g->ch_fd_nextsize = member(ch, "fd_nextsize", NULL);
	g->hi_ar_ptr = member(hi, "ar_ptr", NULL);
	g->hi_prev = member(hi, "prev", NULL);
	g->hi_size = member(hi, "size", NULL);
	g->hi_mprotect_size = member(hi, "mprotect_size", NULL);
}

/* The layouts, or -1 naming the first thing missing. */
int mw_glibc_layouts(Dwarf *dw, Dwarf_Die *malloc_cu, struct mw_glibc *g, char *what,
		     size_t len)
{
	Dwarf_Die ms, ch, hi, mp;
	int64_t fast_elem = -1, bin_elem = -1;

	if (find_struct_anywhere(dw, malloc_cu, "malloc_state", &ms) < 0) {
		snprintf(what, len, "struct malloc_state");
		return -1;
	}
	if (find_struct_anywhere(dw, malloc_cu, "malloc_chunk", &ch) < 0 ||
	    find_struct_anywhere(dw, malloc_cu, "_heap_info", &hi) < 0 ||
	    find_struct_anywhere(dw, malloc_cu, "malloc_par", &mp) < 0) {
		snprintf(what, len, "struct malloc_chunk, _heap_info or malloc_par");
		return -1;
	}
	g->mstate_size = struct_size(&ms);
	g->ms_top = member(&ms, "top", NULL);
	g->ms_fastbins = member(&ms, "fastbinsY", &fast_elem);
	g->ms_bins = member(&ms, "bins", &bin_elem);
	g->ms_next = member(&ms, "next", NULL);
	g->ms_next_free = member(&ms, "next_free", NULL);
	g->ms_mutex = member(&ms, "mutex", NULL);
	g->ms_attached_threads = member(&ms, "attached_threads", NULL);
	g->ms_system_mem = member(&ms, "system_mem", NULL);
	g->ms_max_system_mem = member(&ms, "max_system_mem", NULL);
	chunk_and_heap(&ch, &hi, g);
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
