/* sdtnote.h - SystemTap SDT probe notes and symbols of one ELF file.
 *
 * Format: each probe site is an ELF note of owner "stapsdt", type 3
 * (NT_STAPSDT), in section .note.stapsdt.  Its descriptor holds three
 * target-sized addresses - the probe's pc, the link-time address of
 * section .stapsdt.base, the semaphore (0 when none) - followed by three
 * NUL-terminated strings: provider, name, argument specs.  Source:
 * SystemTap wiki "UserSpaceProbeImplementation", <sys/sdt.h>.
 *
 * Real example (`readelf -n libc.so.6`, glibc 2.36 --enable-systemtap):
 *
 *   stapsdt  0x0000003e  NT_STAPSDT (SystemTap probe descriptors)
 *     Provider: libc
 *     Name: memory_arena_new
 *     Location: 0x000000000009b0b4, Base: 0x00000000001c3f98, Semaphore: 0x0
 *     Arguments: 8@%rbx 8@%r12
 *
 * Reading goes through elfutils' libelf (gelf_getnote, gelf_xlatetom).
 */
#ifndef MALLOCWATCH_SDTNOTE_H
#define MALLOCWATCH_SDTNOTE_H

#include <stddef.h>
#include <libelf.h>
#include <stdint.h>

/* One probe site.  Strings are owned by the mw_elf they came from. */
struct mw_sdt_site {
	const char *provider;	/* "libc", "libm", ... */
	const char *name;	/* "memory_arena_new" */
	const char *args;	/* argument specs, space separated; "" if none */
	uint64_t pc;		/* link-time address of the probe site, with the
				 * .stapsdt.base correction applied */
	uint64_t note_base;	/* .stapsdt.base as recorded in the note */
	uint64_t semaphore;	/* link-time address of the semaphore, 0 if none */
};

struct mw_elf;	/* opaque: one open ELF file and the sites read from it */

/* Open path, read its SDT notes (SHT_NOTE sections, else PT_NOTE
 * segments).  A malformed note is skipped and counted (mw_elf_bad_notes),
 * never fatal.  Returns NULL on failure with a message for the user in
 * errbuf (errlen bytes), e.g. "cannot open '/x': No such file or directory",
 * "'/x' is not a regular file", "'/x' is corrupt or truncated: ..." (a
 * section or segment past the end of the file). */
struct mw_elf *mw_elf_open(const char *path, char *errbuf, size_t errlen);

/* The same for an ELF image in memory (copied; name is what messages
 * call it).  Separate debuginfo is not looked for.  For the fuzzer
 * (tests/fuzz) and for images that are not files. */
struct mw_elf *mw_elf_open_mem(const void *image, size_t size, const char *name,
			       char *errbuf, size_t errlen);

/* Number of sites read, and site i (0 <= i < count). */
size_t mw_elf_nsites(const struct mw_elf *e);
const struct mw_sdt_site *mw_elf_site(const struct mw_elf *e, size_t i);

/* Notes that were malformed and skipped; the first reason in *why. */
size_t mw_elf_bad_notes(const struct mw_elf *e, const char **why);

/* The file's e_machine (EM_X86_64, EM_AARCH64, ...). */
int mw_elf_machine(const struct mw_elf *e);

/* The file offset of link-time address vaddr: inside a PT_LOAD segment's
 * file bytes, vaddr - p_vaddr + p_offset (ELF gABI, program headers), what
 * a uprobe on the file takes (the kernel's uprobetracer.rst).  0 and
 * *off, or -1 when no segment holds it. */
int mw_elf_file_offset(const struct mw_elf *e, uint64_t vaddr, uint64_t *off);

/* The path the file was opened with. */
const char *mw_elf_path(const struct mw_elf *e);

/* Does the file have a .symtab (i.e. is it unstripped)? */
int mw_elf_has_symtab(const struct mw_elf *e);

/* The value (link-time address) of symbol name, looked up in .symtab,
 * then .dynsym, then - for a stripped file - the .symtab of its separate
 * debuginfo found by elfutils' libdwfl (build-id or .gnu_debuglink under
 * /usr/lib/debug, or $MW_DEBUGINFO_PATH), local symbols included.
 * Returns 0 and sets *value when found, -1 when not. */
int mw_elf_symbol(const struct mw_elf *e, const char *name, uint64_t *value);

/* The highest GLIBC_2.N version the file defines (.gnu.version_d): N, or
 * 0 when it defines none (not a glibc). */
int mw_elf_glibc_minor(const struct mw_elf *e);

/* The same for an ELF handle of libelf's (NULL: 0). */
int mw_glibc_minor_of(Elf *elf);

/* Close and free everything, sites included.  NULL is allowed. */
void mw_elf_close(struct mw_elf *e);

#endif /* MALLOCWATCH_SDTNOTE_H */
