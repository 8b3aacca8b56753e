/* unwind.h - a user stack, unwound and symbolized with elfutils' libdwfl.
 *
 * Input: what a perf event sample of a uprobe gives (perf_event_open(2),
 * PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER): the user registers
 * at the probe site, in the kernel's x86_64 perf order (asm/perf_regs.h:
 * AX BX CX DX SI DI BP SP IP, then R8..R15; the bits of MW_UNWIND_REGMASK),
 * and a copy of the stack from SP up.  The process's module map is the
 * text of its /proc/PID/maps (proc(5)):
 *
 *	7f2c4a228000-7f2c4a3bd000 r-xp 00028000 fe:01 1311038  /usr/lib/x86_64-linux-gnu/libc.so.6
 *
 * with a descriptor for each mapped file, opened while the process ran
 * (it may be gone when the stack is symbolized, and its files may not be
 * visible under the names maps gives: another mount namespace).
 *
 * Unwinding is libdwfl's, the way perf's util/unwind-libdw.c does it:
 * dwfl_linux_proc_maps_report() for the modules, dwfl_attach_state() with
 * callbacks that read memory from the stack copy and set the initial
 * registers from the sample, dwfl_getthread_frames() for the CFI walk
 * (.eh_frame or .debug_frame; elfutils' x86_64 backend falls back to the
 * frame pointer where a module has no CFI).  Symbols and lines come from
 * dwfl_module_addrinfo() and dwfl_module_getsrc() (debug info found by
 * build-id or .gnu_debuglink under /usr/lib/debug).
 */
#ifndef MALLOCWATCH_UNWIND_H
#define MALLOCWATCH_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <elfutils/libdwfl.h>

/* perf's sample_regs_user for x86_64: AX..IP (bits 0-8), R8..R15 (16-23) */
#define MW_UNWIND_REGMASK 0xff01ffULL
#define MW_UNWIND_NREGS 17	/* registers in a sample, in mask bit order */
enum { MW_UR_AX, MW_UR_BX, MW_UR_CX, MW_UR_DX, MW_UR_SI, MW_UR_DI, MW_UR_BP,
       MW_UR_SP, MW_UR_IP, MW_UR_R8, MW_UR_R15 = MW_UR_R8 + 7 };

#define MW_MAX_FRAMES 64

/* One module file a process maps: the descriptor of the very file
 * (O_RDONLY, close-on-exec; owned by whoever made the list). */
struct mw_unwind_file {
	char *name;		/* as /proc/PID/maps names it */
	int fd;
};

/* One frame, symbolized (by libdwfl; or, where the module's file could
 * not be used, from the module map alone: module, build_id and offset). */
struct mw_frame {
	uint64_t pc;		/* the address (a return address for every frame
				 * but the first) */
	char module[64];	/* base name of the module's file, "" unknown */
	char build_id[41];	/* hex, "" when none */
	char function[160];	/* "" unknown */
	uint64_t offset;	/* pc - the function's start; with no function,
				 * the pc's offset in the module's file */
	char file[160];		/* source file, "" without debug info */
	int line;		/* 0 without debug info */
};

struct mw_unwinder;	/* opaque: one address space's modules */

/* The modules of pid's address space from maps (its /proc/PID/maps text,
 * copied) and files (the array is copied; their names and descriptors,
 * dup()ed when used, stay the caller's, valid while the unwinder lives).  A mapping of a file not in
 * files is opened by its name (as libdwfl would).  Returns NULL with a
 * reason in err (errlen bytes) when libdwfl cannot read the map. */
struct mw_unwinder *mw_unwinder_new(pid_t pid, const char *maps,
				    const struct mw_unwind_file *files, size_t nfiles,
				    char *err, size_t errlen);

/* Unwind one sample of thread tid: regs (MW_UNWIND_NREGS values in perf
 * order), stack (len bytes copied from regs[MW_UR_SP] up).  Writes the
 * program counters, innermost first, into pcs (max entries).  Returns
 * how many (0 when not even the first is known). */
int mw_unwind(struct mw_unwinder *u, pid_t tid, const uint64_t *regs,
	      const void *stack, size_t len, uint64_t *pcs, int max);

/* Does a module of u's map hold addr?  1 or 0. */
int mw_unwinder_covers(struct mw_unwinder *u, uint64_t addr);

/* Symbolize pc (activation: the first frame, looked up at pc itself; else
 * a return address, looked up at pc - 1 so a call at a function's end
 * names that function) into f. */
void mw_unwind_symbolize(struct mw_unwinder *u, uint64_t pc, int activation,
			 struct mw_frame *f);

/* The build-id of the module of u's map that holds addr, as hex into
 * out (41 bytes; "" when unknown).  0, or -1 when there is none (no
 * module there, its file unreadable or without a build-id note). */
int mw_unwinder_build_id(struct mw_unwinder *u, uint64_t addr, char *out);

/* The GNU build-id note of the ELF file open at fd, as hex into out (41
 * bytes).  0, or -1 when it has none or is no ELF file ("" in out). */
int mw_build_id_of_fd(int fd, char *out);

/* Free u (NULL allowed). */
void mw_unwinder_free(struct mw_unwinder *u);

/* libdwfl's find_debuginfo, done without opening anything a file names
 * unchecked (dwfl_standard_find_debuginfo opens the .gnu_debuglink and
 * .gnu_debugaltlink names a module gives as paths, FIFOs and devices
 * included): by build-id under the absolute directories of
 * MW_DEBUGINFO_PATH (default /usr/lib/debug) through
 * dwfl_build_id_find_debuginfo (the dwz file of a .gnu_debugaltlink too),
 * else a debuglink that is a plain file name, in the module's directory,
 * its .debug/ and under those directories, opened as fsutil.h's
 * mw_open_regular does and taken only when its build-id is the
 * module's.  The file found is checked as mapped.h's mw_elf_vet does.
 * The descriptor (its name in *name, malloc'd), or -1; a file found and
 * refused gives its one-line reason in why (else why is ""). */
int mw_dwfl_find_debuginfo(Dwfl_Module *mod, void **ud, const char *modname, Dwarf_Addr base,
			   const char *file_name, const char *debuglink, GElf_Word crc,
			   char **name, char *why, size_t whylen);

#endif /* MALLOCWATCH_UNWIND_H */
