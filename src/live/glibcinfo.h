/* glibcinfo.h - where glibc's allocator lives in a process, and the
 * layout of its structures, from the libc's own symbols and DWARF.
 *
 * Symbols (main_arena, mp_, narenas, free_list, __curbrk, list_lock,
 * free_list_lock; most are local and so only in .symtab or the separate debuginfo) come through
 * elfutils' libdwfl, which reports the process's modules from
 * /proc/PID/maps with their load biases (dwfl_linux_proc_report; it reads
 * /proc only, and never attaches) and finds a stripped libc's debuginfo by
 * build-id or .gnu_debuglink under /usr/lib/debug or $MW_DEBUGINFO_PATH
 * (Debian: libc6-dbg; Fedora: glibc-debuginfo).  Structure layouts -
 * struct malloc_state, malloc_chunk, _heap_info (heap_info), malloc_par,
 * as in glibc's malloc/malloc.c and malloc/arena.c - come from that
 * DWARF through libdw: member offsets and sizes are read, never assumed
 * per glibc version.  Sizes are bytes, addresses the process's.
 */
#ifndef MALLOCWATCH_GLIBCINFO_H
#define MALLOCWATCH_GLIBCINFO_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A structure member: byte offset and size; off < 0 when absent. */
struct mw_member {
	int64_t off;
	int64_t size;
};

struct mw_glibc {
	char module[PATH_MAX];		/* the file malloc lives in (libc.so.6) */
	char dwarf_file[PATH_MAX];	/* where its DWARF came from */
	int elsewhere;		/* module does not name the mapped file in our
				 * mount namespace: the process lives in another
				 * (a container) or its libc was replaced */
	int version_minor;		/* 2.N from .gnu.version_d; 0 unknown */
	int safe_linking;		/* fastbin fd pointers mangled (2.32+) */
	uint64_t image;		/* mw_glibc_load's process's program image
				 * (mw_ptstop_image) before its maps were read:
				 * a walk by these addresses is of that image
				 * alone; 0 unknown */
	/* runtime addresses of glibc's globals (0: not found); in this order
	 * (glibcinfo.c rebases them as an array).  list_lock (arena.c)
	 * guards the arena ring, free_list_lock the free list and the arenas'
	 * attached_threads: both 4-byte locks, 0 when free */
	uint64_t main_arena, mp, narenas, free_list, curbrk, list_lock, free_list_lock;
	uint64_t malloc_trim;	/* the function's runtime address (trim -p); 0 */
	/* malloc's code: the runtime address ranges [lo, hi) of the
	 * compilation unit of malloc/malloc.c (arena.c and hooks.c are
	 * included in it), from its DWARF (DW_AT_ranges, or low/high pc),
	 * found through __libc_malloc; a thread with a frame in them may be
	 * half-way through changing the allocator (snapshot.h).  ncode 0:
	 * unknown */
#define MW_GLIBC_CODE_RANGES 16
	struct { uint64_t lo, hi; } code[MW_GLIBC_CODE_RANGES];
	int ncode;
	/* struct malloc_state */
	int64_t mstate_size;
	struct mw_member ms_top, ms_fastbins, ms_bins, ms_next, ms_next_free,
		ms_attached_threads, ms_system_mem, ms_max_system_mem;
	struct mw_member ms_mutex;	/* the arena's lock (__libc_lock_t, an int):
					 * 0 free, else held by a thread in malloc,
					 * free and the like; off < 0 when unknown */
	int nfastbins, nbin_slots;	/* elements of fastbinsY[] and bins[] */
	int64_t fastbin_slot, bin_slot;	/* bytes per element of each (pointers) */
	/* struct malloc_chunk */
	int64_t chunk_struct_size;
	struct mw_member ch_prev_size, ch_size, ch_fd, ch_bk, ch_fd_nextsize;
	/* struct _heap_info */
	struct mw_member hi_ar_ptr, hi_prev, hi_size, hi_mprotect_size;
	/* struct malloc_par (mp_) */
	struct mw_member mp_trim_threshold, mp_top_pad, mp_mmap_threshold, mp_arena_test,
		mp_arena_max, mp_hp_pagesize, mp_n_mmaps, mp_n_mmaps_max, mp_max_n_mmaps,
		mp_no_dyn_threshold, mp_mmapped_mem, mp_max_mmapped_mem, mp_sbrk_base;
};

/* Find malloc's module in process pid and read the above into g: the
 * libc.so.6 it maps, opened as that very file (mapped.h), wherever the
 * process lives; its debuginfo by build-id on the host (/usr/lib/debug,
 * $MW_DEBUGINFO_PATH), else inside the process's own root.  What a libc
 * file gives is kept, by device and inode, for the next process mapping
 * the same file (also a failure for want of symbols or DWARF); 0, or
 * -1 with a one-line reason in err that says what is missing and which
 * package gives it, e.g. "no DWARF for '/lib/x86_64-linux-gnu/libc.so.6'
 * (struct malloc_state): install its debug symbols (Debian: libc6-dbg,
 * Fedora: glibc-debuginfo)". */
int mw_glibc_load(pid_t pid, struct mw_glibc *g, char *err, size_t errlen);

/* mw_glibc_load, but by deadline (CLOCK_MONOTONIC seconds, as
 * mw_now_s(); 0: none): libc files are read one at a time, and a caller
 * that would still be waiting for another's read at the deadline gives
 * up then, -2 (err says so), rather than queue behind reads a process
 * can make slow (its libc.so.6 a file of its own, up to MW_ELF_MB: each
 * copied before it is read).  A read begun before the deadline is
 * finished. */
int mw_glibc_load_by(pid_t pid, struct mw_glibc *g, double deadline, char *err,
		     size_t errlen);

/* Read the libc file at path (the one a -c run's program will map) and
 * keep what it gives as mw_glibc_load keeps it, so that a later
 * mw_glibc_load of a process mapping that very file (same device and
 * inode) needs no DWARF: some 7 ms for a libc built with -g, which a -c
 * run's exit snapshot would otherwise pay while its program is held at
 * its exit.  Its debuginfo is looked for on the host only; a failure is
 * not kept (mw_glibc_load may still find it inside a process's root).
 * 0 when kept (or kept before), -1 with a one-line reason in err. */
int mw_glibc_preload(const char *path, char *err, size_t errlen);

/* How many libc files this process has read (opened and looked through
 * their symbols and DWARF) for mw_glibc_load and mw_glibc_preload: the
 * loads the kept layouts did not answer.  For the tests. */
unsigned long mw_glibc_dwarf_reads(void);

/* The policy of what mw_glibc_load keeps (glibcinfo.c says why), for
 * its unit test: each libc file kept has a slot, charged to a user (the
 * real uid of the processes it is read or used for) and stamped with its
 * last use (a clock that only goes up). */
#define MW_NO_UID ((uid_t)-1)
struct mw_glibc_slot {
	uid_t user;
	uint64_t used;
};

/* Of n (> 0) slots, all taken, the one a file read for a process of
 * user's gives up: the least recently used of the user holding the most,
 * user's own when user holds as many as the most. */
size_t mw_glibc_slot_victim(const struct mw_glibc_slot *s, size_t n, uid_t user);

/* Slot i of n used at now for a process of user's (MW_NO_UID: not
 * known): stamped, and charged to user when user holds at least 2 fewer
 * slots than its holder (a file several users' processes use is charged
 * to the one holding least; 1 fewer would move it back and forth). */
void mw_glibc_slot_use(struct mw_glibc_slot *s, size_t n, size_t i, uid_t user, uint64_t now);

/* Forget what mw_glibc_load kept: for a caller that runs long (the
 * libc files behind a device and inode may have been replaced). */
void mw_glibc_cache_reset(void);

#endif /* MALLOCWATCH_GLIBCINFO_H */
