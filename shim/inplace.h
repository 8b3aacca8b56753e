/* inplace.h - stapbpf's map updates made in place, in its handlers'
 * bytecode (umulti-shim.so; see inplace.c for the patterns). */
#ifndef MALLOCWATCH_INPLACE_H
#define MALLOCWATCH_INPLACE_H

#include <linux/bpf.h>
#include <stdint.h>

/* What the rewrite needs to know of a map: its type (enum bpf_map_type),
 * its key and value sizes in bytes and its id (two descriptors of one map
 * have one id), as BPF_OBJ_GET_INFO_BY_FD gives them
 * (include/uapi/linux/bpf.h, struct bpf_map_info). */
struct mw_inplace_map {
	uint32_t type, key_size, value_size, id;
};

/* Fills *m for the map whose descriptor (in the loading process) is fd;
 * returns 0, or -1 when the map cannot be asked (the program is then
 * left as it is). */
typedef int (*mw_inplace_map_fn)(int fd, struct mw_inplace_map *m);

/* How many of each rewrite applied to one program. */
struct mw_inplace_stats {
	unsigned stores;	/* a hash map's `m[k] = v` (`m[k]++` too) after a
				 * lookup of k made a store through its pointer */
	unsigned arrays;	/* an array's `m[k] = v` made a lookup and a store */
};

/* Rewrites the program in[0..n) (stapbpf's instructions, its maps'
 * descriptors in ld_imm64 BPF_PSEUDO_MAP_FD) so that updates of a key
 * found by a lookup go through the looked-up value.  No instruction
 * moves: each rewritten instruction becomes a jump to a stub appended to
 * the program, which does what it did and jumps back.  map_info: asked
 * for each map a store would go to (NULL: no stores rewritten).  Returns
 * the new instruction array (the caller's to free) and its length in
 * *out_n, and what applied in *st (may be NULL); NULL when nothing
 * applied or memory ran out, the program then to be loaded as it is. */
__attribute__((visibility("hidden")))	/* not exported from the preloaded shim */
struct bpf_insn *mw_inplace(const struct bpf_insn *in, unsigned n, unsigned *out_n,
			    mw_inplace_map_fn map_info, struct mw_inplace_stats *st);

#endif
