/* fuzz-sdtnote.c - libFuzzer harness for the SDT note reader
 * (src/probes/sdtnote.c) on ELF images in memory: notes, the .stapsdt.base
 * correction, PT_NOTE fallback, symbol lookups.  Seeds: corpus-sdtnote/
 * (the test fixtures, whole and truncated). */
#include <stdint.h>
#include <string.h>

#include "sdtnote.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct mw_elf *e = mw_elf_open_mem(data, size, "fuzz", err, sizeof(err));
	uint64_t v;
	size_t sum = 0;

	if (!e)
		return 0;
	for (size_t i = 0; i < mw_elf_nsites(e); i++) {
		const struct mw_sdt_site *s = mw_elf_site(e, i);

		sum += strlen(s->provider) + strlen(s->name) + strlen(s->args);
	}
	mw_elf_symbol(e, "main_arena", &v);
	mw_elf_bad_notes(e, NULL);
	mw_elf_close(e);
	return (int)(sum & 0);
}
