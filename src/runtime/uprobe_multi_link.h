/* uprobe_multi_link.h - the two uprobe_multi calls mallocwatch makes
 * (runtime.c's feature check) and the benches make: an empty program
 * loaded, a link made (uprobe_multi.h has the definitions).
 */
#ifndef MALLOCWATCH_UPROBE_MULTI_LINK_H
#define MALLOCWATCH_UPROBE_MULTI_LINK_H

#include <stdint.h>

#include "uprobe_multi.h"

/* Load an empty program (r0 = 0; exit) of type BPF_PROG_TYPE_KPROBE for
 * a uprobe_multi link.  Its fd (close-on-exec, the caller's), or -1 with
 * errno (also where the kernel knows no such attach type and refuses it
 * at load). */
int mw_umulti_empty_prog(void);

/* Attach prog at the n offsets (bytes into path's file) of path, site i
 * with cookie cookies[i] (NULL: 0 each), in process pid only (0: every
 * process).  The link's fd (close-on-exec, the caller's; closing it
 * removes every site), or -1 with errno: EINVAL where the kernel has no
 * uprobe_multi links, EBADF where path is not a regular file. */
int mw_umulti_link(int prog, const char *path, const uint64_t *offs, const uint64_t *cookies,
		   unsigned n, unsigned pid);

#endif /* MALLOCWATCH_UPROBE_MULTI_LINK_H */
