/* unit-elfvet.c - what mallocwatch lets libdw and libdwfl read of a
 * target's files (src/live/mapped.c, mw_elf_vet; src/lib/fsutil.c,
 * mw_open_regular), on ELF files written here with libelf: the bytes each
 * kind of compressed section claims (SHF_COMPRESSED's Elf64_Chdr, GNU
 * .zdebug's header, .gnu_debugdata's xz image decoded) against the cap and
 * the file's size; a file another user owns read from a sealed copy; a
 * FIFO, a device, a file without the mode asked never opened for reading;
 * no ELF file refused. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "mapped.h"
#include "unit.h"

struct sec {
	const char *name;
	uint64_t flags;
	const void *data;
	size_t size;
};

/* An ET_REL x86_64 ELF file at path holding secs (and .shstrtab). */
static void write_elf(const char *path, const struct sec *s, int n)
{
	char names[512] = "\0.shstrtab";
	size_t off = 11, at[8];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	Elf *e;
	Elf64_Ehdr *eh;
	Elf_Scn *scn;
	Elf_Data *d;
	Elf64_Shdr *sh;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	eh = elf64_newehdr(e);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_machine = EM_X86_64;
	eh->e_type = ET_REL;
	eh->e_version = EV_CURRENT;
	for (int i = 0; i < n; i++) {
		at[i] = off;
		off += (size_t)snprintf(names + off, sizeof(names) - off, "%s", s[i].name) + 1;
		scn = elf_newscn(e);
		d = elf_newdata(scn);
		d->d_buf = (void *)s[i].data;
		d->d_size = s[i].size;
		d->d_type = ELF_T_BYTE;
		d->d_align = 1;
		sh = elf64_getshdr(scn);
		sh->sh_type = SHT_PROGBITS;
		sh->sh_flags = s[i].flags;
		sh->sh_addralign = 1;
		sh->sh_name = (Elf64_Word)at[i];
	}
	scn = elf_newscn(e);
	d = elf_newdata(scn);
	d->d_buf = names;
	d->d_size = off;
	d->d_type = ELF_T_BYTE;
	sh = elf64_getshdr(scn);
	sh->sh_type = SHT_STRTAB;
	sh->sh_name = 1;
	eh->e_shstrndx = (Elf64_Half)elf_ndxscn(scn);
	CHECK(elf_update(e, ELF_C_WRITE) > 0, "%s: %s", path, elf_errmsg(-1));
	elf_end(e);
	close(fd);
}

/* mw_elf_vet of path: the fd (closed here) or -1, the reason in why */
static int vet(const char *path, char *why, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	why[0] = '\0';
	if (fd < 0)
		return -1;
	fd = mw_elf_vet(fd, path, why, len);
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : -1;
}

/* an xz image of n zero bytes, into a new buffer of *len bytes */
static uint8_t *xz_zeros(size_t n, size_t *len)
{
	uint8_t *in = calloc(1, n), *out = malloc(n / 100 + 4096);

	*len = 0;
	CHECK(lzma_easy_buffer_encode(0, LZMA_CHECK_CRC32, NULL, in, n, out, len,
				      n / 100 + 4096) == LZMA_OK);
	free(in);
	return out;
}

static void compressed(const char *dir)
{
	char path[256], why[512];
	static uint8_t pad[100000];	/* the file's size: 100 kB and more */
	uint8_t zd[12] = "ZLIB", chdr[24 + 16] = { 0 };
	size_t xl;
	uint8_t *xz;
	struct sec s[3] = { { ".pad", 0, pad, sizeof(pad) } };

	/* .zdebug_info claiming 1 GiB: over the cap */
	zd[4 + 4] = 0x40;	/* big-endian 0x40000000 */
	s[1] = (struct sec){ ".zdebug_info", 0, zd, sizeof(zd) };
	snprintf(path, sizeof(path), "%s/zdebug", dir);
	write_elf(path, s, 2);
	CHECK(vet(path, why, sizeof(why)) < 0 && strstr(why, "would decompress to more"), "%s", why);

	/* SHF_COMPRESSED claiming 4 MiB: within the cap, within 64 x 100 kB */
	chdr[0] = ELFCOMPRESS_ZLIB;
	chdr[8 + 2] = 0x40;	/* ch_size, little-endian 0x400000 */
	s[1] = (struct sec){ ".debug_info", SHF_COMPRESSED, chdr, sizeof(chdr) };
	snprintf(path, sizeof(path), "%s/chdr4", dir);
	write_elf(path, s, 2);
	CHECK(vet(path, why, sizeof(why)) == 0, "4 MiB claimed by 100 kB: %s", why);
	/* ... and 8 MiB: more than 64 times the file's size */
	chdr[8 + 2] = 0x80;
	snprintf(path, sizeof(path), "%s/chdr8", dir);
	write_elf(path, s, 2);
	CHECK(vet(path, why, sizeof(why)) < 0 && strstr(why, "64 times"), "%s", why);

	/* .gnu_debugdata: what the xz image decodes to counts, not its size */
	xz = xz_zeros(2 << 20, &xl);
	s[1] = (struct sec){ ".gnu_debugdata", 0, xz, xl };
	snprintf(path, sizeof(path), "%s/xz2", dir);
	write_elf(path, s, 2);
	CHECK(vet(path, why, sizeof(why)) == 0, "2 MiB of xz in 100 kB: %s", why);
	free(xz);
	xz = xz_zeros(16 << 20, &xl);
	CHECK(xl < 100000, "16 MiB of zeros in %zu bytes of xz", xl);
	s[1] = (struct sec){ ".gnu_debugdata", 0, xz, xl };
	snprintf(path, sizeof(path), "%s/xz16", dir);
	write_elf(path, s, 2);
	CHECK(vet(path, why, sizeof(why)) < 0 && strstr(why, "would decompress"), "%s", why);
	free(xz);
}

static void copies_and_kinds(const char *dir)
{
	char path[256], fifo[256], why[512], buf[4096];
	int fd, seals;
	struct stat a, b;

	/* a file of another user's: read from a sealed copy, the same bytes */
	snprintf(path, sizeof(path), "%s/theirs", dir);
	write_elf(path, (struct sec[]){ { ".text", 0, "abc", 3 } }, 1);
	CHECK(chown(path, 65534, 65534) == 0, "chown: %s", strerror(errno));
	fd = mw_elf_vet(open(path, O_RDONLY), path, why, sizeof(why));
	CHECK(fd >= 0, "%s", why);
	seals = fcntl(fd, F_GET_SEALS);
	CHECK(seals >= 0 && (seals & F_SEAL_WRITE) && (seals & F_SEAL_SHRINK), "seals %d", seals);
	CHECK(fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_size == b.st_size &&
	      a.st_ino != b.st_ino);
	CHECK(pread(fd, buf, 4, 0) == 4 && memcmp(buf, ELFMAG, 4) == 0);
	CHECK(write(fd, "x", 1) < 0 && errno == EPERM, "the copy could be written");
	close(fd);

	/* root's, written by root alone: itself */
	snprintf(path, sizeof(path), "%s/ours", dir);
	write_elf(path, (struct sec[]){ { ".text", 0, "abc", 3 } }, 1);
	fd = mw_elf_vet(open(path, O_RDONLY), path, why, sizeof(why));
	CHECK(fd >= 0 && fcntl(fd, F_GET_SEALS) < 0, "%s", why);
	close(fd);

	/* no ELF file */
	snprintf(path, sizeof(path), "%s/text", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(write(fd, "not ELF\n", 8) == 8);
	close(fd);
	CHECK(vet(path, why, sizeof(why)) < 0 && strstr(why, "is not an ELF file"), "%s", why);

	/* mw_open_regular: a FIFO (nothing writes it: an open would wait), a
	 * device, a file without the mode bits asked */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0644) == 0);
	errno = 0;
	CHECK(mw_open_regular(AT_FDCWD, fifo, 0, 0) < 0 && errno == EINVAL, "FIFO: %d", errno);
	CHECK(mw_open_regular(AT_FDCWD, "/dev/null", 0, 0) < 0 && errno == EINVAL);
	CHECK(chmod(path, 0600) == 0);
	CHECK(mw_open_regular(AT_FDCWD, path, 0, S_IROTH) < 0 && errno == EACCES);
	CHECK((fd = mw_open_regular(AT_FDCWD, path, 0, 0)) >= 0);
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	char dir[] = "/tmp/unit-elfvet.XXXXXX";

	if (!mkdtemp(dir))
		return 99;
	compressed(dir);
	if (geteuid() == 0)
		copies_and_kinds(dir);
	else
		printf("not root: the copies and kinds of files left out\n");
	if (!failed)
		printf("PASS\n");
	mw_remove_tree(dir);
	return failed ? 1 : 0;
}
