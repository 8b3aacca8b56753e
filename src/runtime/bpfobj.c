/* bpfobj.c - stapbpf's internal map made an array in stap's bpf object
 * (bpfobj.h).
 *
 * What stap 4.8 writes for a script (llvm-objdump -t, and the "maps"
 * section read as five u32 a map):
 *
 *   0000000000000000 l     O maps	0000000000000014 map.0
 *   0000000000000014 l     O maps	0000000000000014 map.1
 *   ...
 *   map.0 = (1, 4, 8, 2, 0)	BPF_MAP_TYPE_HASH, key 4, value 8, 2 entries
 *
 * and what each handler begins with (llvm-objdump -d):
 *
 *   *(u32 *)(r10 - 4) = 0; r1 = map.0; r2 = r10 - 4; call 1
 *   if r0 == 0 goto out; if *(u64 *)r0 == 1 goto out	(exit() called)
 *   *(u32 *)(r10 - 4) = 1; r1 = map.0; r2 = r10 - 4; call 1
 *   if r0 == 0 goto out; if *(u64 *)r0 s> 0 goto out	(an error seen)
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpfobj.h"

#define MAP_DEF_SIZE 20		/* struct bpf_map_def: five u32 */
#define INTERNAL_MAX 16		/* stapbpf's internal globals, at most */

/* u32 number i of a map definition, the object being little-endian */
static uint32_t def_u32(const unsigned char *def, int i)
{
	const unsigned char *p = def + 4 * i;

	return p[0] | p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Is the symbol at offset 0 of section maps_ndx in e's symbol table
 * "map.0"? */
static int named_map0(Elf *e, size_t maps_ndx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)) || sh.sh_entsize == 0)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx != maps_ndx ||
			    sym.st_value != 0)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && strcmp(name, "map.0") == 0)
				return 1;
		}
	}
	return 0;
}

/* The "maps" section's data, its index in *ndx; NULL when there is none. */
static Elf_Data *maps_data(Elf *e, size_t *ndx)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)) ||
		    strcmp(name, "maps") != 0)
			continue;
		*ndx = elf_ndxscn(scn);
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* stapbpf's internal map made an array (bpfobj.h). */
int mw_bpfobj_tune(const char *path, char *err, size_t errlen)
{
	int fd, ret = -1;
	Elf *e = NULL;
	GElf_Ehdr eh;
	Elf_Data *d;
	unsigned char *def;
	size_t ndx = 0;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	e = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!e) {
		snprintf(err, errlen, "cannot read '%s': %s", path, elf_errmsg(-1));
		goto cleanup;
	}
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		snprintf(err, errlen, "'%s' is not an ELF object", path);
		goto cleanup;
	}
	ret = 0;
	if (eh.e_machine != EM_BPF || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    !(d = maps_data(e, &ndx)) || !d->d_buf || d->d_size < MAP_DEF_SIZE ||
	    !named_map0(e, ndx))
		goto cleanup;
	def = d->d_buf;
	if (def_u32(def, 0) != BPF_MAP_TYPE_HASH || def_u32(def, 1) != 4 ||
	    def_u32(def, 2) != 8 || def_u32(def, 3) == 0 || def_u32(def, 3) > INTERNAL_MAX)
		goto cleanup;
	def[0] = BPF_MAP_TYPE_ARRAY;	/* the low byte; the others are 0 */
	/* rewritten where it is: libelf lays nothing out anew */
	elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
	elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
	if (elf_update(e, ELF_C_WRITE) < 0) {
		snprintf(err, errlen, "cannot rewrite '%s': %s", path, elf_errmsg(-1));
		ret = -1;
		goto cleanup;
	}
	ret = 1;
cleanup:
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}
