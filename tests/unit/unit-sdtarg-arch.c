/* unit-sdtarg-arch.c - argument specs of i386, aarch64, ppc64 and s390x,
 * as table rows.  Where the rows come from:
 *   aarch64, ppc64  bcc tests/cc/test_usdt_args.cc, the argument strings
 *                   its per-arch sections parse (taken from real binaries
 *                   by bcc's Python implementation), and its parse-failure
 *                   cases "4@[x32,200]" and "4@-12(42)";
 *   aarch64, s390x  libbpf src/usdt.c, the examples in parse_usdt_arg;
 *   i386            AT&T operands of gcc -m32 output (ebp frames).
 * No libc of these architectures with SDT notes is available on this
 * machine; these rows are what such notes contain, not notes read here. */
#include <stdio.h>
#include <string.h>

#include "sdtarg.h"

#define MW_MAX_ARGS_TEST 12

struct row {
	enum mw_arch arch;
	const char *spec;
	int ok, size, is_signed;
	enum mw_arg_kind kind;
	const char *reg;	/* REG: the register; MEM: the base */
	long long val;		/* MEM: offset; CONST: value */
	const char *err;
};

#define R(a, s, sz, sg, r) { a, s, 1, sz, sg, MW_ARG_REG, r, 0, NULL }
#define M(a, s, sz, sg, r, o) { a, s, 1, sz, sg, MW_ARG_MEM, r, o, NULL }
#define C(a, s, sz, sg, v) { a, s, 1, sz, sg, MW_ARG_CONST, "", v, NULL }
#define BAD(a, s, e) { a, s, 0, 0, 0, 0, "", 0, e }
#define A64 MW_ARCH_AARCH64
#define PPC MW_ARCH_PPC64
#define S390 MW_ARCH_S390X
#define I386 MW_ARCH_I386

static const struct row rows[] = {
	/* bcc: "-1@x0 4@5 8@[x12] -4@[x31,-40]" */
	R(A64, "-1@x0", 1, 1, "x0"), C(A64, "4@5", 4, 0, 5),
	M(A64, "8@[x12]", 8, 0, "x12", 0),
	/* libbpf: -4@[sp, 96], -4@[sp], 4@5, -8@x4 */
	M(A64, "-4@[sp, 96]", 4, 1, "sp", 96), M(A64, "-4@[sp]", 4, 1, "sp", 0),
	R(A64, "-8@x4", 8, 1, "x4"), R(A64, "-4@w19", 4, 1, "x19"),
	M(A64, "8@[x19, -16]", 8, 0, "x19", -16),
	BAD(A64, "4@[x32,200]", "unknown register 'x32'"),
	/* bcc accepts x31; libbpf (and AArch64 assembly, where that encoding
	 * is sp or xzr) does not: we follow libbpf */
	BAD(A64, "-4@[x31,-40]", "unknown register 'x31'"),
	BAD(A64, "8@[x1, 8", "expected ']'"), BAD(A64, "8@%rax", "unknown register"),
	BAD(A64, "8@x1 junk", "trailing text"), BAD(A64, "3@x1", "size 3"),
	/* bcc: the powerpc64 string, all 30 operands */
	R(PPC, "-4@0", 4, 1, "r0"), R(PPC, "8@%r0", 8, 0, "r0"), C(PPC, "8@i0", 8, 0, 0),
	M(PPC, "4@0(%r0)", 4, 0, "r0", 0), M(PPC, "-2@0(0)", 2, 1, "r0", 0),
	R(PPC, "1@0", 1, 0, "r0"), R(PPC, "-2@%r3", 2, 1, "r3"), C(PPC, "-8@i9", 8, 1, 9),
	M(PPC, "-1@0(%r4)", 1, 1, "r4", 0), M(PPC, "-4@16(6)", 4, 1, "r6", 16),
	R(PPC, "2@7", 2, 0, "r7"), R(PPC, "4@%r11", 4, 0, "r11"), C(PPC, "4@i-67", 4, 0, -67),
	M(PPC, "8@-16(%r17)", 8, 0, "r17", -16), M(PPC, "1@-52(11)", 1, 0, "r11", -52),
	R(PPC, "-8@13", 8, 1, "r13"), R(PPC, "-8@%r25", 8, 1, "r25"), C(PPC, "2@i-11", 2, 0, -11),
	M(PPC, "-2@14(%r26)", 2, 1, "r26", 14), M(PPC, "-8@-32(24)", 8, 1, "r24", -32),
	R(PPC, "4@29", 4, 0, "r29"), R(PPC, "2@%r17", 2, 0, "r17"), C(PPC, "-8@i-693", 8, 1, -693),
	M(PPC, "-1@-23(%r31)", 1, 1, "r31", -23), M(PPC, "4@28(30)", 4, 0, "r30", 28),
	R(PPC, "-2@31", 2, 1, "r31"), R(PPC, "-4@%r30", 4, 1, "r30"), C(PPC, "2@i1097", 2, 0, 1097),
	M(PPC, "4@108(%r30)", 4, 0, "r30", 108), M(PPC, "-2@-4(31)", 2, 1, "r31", -4),
	BAD(PPC, "4@-12(42)", "unknown register '42'"), BAD(PPC, "4@32", "unknown register"),
	BAD(PPC, "4@i", "bad constant"), BAD(PPC, "4@8(%r3", "expected ')'"),
	/* libbpf: -2@-28(%r15), -8@%r0, 4@71 */
	M(S390, "-2@-28(%r15)", 2, 1, "r15", -28), R(S390, "-8@%r0", 8, 1, "r0"),
	C(S390, "4@71", 4, 0, 71), R(S390, "8@%r2", 8, 0, "r2"),
	M(S390, "8@160(%r15)", 8, 0, "r15", 160),
	BAD(S390, "8@%r16", "unknown register '%r16'"), BAD(S390, "8@8(15)", "expected %rN"),
	BAD(S390, "8@%f0", "unknown register"),
	/* i386 */
	R(I386, "-4@%eax", 4, 1, "eax"), M(I386, "4@8(%ebp)", 4, 0, "ebp", 8),
	M(I386, "-4@-12(%ebp)", 4, 1, "ebp", -12), C(I386, "4@$0", 4, 0, 0),
	R(I386, "2@%si", 2, 0, "esi"), R(I386, "1@%dl", 1, 0, "edx"),
	BAD(I386, "8@%rax", "not an i386 register"), BAD(I386, "4@%r8d", "not an i386 register"),
	BAD(I386, "4@8(%rip)", "not an i386 register"),
};

int main(void)
{
	int failed = 0;
	size_t n = sizeof(rows) / sizeof(rows[0]);
	struct mw_sdt_arg args[MW_MAX_ARGS_TEST];
	char err[200];
	int k = mw_sdt_args_parse_arch(MW_ARCH_AARCH64, "8@x20 -4@[sp, 96] 8@[x1,8]", args,
				       MW_MAX_ARGS_TEST, err, sizeof(err));

	if (k != 3 || args[1].disp != 96 || strcmp(args[2].basename, "x1") != 0) {
		printf("FAIL aarch64 argument string with '[sp, 96]': %d %s\n", k, err);
		failed++;
	}

	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		struct mw_sdt_arg a;
		char err[200] = "";
		int rc = mw_sdt_arg_parse_arch(r->arch, r->spec, &a, err, sizeof(err));
		const char *reg = a.kind == MW_ARG_MEM ? a.basename : a.regname;
		long long val = a.kind == MW_ARG_CONST ? (long long)a.value : (long long)a.disp;

		if (!r->ok) {
			if (rc == 0 || !strstr(err, r->err)) {
				printf("FAIL %s '%s': %s, expected error '%s'\n", mw_arch_name(r->arch),
				       r->spec, rc ? err : "parsed", r->err);
				failed++;
			}
			continue;
		}
		if (rc < 0 || a.size != r->size || a.is_signed != r->is_signed ||
		    a.kind != r->kind || strcmp(reg, r->reg) != 0 || val != r->val) {
			printf("FAIL %s '%s': rc %d '%s' size %d signed %d kind %d reg '%s' val %lld\n",
			       mw_arch_name(r->arch), r->spec, rc, err, a.size, a.is_signed, a.kind,
			       reg, val);
			failed++;
		}
	}
	printf("%zu rows + 1 string: %d failed\n", n, failed);
	return failed ? 1 : 0;
}
