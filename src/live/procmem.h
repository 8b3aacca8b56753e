/* procmem.h - read another process's memory, only where it is mapped.
 *
 * The mappings come from /proc/PID/maps (proc(5)), one line per mapping:
 *
 *	7f2c4a200000-7f2c4a228000 r--p 00000000 fe:01 1311038  /usr/lib/x86_64-linux-gnu/libc.so.6
 *
 * Every read is checked against them first - a pointer taken from the
 * process is never followed unless [addr, addr+len) lies in readable
 * mappings - then done with process_vm_readv(2), falling back to
 * pread(2) on /proc/PID/mem.  Neither stops or signals the process.
 * Both need ptrace access to it (root, or the same user with
 * kernel.yama.ptrace_scope 0).
 *
 * A walk that follows many pointers (a heap's free lists) reads a copy:
 * with mw_proc_copy(p, 1), every read inside a readable mapping is served
 * from a copy of its MW_PROC_BLOCK-aligned block, read whole at its first
 * use (one process_vm_readv, clipped to that mapping), blocks of up to
 * MW_PROC_COPY_MAX bytes per process, their bytes held in a pool of
 * buffers used again (procmem_int.h: a block's buffer goes to another
 * once the walk has gone on, and a block read again then is copied
 * again); a read outside what could be copied (past the cap, a block
 * read short) goes to the process as before; one across a block's end
 * is served from the two.  The copy is as old as its block's read:
 * mw_proc_copy_drop forgets it (the buffers are kept for the next);
 * mw_proc_copy_free gives the buffers back (a snapshot does at its end).
 * A read served from a copy needs no mapping check: the block was
 * clipped to a readable mapping when it was read, and reading the
 * mappings again drops every copy.
 */
#ifndef MALLOCWATCH_PROCMEM_H
#define MALLOCWATCH_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mw_map {
	uint64_t start, end;	/* [start, end) */
	int readable, exec;
	uint64_t inode;		/* of the file mapped; 0 anonymous */
};

#define MW_PROC_BLOCK (1U << 16)		/* bytes copied in one read */
#define MW_PROC_COPY_MAX (1ULL << 30)	/* bytes copied at most, per process */

struct mw_proc_copy;

struct mw_proc {
	pid_t pid;
	struct mw_map *maps;	/* sorted by start */
	size_t nmaps;
	size_t hint;		/* the mapping found last */
	int memfd;		/* /proc/PID/mem, opened on first need; -1 */
	int use_mem;		/* process_vm_readv is not allowed: use memfd */
	int copying;		/* mw_proc_copy on */
	struct mw_proc_copy *copy;	/* the blocks copied; NULL */
	uint64_t changed;	/* blocks copied again whose marked words
				 * no longer held what a walk had read:
				 * the memory changed under it */
};

/* Read the mappings of pid into p.  0, or -1 with a one-line reason in
 * err ("no process 42", "cannot read '/proc/42/maps': ..."). */
int mw_proc_open(struct mw_proc *p, pid_t pid, char *err, size_t errlen);

/* Read the mappings again (the process may have mapped more). */
int mw_proc_refresh(struct mw_proc *p, char *err, size_t errlen);

/* Is [addr, addr+len) inside readable mappings?  1 or 0.  Answered
 * without a call when it lies in the mapping found last (a walk asks
 * twice a chunk, of chunks in the same heap). */
int mw_proc_mapped_any(const struct mw_proc *p, uint64_t addr, uint64_t len);

static inline int mw_proc_mapped(const struct mw_proc *p, uint64_t addr, uint64_t len)
{
	const struct mw_map *m = p->hint < p->nmaps ? &p->maps[p->hint] : NULL;

	if (m && m->readable && len && addr >= m->start && addr + len > addr && addr + len <= m->end)
		return 1;
	return mw_proc_mapped_any(p, addr, len);
}

/* Read len bytes at addr into buf.  0; -1 when the range is not mapped
 * readable or the read failed (errno set: EFAULT, ESRCH when the process
 * is gone, EPERM). */
int mw_proc_read(struct mw_proc *p, uint64_t addr, void *buf, size_t len);

/* A read of addr to come: when its block is copied, the CPU is asked to
 * bring that part of the copy into its cache now (a walk that knows the
 * next chunk before it is done with this one then waits less for
 * memory).  Reads nothing from the process; no effect on what is read. */
void mw_proc_prefetch(struct mw_proc *p, uint64_t addr);

/* When a read of 16 bytes at addr would be served from a block copied
 * already (and not being copied ahead: procmem_int.h), the order in
 * which that block's copy was begun (1, 2, ...: a block copied again has
 * a new one); 0 when it would not.  Reads nothing.  A walk of several
 * lists steps on the ones it can, and keeps them together. */
uint64_t mw_proc_copy_order(struct mw_proc *p, uint64_t addr);

/* Read from copies (on 1) or from the process (0) from now on: see
 * above.  What was copied stays until mw_proc_copy_drop, mw_proc_refresh
 * or mw_proc_close. */
void mw_proc_copy(struct mw_proc *p, int on);

/* Forget every copied block: the next read copies afresh. */
void mw_proc_copy_drop(struct mw_proc *p);

/* Bytes read into copies since mw_proc_open, and blocks copied (or
 * queued to be read ahead: procmem_int.h). */
uint64_t mw_proc_copied(const struct mw_proc *p, uint64_t *blocks);

/* Free the copies' memory (copying is then off).  The calling thread
 * keeps one copy's first slab (4 MiB, its pages faulted in already) for
 * its next mw_proc_copy: a thread that reads many processes pays the
 * kernel's page faults once; mw_proc_copy_spare_free gives it back (a
 * thread that read processes calls it before it ends). */
void mw_proc_copy_free(struct mw_proc *p);
void mw_proc_copy_spare_free(void);

/* Marks: what a walk read from the copies, to tell later whether the
 * process still holds the same (snapshot.c: a walk of lists is then not
 * made again).  While marking (mw_proc_mark(p, 1), copies on), every
 * 8-byte word a read served from a copy touches is marked once, with its
 * value there; mw_proc_marks_take ends the marking and takes the marks
 * (NULL when a read went to the process instead, or a copy was dropped
 * meanwhile: the marks would not hold every word read).
 * mw_proc_marks_same reads the marked words again from the process (the
 * span of each block's marks, 16 blocks a process_vm_readv, into a buffer
 * of its own: no copy is made or dropped) and compares them with the marked
 * values, block by block in the order they were copied, by a keyed 64-bit
 * hash of every word and its address (a random key per process), ending
 * at the first 16 blocks that differ: 1 the same, 0 not (or unmapped now),
 * -1 when the process is gone or refuses (errno). */
struct mw_proc_marks;
void mw_proc_mark(struct mw_proc *p, int on);
struct mw_proc_marks *mw_proc_marks_take(struct mw_proc *p);
int mw_proc_marks_same(struct mw_proc *p, const struct mw_proc_marks *m);
void mw_proc_marks_free(struct mw_proc_marks *m);

/* Read one 8-byte word (native byte order).  0 or -1 as above. */
int mw_proc_word(struct mw_proc *p, uint64_t addr, uint64_t *v);

/* Close p's descriptor on /proc/PID/mem and free its maps; p itself is
 * the caller's, left empty (no maps, memfd -1). */
void mw_proc_close(struct mw_proc *p);

/* What pid is, from /proc/PID/stat (proc(5)): MW_PROC_EXITED (a zombie
 * its parent has not reaped yet, or gone), MW_PROC_KTHREAD (a kernel
 * thread: PF_KTHREAD in its flags), MW_PROC_EXITING (PF_EXITING: in its
 * exit, its address space gone from exit_mm on, until it is a zombie),
 * MW_PROC_LEADER_GONE (its main thread a zombie, pthread_exit, while
 * another of its threads runs: the process lives, but /proc/PID shows no
 * mappings and its memory cannot be read there) or MW_PROC_USER. */
enum { MW_PROC_USER, MW_PROC_EXITED, MW_PROC_KTHREAD, MW_PROC_EXITING, MW_PROC_LEADER_GONE };
int mw_proc_kind(pid_t pid);

/* Into err (errlen bytes): why pid, which maps nothing we look for, has
 * no memory to read, when it is exited, exiting, a kernel thread or its
 * main thread has exited (the others running); else that it has no
 * mappings.  One line, for a message. */
void mw_proc_no_memory(pid_t pid, char *err, size_t errlen);

/* Is pid a live process?  A zombie is not (its memory and files are
 * gone); a process of another user is.  1 or 0. */
int mw_process_alive(pid_t pid);

/* Read a small file (a /proc entry, a record) whole into buf, at most
 * len - 1 bytes, NUL-terminated; flags are added to O_RDONLY|O_CLOEXEC
 * (O_NOFOLLOW, O_NONBLOCK).  The bytes read, or -1 (buf "") when it
 * cannot be opened or is empty. */
ssize_t mw_read_small(const char *path, int flags, char *buf, size_t len);

/* /proc/PID/stat read into buf as mw_read_small does, and where its fields
 * after "PID (COMM) " start (the state letter, field 3; COMM may hold
 * anything, so the last ')' ends it).  NULL when the process is gone or
 * the line is not of that shape. */
const char *mw_proc_stat_fields(pid_t pid, char *buf, size_t len);

/* pid's real uid (the "Uid:" line of /proc/PID/status, its first
 * field: what the process cannot change without privilege, unlike the
 * owner of /proc/PID, root's when it is not dumpable) into *uid.  0, or
 * -1 when it is gone or the line is not there. */
int mw_process_uid(pid_t pid, uid_t *uid);

/* pid's command name (/proc/PID/comm) into buf; "" when it is gone. */
void mw_process_comm(pid_t pid, char *buf, size_t len);

/* pid's resident set now, bytes: /proc/PID/statm's second field (pages)
 * times the page size (proc(5)); 0 when it cannot be read (gone). */
uint64_t mw_process_rss(pid_t pid);

#endif /* MALLOCWATCH_PROCMEM_H */
