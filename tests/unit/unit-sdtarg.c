/* unit-sdtarg.c - table-driven tests of the x86_64 SDT argument parser,
 * garbage included (in the style of bcc's tests/cc/test_usdt_args.cc).
 * Valid rows are real specs from glibc 2.36's libc.so.6 and from gcc's
 * <sys/sdt.h> output, plus every operand form the grammar allows. */
#include <stdio.h>
#include <string.h>

#include "probetab.h"
#include "sdtarg.h"

struct row {
	const char *spec;
	int ok;
	int size, is_signed;
	enum mw_arg_kind kind;
	enum mw_reg reg;	/* REG: the register; MEM: the base */
	int reg_bytes;
	enum mw_reg index;
	int scale;
	long long disp;		/* MEM disp, CONST value */
	const char *sym;
	const char *err;	/* a substring of the error, for !ok rows */
};

#define REG(s, sz, sg, r, b) { s, 1, sz, sg, MW_ARG_REG, r, b, MW_REG_NONE, 1, 0, "", NULL }
#define MEM(s, sz, sg, base, idx, sc, d, sy) \
	{ s, 1, sz, sg, MW_ARG_MEM, base, 0, idx, sc, d, sy, NULL }
#define CST(s, sz, sg, v) { s, 1, sz, sg, MW_ARG_CONST, MW_REG_NONE, 0, MW_REG_NONE, 1, v, "", NULL }
#define BAD(s, e) { s, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", e }

static const struct row rows[] = {
	REG("8@%rbx", 8, 0, MW_REG_RBX, 8),
	REG("-4@%esi", 4, 1, MW_REG_RSI, 4),
	REG("-8@%r15", 8, 1, MW_REG_R15, 8),
	REG("-4@%eax", 4, 1, MW_REG_RAX, 4),
	REG("2@%ax", 2, 0, MW_REG_RAX, 2),
	REG("1@%al", 1, 0, MW_REG_RAX, 1),
	REG("1@%ah", 1, 0, MW_REG_RAX, 1),
	REG("-1@%sil", 1, 1, MW_REG_RSI, 1),
	REG("4@%r8d", 4, 0, MW_REG_R8, 4),
	REG("2@%r12w", 2, 0, MW_REG_R12, 2),
	REG("1@%r13b", 1, 0, MW_REG_R13, 1),
	REG("%rdi", 8, 0, MW_REG_RDI, 8),
	MEM("8@32+mp_(%rip)", 8, 0, MW_REG_RIP, MW_REG_NONE, 1, 32, "mp_"),
	MEM("8@global_max_fast(%rip)", 8, 0, MW_REG_RIP, MW_REG_NONE, 1, 0, "global_max_fast"),
	MEM("-4@perturb_byte(%rip)", 4, 1, MW_REG_RIP, MW_REG_NONE, 1, 0, "perturb_byte"),
	MEM("-4@72+mp_(%rip)", 4, 1, MW_REG_RIP, MW_REG_NONE, 1, 72, "mp_"),
	MEM("8@mp_+16(%rip)", 8, 0, MW_REG_RIP, MW_REG_NONE, 1, 16, "mp_"),
	MEM("8@sym-8(%rip)", 8, 0, MW_REG_RIP, MW_REG_NONE, 1, -8, "sym"),
	MEM("8@-16(%rbp)", 8, 0, MW_REG_RBP, MW_REG_NONE, 1, -16, ""),
	MEM("-4@0x10(%rsp)", 4, 1, MW_REG_RSP, MW_REG_NONE, 1, 16, ""),
	MEM("8@(%rdi)", 8, 0, MW_REG_RDI, MW_REG_NONE, 1, 0, ""),
	MEM("4@(%rax,%rdx,4)", 4, 0, MW_REG_RAX, MW_REG_RDX, 4, 0, ""),
	MEM("8@8(%rax,%rcx,8)", 8, 0, MW_REG_RAX, MW_REG_RCX, 8, 8, ""),
	MEM("8@(,%rcx,8)", 8, 0, MW_REG_NONE, MW_REG_RCX, 8, 0, ""),
	MEM("8@(%rax,%rbx)", 8, 0, MW_REG_RAX, MW_REG_RBX, 1, 0, ""),
	CST("-4@$-1", 4, 1, -1),
	CST("8@$0x7fffffff", 8, 0, 0x7fffffff),
	CST("1@$5", 1, 0, 5),
	BAD("", "empty operand"),
	BAD("8@", "empty operand"),
	BAD("3@%rax", "size 3"),
	BAD("16@%rax", "size 16"),
	BAD("x@%rax", "bad size"),
	/* regressions: -INT64_MIN was negated (UB), and a size past int was
	 * cut to its low bits: 4294967298 read as a 2-byte operand */
	BAD("-9223372036854775808@%rax", "is not 1, 2, 4 or 8"),
	BAD("4294967298@%rax", "is not 1, 2, 4 or 8"),
	BAD("-4294967300@%rax", "is not 1, 2, 4 or 8"),
	BAD("99999999999999999999@%rax", "bad size"),
	BAD("8@%xyz", "unknown register '%xyz'"),
	BAD("8@%rip", "not a value register"),
	BAD("8@%rax)", "trailing text"),
	BAD("8@$", "bad constant"),
	BAD("8@$12abc", "bad constant"),
	BAD("8@(%rax,%rbx,3)", "bad scale"),
	BAD("8@(%rax,%rip,1)", "cannot be an index"),
	BAD("8@8(%rax", "expected ')'"),
	BAD("8@()", "without base"),
	BAD("8@sym(%rbx)", "relative to %rbx"),
	BAD("8@+(%rax)", "bad displacement"),
	BAD("8@rax", "bad displacement"),
};

static int check(const struct row *r)
{
	struct mw_sdt_arg a;
	char err[200] = "";
	int rc = mw_sdt_arg_parse(r->spec, &a, err, sizeof(err));

	if (!r->ok) {
		if (rc == 0) {
			printf("FAIL '%s': parsed, expected error '%s'\n", r->spec, r->err);
			return 1;
		}
		if (!strstr(err, r->err)) {
			printf("FAIL '%s': error '%s', expected '%s'\n", r->spec, err, r->err);
			return 1;
		}
		return 0;
	}
	if (rc < 0) {
		printf("FAIL '%s': %s\n", r->spec, err);
		return 1;
	}
	if (a.size != r->size || a.is_signed != r->is_signed || a.kind != r->kind ||
	    (r->kind == MW_ARG_REG && (a.reg != r->reg || a.reg_bytes != r->reg_bytes)) ||
	    (r->kind == MW_ARG_MEM && (a.base != r->reg || a.index != r->index ||
				       a.scale != r->scale || a.disp != r->disp ||
				       strcmp(a.sym, r->sym) != 0)) ||
	    (r->kind == MW_ARG_CONST && a.value != r->disp)) {
		printf("FAIL '%s': size %d signed %d kind %d reg %d/%d base %d index %d "
		       "scale %d disp %lld sym '%s' value %lld\n", r->spec, a.size, a.is_signed,
		       a.kind, a.reg, a.reg_bytes, a.base, a.index, a.scale, (long long)a.disp,
		       a.sym, (long long)a.value);
		return 1;
	}
	return 0;
}

int main(void)
{
	struct mw_sdt_arg args[MW_MAX_ARGS];
	char err[200];
	int failed = 0, n;
	size_t nrows = sizeof(rows) / sizeof(rows[0]);

	for (size_t i = 0; i < nrows; i++)
		failed += check(&rows[i]);
	/* whole argument strings */
	n = mw_sdt_args_parse("8@%rax 8@32+mp_(%rip)  -4@72+mp_(%rip)", args, MW_MAX_ARGS,
			      err, sizeof(err));
	if (n != 3 || args[2].disp != 72) {
		printf("FAIL whole string: n=%d %s\n", n, err);
		failed++;
	}
	n = mw_sdt_args_parse("", args, MW_MAX_ARGS, err, sizeof(err));
	if (n != 0) {
		printf("FAIL empty string: n=%d\n", n);
		failed++;
	}
	n = mw_sdt_args_parse("8@%rax 8@%bogus", args, MW_MAX_ARGS, err, sizeof(err));
	if (n != -1 || !strstr(err, "argument 2 '8@%bogus'")) {
		printf("FAIL error names the argument: n=%d '%s'\n", n, err);
		failed++;
	}
	n = mw_sdt_args_parse("1@%al 1@%al 1@%al", args, 2, err, sizeof(err));
	if (n != -1 || !strstr(err, "more than 2")) {
		printf("FAIL too many: n=%d '%s'\n", n, err);
		failed++;
	}
	printf("%zu rows + 4 strings: %d failed\n", nrows, failed);
	return failed ? 1 : 0;
}
