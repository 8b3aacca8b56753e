/* bpfobj.h - one change to the object `stap --runtime=bpf -p4` writes,
 * before stapbpf loads it: stapbpf's internal map made an array.
 *
 * The object's "maps" section is an array of the 20-byte map
 * definitions stapbpf loads in order (struct bpf_map_def: u32 type,
 * key_size, value_size, max_entries, map_flags; systemtap's
 * bpf-internal.h).  Map 0, symbol "map.0", is stapbpf's internal map
 * (bpf::globals::internal_map_idx): the exit flag and the error count,
 * at keys 0 and 1 (stap 4.8 writes it as (1, 4, 8, 2, 0): a hash of two
 * 8-byte values).  Every handler looks both up before it does anything.
 * A hash lookup is a helper call that hashes its key (about 35 ns a hit
 * for the two on this machine); an array's the verifier turns into a
 * few inline instructions.  Keys 0 and 1 of a 2-entry array behave as
 * the hash's do for every use stapbpf makes of the map (lookups, and
 * updates with BPF_ANY or BPF_EXIST, from the handlers and from
 * stapbpf, which sets both keys before it attaches anything).
 */
#ifndef MALLOCWATCH_BPFOBJ_H
#define MALLOCWATCH_BPFOBJ_H

#include <stddef.h>

/* In the bpf object at path (written by stap -p4), make stapbpf's
 * internal map an array when it is the hash described above: map 0 of
 * the "maps" section, named "map.0", of type BPF_MAP_TYPE_HASH with
 * 4-byte keys, 8-byte values and at most 16 entries.  The file is
 * rewritten in place through libelf, its layout kept.  Returns 1 when
 * changed, 0 when the object holds no such map (left as it is: another
 * stap's object still runs, only without the saving), -1 with err set
 * when the file cannot be opened or is not a readable ELF object. */
int mw_bpfobj_tune(const char *path, char *err, size_t errlen);

#endif
