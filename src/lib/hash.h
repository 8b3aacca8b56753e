/* hash.h - FNV-1a, 64 bits: the names of what mallocwatch keeps between
 * runs (a module, a bpf object, a mended runtime in MW_CACHE_DIR; a
 * lingering session's socket), from what they are made of.  Not for
 * anything an attacker chooses to collide: the inputs are root's files.
 * (Fowler, Noll, Vo; the offset basis and prime of the 64-bit variant.)
 */
#ifndef MALLOCWATCH_HASH_H
#define MALLOCWATCH_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Where a hash starts. */
#define MW_FNV1A_INIT 0xcbf29ce484222325ULL

/* h continued over len bytes of p. */
uint64_t mw_fnv1a(uint64_t h, const void *p, size_t len);

/* h continued over the size and modification time (seconds) of the file
 * path (followed if a link); h unchanged when it cannot be stat'ed. */
uint64_t mw_fnv1a_stat(uint64_t h, const char *path);

#endif /* MALLOCWATCH_HASH_H */
