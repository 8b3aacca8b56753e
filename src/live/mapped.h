/* mapped.h - the files a process maps, as files, not as names.
 *
 * /proc/PID/maps (proc(5)) names each mapped file by its path inside the
 * process's own mount namespace and root, and gives its device and inode:
 *
 *	7f2c4a200000-7f2c4a228000 r--p 00000000 fe:01 1311038  /lib/x86_64-linux-gnu/libc.so.6
 *
 * For a process in a container that name may be another file here (the
 * host's /lib/x86_64-linux-gnu/libc.so.6), or none; for a file replaced
 * on disk since it was mapped it ends in " (deleted)".  So the libc and
 * libm of a target are taken as the mapping's file: opened through
 * /proc/PID/map_files/START-END (the very file, deleted or not, checked
 * against the device and inode maps gives), and, where a tracer needs a
 * path to it, made visible under MW_MAPPED_DIR by a bind mount in
 * mallocwatch's own private mount namespace (open_tree(2) in the
 * process's mount namespace, move_mount(2) into ours): uprobes are set
 * per inode, so probes on that path fire in the contained process, and
 * the mount goes away with the last process of our namespace.
 * Everything here needs root (CAP_SYS_ADMIN).
 */
#ifndef MALLOCWATCH_MAPPED_H
#define MALLOCWATCH_MAPPED_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where mapped files are made visible: a tmpfs mounted in our private
 * mount namespace only (nothing is written to the host's /run). */
#define MW_MAPPED_DIR "/run/mallocwatch/mapped"

/* One mapped file: the mapping at file offset 0 (the lowest address of
 * the module) of the first file of a matching name that has an
 * executable mapping: the library loaded, not a file of that name the
 * process maps as data (a debugger, mallocwatch itself through libelf). */
struct mw_mapped {
	pid_t pid;
	char name[PATH_MAX];	/* as maps names it, " (deleted)" removed;
				 * the process's input: quote it to print */
	int deleted;		/* maps said " (deleted)" */
	uint64_t start, end;	/* [start, end) of that mapping */
	unsigned int dev_major, dev_minor;	/* maps' device (hex there) */
	uint64_t ino;		/* maps' inode */
};

/* Libraries to look for: what a file's base name starts with. */
enum mw_mapped_lib {
	MW_LIB_LIBC,	/* "libc.so", "libc-" (libc.so.6, libc-2.31.so) */
	MW_LIB_LIBM,	/* "libm.so", "libm-" */
};

/* Find lib among pid's mappings into m.  1 found; 0 not mapped (or not
 * its code: err says "process 42 maps libc as data alone, ...", else
 * err is ""); -1 with a one-line reason in err ("no process 42",
 * "cannot read '/proc/42/maps': ...", a maps line that does not parse). */
int mw_mapped_find(pid_t pid, enum mw_mapped_lib lib, struct mw_mapped *m, char *err,
		   size_t errlen);

/* Open m's file itself through /proc/PID/map_files (O_RDONLY, close-on-
 * exec) and check it is the device and inode maps gave; without the
 * privilege map_files needs, m->name inside the process's root, then in
 * ours, when it still is that file.  The descriptor,
 * or -1 with err ("process 42 exited", "process 42's mapping of '...'
 * is another file than maps names (device/inode differ)", EPERM without
 * CAP_SYS_ADMIN). */
int mw_mapped_open(const struct mw_mapped *m, char *err, size_t errlen);

/* The /proc path of m's file ("/proc/PID/map_files/START-END") into buf:
 * what mw_mapped_open opens, for libraries that take a name. */
void mw_mapped_proc_path(const struct mw_mapped *m, char *buf, size_t len);

/* Does m->name name, in our own mount namespace, the very file mapped
 * (same device and inode, not deleted)?  1 yes, 0 no: the process lives
 * in another mount namespace or root, or the file was replaced. */
int mw_mapped_here(const struct mw_mapped *m);

/* Make m's file visible at MW_MAPPED_DIR/name (name: a plain file name
 * of ours, e.g. "libc.so.6") and write that path into out.  The first
 * call moves mallocwatch into a private mount namespace of its own (its
 * mounts propagate to no one; the host's still reach it) with a fresh
 * tmpfs on MW_MAPPED_DIR: it must be made while mallocwatch has one
 * thread (unshare(2)), before any tracer is started; children started
 * afterwards see the same files.  0, or -1 with a one-line reason in err
 * (the device and inode are checked as by mw_mapped_open). */
int mw_mapped_mount(const struct mw_mapped *m, const char *name, char *out, size_t len,
		    char *err, size_t errlen);

/* A file another process maps, or the debug file found for one, before
 * libelf, libdw or libdwfl read it: such a file is its owner's, and
 * libdwfl decompresses what it is asked to (a section compressed 1000
 * to 1 makes 2 GiB of a 2 MiB file).  It is read only when it is a
 * regular file and an ELF file (libdwfl would otherwise try it as a
 * gzip, bzip2, xz or zstd image of one), and the bytes its sections
 * would decompress to -- each SHF_COMPRESSED section's header
 * (Elf64_Chdr ch_size), each GNU .zdebug section's, and its
 * .gnu_debugdata (an xz image, decoded here to at most MW_ELF_XZ_MAX,
 * as libdwfl would) -- add up to at most MALLOCWATCH_ELF_MB MiB
 * (MW_ELF_MB, 256, by default) and MW_ELF_RATIO times the file's size.
 * A file that a user other than root can change (not root's, or
 * writable by group or others) is read from a sealed private copy
 * (memfd_create(2)) of at most that many MiB, the copy checked: the
 * owner cannot change it between the check and the reads. */
#define MW_ELF_MB 256
#define MW_ELF_RATIO 64
#define MW_ELF_XZ_MAX (64ULL << 20)

/* Check the file open on fd (taken, whatever the outcome) as above.
 * The descriptor to read (fd, or the copy), or -1 with a one-line
 * reason in err naming name, a path to show ("'NAME': ... not read"). */
int mw_elf_vet(int fd, const char *name, char *err, size_t errlen);

#endif /* MALLOCWATCH_MAPPED_H */
