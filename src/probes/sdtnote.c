/* sdtnote.c - read .note.stapsdt and symbols with libelf; see sdtnote.h.
 *
 * The note layout, after the ELF note header (owner "stapsdt", type 3):
 *
 *	pc        4 or 8 bytes (ELFCLASS32/64), target byte order
 *	base      same size: link-time address of .stapsdt.base
 *	semaphore same size
 *	"provider\0name\0args\0"
 *
 * When the file was prelinked or otherwise moved, the real address of
 * .stapsdt.base differs from the recorded one and pc/semaphore are
 * shifted by the same amount (gdb stap-probe.c, libbpf usdt.c).
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdtnote.h"
#include "xalloc.h"

#define NT_STAPSDT 3

struct mw_elf {
	char *path;
	int fd;
	Elf *elf;
	struct mw_sdt_site *sites;
	size_t nsites, cap;
	size_t bad;
	const char *bad_why;
	int have_base;		/* .stapsdt.base section present */
	uint64_t base_addr;	/* its sh_addr */
	Dwfl *dwfl;		/* for separate debuginfo; made on first need */
	Dwfl_Module *mod;
	int dwfl_failed;
	char *image;		/* mw_elf_open_mem's copy; NULL for a file */
};

static int add_site(struct mw_elf *e, const struct mw_sdt_site *s)
{
	XGROW(e->sites, e->nsites, e->cap);
	e->sites[e->nsites++] = *s;
	return 0;
}

static void bad_note(struct mw_elf *e, const char *why)
{
	if (!e->bad++)
		e->bad_why = why;
}

/* Translate the three addresses from file to host byte order. */
static int read_addrs(struct mw_elf *e, const char *desc, uint64_t out[3])
{
	int cls = gelf_getclass(e->elf);
	Elf_Data dst, src;
	union { Elf64_Addr a64[3]; Elf32_Addr a32[3]; } buf;
	size_t n = cls == ELFCLASS32 ? sizeof(buf.a32) : sizeof(buf.a64);

	memset(&dst, 0, sizeof(dst));
	memset(&src, 0, sizeof(src));
	dst.d_buf = &buf;
	dst.d_size = n;
	dst.d_type = ELF_T_ADDR;
	dst.d_version = EV_CURRENT;
	src = dst;
	src.d_buf = (void *)desc;
	if (!gelf_xlatetom(e->elf, &dst, &src, elf_getident(e->elf, NULL)[EI_DATA]))
		return -1;
	for (int i = 0; i < 3; i++)
		out[i] = cls == ELFCLASS32 ? buf.a32[i] : buf.a64[i];
	return 0;
}

/* One note's descriptor: desc, desclen bytes.  Bad ones are counted. */
static void parse_note(struct mw_elf *e, const char *desc, size_t desclen)
{
	size_t asz = gelf_getclass(e->elf) == ELFCLASS32 ? 4 : 8;
	const char *p, *end = desc + desclen, *strs[3];
	uint64_t addr[3];
	struct mw_sdt_site s;

	if (desclen < 3 * asz + 3) {
		bad_note(e, "descriptor too short");
		return;
	}
	if (read_addrs(e, desc, addr) < 0) {
		bad_note(e, "cannot translate addresses");
		return;
	}
	p = desc + 3 * asz;
	for (int i = 0; i < 3; i++) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));

		if (!nul) {
			bad_note(e, "unterminated string");
			return;
		}
		strs[i] = p;
		p = nul + 1;
	}
	if (!*strs[1]) {
		bad_note(e, "empty probe name");
		return;
	}
	s.provider = strs[0];
	s.name = strs[1];
	s.args = strs[2];
	s.pc = addr[0];
	s.note_base = addr[1];
	s.semaphore = addr[2];
	if (e->have_base && addr[1]) {
		s.pc += e->base_addr - addr[1];
		if (s.semaphore)
			s.semaphore += e->base_addr - addr[1];
	}
	if (add_site(e, &s) < 0)
		bad_note(e, "out of memory");
}

static void scan_notes(struct mw_elf *e, Elf_Data *data)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *base = data->d_buf;

		if (nh.n_type == NT_STAPSDT && nh.n_namesz == sizeof("stapsdt") &&
		    memcmp(base + name_off, "stapsdt", sizeof("stapsdt")) == 0)
			parse_note(e, base + desc_off, nh.n_descsz);
		off = next;
	}
}

static Elf_Scn *find_section(Elf *elf, const char *want, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(scn, &sh))
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm && strcmp(nm, want) == 0) {
			*out = sh;
			return scn;
		}
	}
	return NULL;
}

/* SHT_NOTE section .note.stapsdt first; PT_NOTE segments when the file
 * has no section headers (e.g. a core-like or stripped-sections image). */
static void read_all_notes(struct mw_elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t phnum;

	if (find_section(e->elf, ".stapsdt.base", &sh)) {
		e->have_base = 1;
		e->base_addr = sh.sh_addr;
	}
	scn = find_section(e->elf, ".note.stapsdt", &sh);
	if (scn && sh.sh_type == SHT_NOTE) {
		Elf_Data *d = NULL;

		while ((d = elf_getdata(scn, d)))
			scan_notes(e, d);
		return;
	}
	if (elf_getphdrnum(e->elf, &phnum) != 0)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e->elf, (int64_t)ph.p_offset,
					 ph.p_filesz, ELF_T_NHDR);
		if (d)
			scan_notes(e, d);
	}
}

/* Does every section and segment with file contents lie inside the
 * file?  A truncated or damaged ELF fails here instead of looking like a
 * file without notes.  The reason into why. */
static int elf_intact(Elf *elf, uint64_t size, char *why, size_t len)
{
	size_t n, shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getphdrnum(elf, &n) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0) {
		snprintf(why, len, "%s", elf_errmsg(-1));
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_offset > size ||
		    ph.p_filesz > size - ph.p_offset) {
			snprintf(why, len, "program header %zu lies past the end of the file", i);
			return 0;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh)) {
			snprintf(why, len, "%s", elf_errmsg(-1));
			return 0;
		}
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)) {
			snprintf(why, len, "section %zu lies past the end of the file",
				 elf_ndxscn(scn));
			return 0;
		}
	}
	return 1;
}

/* The checks and reads common to a file and a memory image; e->elf set. */
static struct mw_elf *finish_open(struct mw_elf *e, uint64_t size, char *errbuf, size_t errlen)
{
	char why[160];

	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF) {
		snprintf(errbuf, errlen, "'%s' is not an ELF file%s%s", e->path,
			 e->elf ? "" : ": ", e->elf ? "" : elf_errmsg(-1));
		goto fail;
	}
	if (!elf_intact(e->elf, size, why, sizeof(why))) {
		snprintf(errbuf, errlen, "'%s' is corrupt or truncated: %s", e->path, why);
		goto fail;
	}
	read_all_notes(e);
	return e;
fail:
	mw_elf_close(e);
	return NULL;
}

struct mw_elf *mw_elf_open(const char *path, char *errbuf, size_t errlen)
{
	struct mw_elf *e = xcalloc(1, sizeof(*e));
	struct stat sb;

	elf_version(EV_CURRENT);
	e->path = xstrdup(path);
	e->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);	/* never wait on a FIFO */
	if (e->fd < 0) {
		snprintf(errbuf, errlen, "cannot open '%s': %s", path, strerror(errno));
		mw_elf_close(e);
		return NULL;
	}
	if (fstat(e->fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(errbuf, errlen, "'%s' is not a regular file", path);
		mw_elf_close(e);
		return NULL;
	}
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	return finish_open(e, (uint64_t)sb.st_size, errbuf, errlen);
}

struct mw_elf *mw_elf_open_mem(const void *image, size_t size, const char *name,
			       char *errbuf, size_t errlen)
{
	struct mw_elf *e = xcalloc(1, sizeof(*e));

	elf_version(EV_CURRENT);
	e->fd = -1;
	e->path = xstrdup(name);
	e->image = xmalloc(size);
	memcpy(e->image, image, size);
	e->dwfl_failed = 1;	/* no file for libdwfl to look beside */
	e->elf = elf_memory(e->image, size);
	return finish_open(e, size, errbuf, errlen);
}

size_t mw_elf_nsites(const struct mw_elf *e)
{
	return e->nsites;
}

const struct mw_sdt_site *mw_elf_site(const struct mw_elf *e, size_t i)
{
	return i < e->nsites ? &e->sites[i] : NULL;
}

size_t mw_elf_bad_notes(const struct mw_elf *e, const char **why)
{
	if (why)
		*why = e->bad_why;
	return e->bad;
}

int mw_elf_machine(const struct mw_elf *e)
{
	GElf_Ehdr eh;

	return gelf_getehdr(e->elf, &eh) ? eh.e_machine : EM_NONE;
}

int mw_elf_file_offset(const struct mw_elf *e, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(e->elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

const char *mw_elf_path(const struct mw_elf *e)
{
	return e->path;
}

static int lookup_in(Elf *elf, Elf64_Word type, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			nm = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (nm && strcmp(nm, name) == 0) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return -1;
}

/* The separate debuginfo of a stripped file, found by libdwfl's standard
 * search: build-id (DEBUGDIR/.build-id/xx/yyyy.debug) and .gnu_debuglink
 * (beside the file, in .debug/, under DEBUGDIR), where DEBUGDIR is
 * /usr/lib/debug, or the colon-separated list in $MW_DEBUGINFO_PATH
 * (elfutils' debuginfo_path syntax). */
static Dwfl_Module *debuginfo(struct mw_elf *e)
{
	static char *path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &path,
	};

	if (e->mod || e->dwfl_failed)
		return e->mod;
	path = getenv("MW_DEBUGINFO_PATH");
	e->dwfl = dwfl_begin(&cb);
	if (e->dwfl) {
		dwfl_report_begin(e->dwfl);
		e->mod = dwfl_report_offline(e->dwfl, "target", e->path, -1);
		dwfl_report_end(e->dwfl, NULL, NULL);
	}
	if (!e->mod || dwfl_module_getsymtab(e->mod) <= 0) {
		e->dwfl_failed = 1;
		e->mod = NULL;
		return NULL;
	}
	return e->mod;
}

static int lookup_debuginfo(struct mw_elf *e, const char *name, uint64_t *value)
{
	Dwfl_Module *m = debuginfo(e);
	int n = m ? dwfl_module_getsymtab(m) : -1;

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(m, i, &sym, &addr, NULL, NULL, NULL);

		if (nm && sym.st_shndx != SHN_UNDEF && strcmp(nm, name) == 0) {
			*value = sym.st_value;	/* link-time, not adjusted */
			return 0;
		}
	}
	return -1;
}

int mw_elf_symbol(const struct mw_elf *e, const char *name, uint64_t *value)
{
	if (lookup_in(e->elf, SHT_SYMTAB, name, value) == 0)
		return 0;
	if (lookup_in(e->elf, SHT_DYNSYM, name, value) == 0)
		return 0;
	/* local symbols (mp_, main_arena) of a stripped file: its debuginfo */
	return lookup_debuginfo((struct mw_elf *)e, name, value);
}

int mw_elf_has_symtab(const struct mw_elf *e)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return 1;
	}
	return 0;
}

void mw_elf_close(struct mw_elf *e)
{
	if (!e)
		return;
	if (e->dwfl)
		dwfl_end(e->dwfl);
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->sites);
	free(e->path);
	free(e->image);
	free(e);
}

int mw_elf_glibc_minor(const struct mw_elf *e)
{
	return mw_glibc_minor_of(e->elf);
}

int mw_glibc_minor_of(Elf *elf)
{
	Elf_Scn *scn = NULL;
	int best = 0;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off = 0;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_GNU_verdef ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_info; k++) {
			GElf_Verdef vd;
			GElf_Verdaux va;
			const char *nm;
			int minor;

			if (!gelf_getverdef(d, (int)off, &vd) ||
			    !gelf_getverdaux(d, (int)(off + vd.vd_aux), &va))
				break;
			nm = elf_strptr(elf, sh.sh_link, va.vda_name);
			if (nm && sscanf(nm, "GLIBC_2.%d", &minor) == 1 && minor > best)
				best = minor;
			if (!vd.vd_next)
				break;
			off += vd.vd_next;
		}
	}
	return best;
}
