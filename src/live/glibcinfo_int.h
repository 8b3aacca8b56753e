/* glibcinfo_int.h - what glibcinfo.c (the libc found, its symbols and
 * debuginfo, the cache of what each libc file gave) and
 * glibcinfo_dwarf.c (the structure layouts from its DWARF) share.  Not a
 * public interface: glibcinfo.h is. */
#ifndef MALLOCWATCH_GLIBCINFO_INT_H
#define MALLOCWATCH_GLIBCINFO_INT_H

#include <elfutils/libdw.h>
#include <stddef.h>

#include "glibcinfo.h"

/* The layouts into g, from dw: struct malloc_state, malloc_chunk,
 * _heap_info and malloc_par, looked up first in malloc_cu (the compile
 * unit of malloc.c; NULL when it was not found).  0, or -1 naming the
 * first thing missing in what. */
int mw_glibc_layouts(Dwarf *dw, Dwarf_Die *malloc_cu, struct mw_glibc *g, char *what,
		     size_t len);

#endif /* MALLOCWATCH_GLIBCINFO_INT_H */
