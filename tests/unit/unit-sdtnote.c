/* unit-sdtnote.c - the SDT note reader on ELF fixtures (run from the top
 * of the tree, after `make check` built build/tests/fixtures):
 *   badnotes.o   good and malformed notes, a .stapsdt.base correction
 *   libfix.so    real notes made by <sys/sdt.h>, a local symbol */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sdtnote.h"
#include "unit.h"

static void bad_notes(void)
{
	char err[256];
	struct mw_elf *e = mw_elf_open("build/tests/fixtures/badnotes.o", err, sizeof(err));
	const struct mw_sdt_site *s;
	const char *why = NULL;

	CHECK(e, "open: %s", err);
	if (!e)
		return;
	/* good (1) and good (7); 2, 3, 4 malformed; 5 and 6 not ours */
	CHECK(mw_elf_nsites(e) == 2, "%zu sites, expected 2", mw_elf_nsites(e));
	CHECK(mw_elf_bad_notes(e, &why) == 3, "%zu bad notes, expected 3",
	       mw_elf_bad_notes(e, NULL));
	CHECK(why && strcmp(why, "descriptor too short") == 0, "first reason '%s'", why);
	s = mw_elf_site(e, 0);
	if (s) {
		CHECK(strcmp(s->provider, "libc") == 0 && strcmp(s->name, "memory_good") == 0,
		       "site 0 is %s:%s", s->provider, s->name);
		CHECK(strcmp(s->args, "8@%rdi -4@%esi") == 0, "args '%s'", s->args);
		/* .stapsdt.base is at 0 here, the note says 0x100 */
		CHECK(s->pc == 0x1000, "pc 0x%" PRIx64 ", expected 0x1000", s->pc);
		CHECK(s->semaphore == 0x2000, "semaphore 0x%" PRIx64, s->semaphore);
		CHECK(s->note_base == 0x100, "note base 0x%" PRIx64, s->note_base);
	}
	s = mw_elf_site(e, 1);
	if (s)
		CHECK(strcmp(s->provider, "libm") == 0 && s->args[0] == '\0' && !s->semaphore,
		       "site 1 is %s:%s '%s'", s->provider, s->name, s->args);
	CHECK(mw_elf_site(e, 2) == NULL, "site 2 exists");
	mw_elf_close(e);
}

static void real_notes(void)
{
	char err[256];
	struct mw_elf *e = mw_elf_open("build/tests/fixtures/libfix.so", err, sizeof(err));
	uint64_t v;
	int two = 0;

	CHECK(e, "open: %s", err);
	if (!e)
		return;
	CHECK(mw_elf_nsites(e) == 7, "%zu sites, expected 7", mw_elf_nsites(e));
	CHECK(mw_elf_bad_notes(e, NULL) == 0, "bad notes in a good file");
	for (size_t i = 0; i < mw_elf_nsites(e); i++)
		two += strcmp(mw_elf_site(e, i)->name, "memory_fixture_two") == 0;
	CHECK(two == 2, "memory_fixture_two has %d sites", two);
	CHECK(mw_elf_symbol(e, "fix_global", &v) == 0 && v, "local symbol fix_global");
	CHECK(mw_elf_symbol(e, "fix_regs", &v) == 0, "global symbol fix_regs");
	CHECK(mw_elf_symbol(e, "no_such_symbol", &v) < 0, "missing symbol found");
	CHECK(mw_elf_has_symtab(e), "no .symtab");
	mw_elf_close(e);
}

static void errors(void)
{
	char err[256];
	struct mw_elf *e = mw_elf_open("/nonexistent/libc.so.6", err, sizeof(err));

	CHECK(!e && strcmp(err, "cannot open '/nonexistent/libc.so.6': No such file or directory") == 0,
	       "error '%s'", err);
	e = mw_elf_open("tests/fixtures/libfix.S", err, sizeof(err));
	CHECK(!e && strstr(err, "is not an ELF file"), "error '%s'", err);
	mw_elf_close(e);
}

int main(void)
{
	bad_notes();
	real_notes();
	errors();
	printf("%s\n", failed ? "some checks failed" : "all checks passed");
	return failed ? 1 : 0;
}
