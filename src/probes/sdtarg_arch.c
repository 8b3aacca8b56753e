/* sdtarg_arch.c - SDT argument specs of the other architectures.
 *
 * The syntaxes, as gcc's asm operands print them (libbpf src/usdt.c,
 * parse_usdt_arg per arch; bcc tests/cc/test_usdt_args.cc):
 *
 *   i386     AT&T like x86_64, 32/16/8-bit registers: -4@8(%ebp), 4@$0
 *   aarch64  register x0-x30, w0-w30 (32-bit), sp; memory [REG] or
 *            [REG, OFF] (spaces optional); constant: a bare number.
 *            -1@x0  4@5  8@[x12]  -4@[x31,-40]  -4@[sp, 96]
 *   ppc64    register %rN or a bare N (0-31); memory OFF(%rN) or OFF(N);
 *            constant iN.   8@%r0  -4@0  4@-12(%r1)  -4@16(6)  8@i-693
 *   s390x    register %rN (0-15); memory OFF(%rN); constant: a bare number.
 *            -8@%r0  -2@-28(%r15)  4@71
 *
 * Every failure names what was wrong, as the x86_64 parser does.
 *
 * Also the dispatch by architecture (the x86_64 parser is sdtarg.c's)
 * and the argument lists built on it, so the dependency runs one way:
 * here -> sdtarg.c.
 */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdtarg.h"

enum mw_arch mw_arch_of_machine(int m)
{
	switch (m) {
	case EM_X86_64: return MW_ARCH_X86_64;
	case EM_386: return MW_ARCH_I386;
	case EM_AARCH64: return MW_ARCH_AARCH64;
	case EM_PPC64: return MW_ARCH_PPC64;
	case EM_S390: return MW_ARCH_S390X;
	default: return MW_ARCH_UNKNOWN;
	}
}

const char *mw_arch_name(enum mw_arch arch)
{
	static const char *const names[] = { "x86_64", "i386", "aarch64", "ppc64", "s390x",
					     "unknown" };

	return names[arch <= MW_ARCH_UNKNOWN ? arch : MW_ARCH_UNKNOWN];
}

static int integer(const char **pp, int64_t *v)
{
	return mw_sdt_parse_int(pp, 10, v);
}

static int trailing(const char *p, char *err, size_t errlen)
{
	while (*p == ' ')
		p++;
	if (*p) {
		snprintf(err, errlen, "trailing text '%s'", p);
		return -1;
	}
	return 0;
}

/* aarch64 register: x0-x30, w0-w30, sp. */
static int a64_reg(const char **pp, char *name, int *bytes, char *err, size_t errlen)
{
	const char *p = *pp;
	int64_t n;

	if (strncmp(p, "sp", 2) == 0 && !isalnum((unsigned char)p[2])) {
		strcpy(name, "sp");
		*bytes = 8;
		*pp = p + 2;
		return 0;
	}
	if ((*p == 'x' || *p == 'w') && isdigit((unsigned char)p[1])) {
		const char *q = p + 1;

		if (integer(&q, &n) == 0 && n >= 0 && n <= 30) {
			snprintf(name, 8, "x%d", (int)n);
			*bytes = *p == 'x' ? 8 : 4;
			*pp = q;
			return 0;
		}
	}
	snprintf(err, errlen, "unknown register '%.*s'", (int)strcspn(p, ",] "), p);
	return -1;
}

static int parse_aarch64(const char *spec, struct mw_sdt_arg *a, char *err, size_t errlen)
{
	const char *p;

	if (mw_sdt_size_prefix(spec, a, &p, err, errlen) < 0)
		return -1;
	if (*p == '[') {
		int bytes;

		a->kind = MW_ARG_MEM;
		p++;
		while (*p == ' ')
			p++;
		if (a64_reg(&p, a->basename, &bytes, err, errlen) < 0)
			return -1;
		while (*p == ' ')
			p++;
		if (*p == ',') {
			p++;
			while (*p == ' ')
				p++;
			if (integer(&p, &a->disp) < 0) {
				snprintf(err, errlen, "bad offset at '%s'", p);
				return -1;
			}
			while (*p == ' ')
				p++;
		}
		if (*p != ']') {
			snprintf(err, errlen, "expected ']' at '%s'", p);
			return -1;
		}
		return trailing(p + 1, err, errlen);
	}
	if (*p == '-' || isdigit((unsigned char)*p)) {
		a->kind = MW_ARG_CONST;
		if (integer(&p, &a->value) < 0) {
			snprintf(err, errlen, "bad constant '%s'", p);
			return -1;
		}
		return trailing(p, err, errlen);
	}
	a->kind = MW_ARG_REG;
	if (a64_reg(&p, a->regname, &a->reg_bytes, err, errlen) < 0)
		return -1;
	return trailing(p, err, errlen);
}

/* A general-purpose register number with an optional prefix ("%r"); 0 or
 * -1.  max is the highest number. */
static int gpr(const char **pp, const char *prefix, int max, char *name, char *err,
	       size_t errlen)
{
	const char *p = *pp;
	int64_t n;

	if (*prefix && strncmp(p, prefix, strlen(prefix)) == 0)
		p += strlen(prefix);
	else if (*prefix && prefix[0] == '%' && *p == '%') {
		snprintf(err, errlen, "unknown register '%.*s'", (int)strcspn(p, ") "), p);
		return -1;
	}
	if (!isdigit((unsigned char)*p) || integer(&p, &n) < 0 || n > max) {
		snprintf(err, errlen, "unknown register '%.*s'", (int)strcspn(*pp, ") "), *pp);
		return -1;
	}
	snprintf(name, 8, "r%d", (int)n);
	*pp = p;
	return 0;
}

/* OFF(REG) for ppc64 (REG: %rN or N) and s390x (REG: %rN). */
static int off_reg(const char *p, struct mw_sdt_arg *a, int bare_ok, int max, char *err,
		   size_t errlen)
{
	a->kind = MW_ARG_MEM;
	if (integer(&p, &a->disp) < 0 || *p != '(') {
		snprintf(err, errlen, "bad memory operand");
		return -1;
	}
	p++;
	if (*p != '%' && !bare_ok) {
		snprintf(err, errlen, "expected %%rN at '%s'", p);
		return -1;
	}
	if (gpr(&p, "%r", max, a->basename, err, errlen) < 0)
		return -1;
	if (*p != ')') {
		snprintf(err, errlen, "expected ')' at '%s'", p);
		return -1;
	}
	return trailing(p + 1, err, errlen);
}

static int parse_ppc64(const char *spec, struct mw_sdt_arg *a, char *err, size_t errlen)
{
	const char *p;

	if (mw_sdt_size_prefix(spec, a, &p, err, errlen) < 0)
		return -1;
	if (*p == 'i') {
		p++;
		a->kind = MW_ARG_CONST;
		if (integer(&p, &a->value) < 0) {
			snprintf(err, errlen, "bad constant '%s'", spec);
			return -1;
		}
		return trailing(p, err, errlen);
	}
	if (strchr(p, '('))
		return off_reg(p, a, 1, 31, err, errlen);
	a->kind = MW_ARG_REG;	/* %rN, or a bare N: a register, not a constant */
	a->reg_bytes = 8;
	if (gpr(&p, "%r", 31, a->regname, err, errlen) < 0)
		return -1;
	return trailing(p, err, errlen);
}

static int parse_s390x(const char *spec, struct mw_sdt_arg *a, char *err, size_t errlen)
{
	const char *p;

	if (mw_sdt_size_prefix(spec, a, &p, err, errlen) < 0)
		return -1;
	if (*p == '%') {
		a->kind = MW_ARG_REG;
		a->reg_bytes = 8;
		if (gpr(&p, "%r", 15, a->regname, err, errlen) < 0)
			return -1;
		return trailing(p, err, errlen);
	}
	if (strchr(p, '('))
		return off_reg(p, a, 0, 15, err, errlen);
	a->kind = MW_ARG_CONST;
	if (integer(&p, &a->value) < 0) {
		snprintf(err, errlen, "bad constant '%s'", p);
		return -1;
	}
	return trailing(p, err, errlen);
}

/* i386: the AT&T parser, then no 64-bit-only register. */
static int parse_i386(const char *spec, struct mw_sdt_arg *a, char *err, size_t errlen)
{
	enum mw_reg used[3];

	if (mw_sdt_arg_parse(spec, a, err, errlen) < 0)
		return -1;
	used[0] = a->kind == MW_ARG_REG ? a->reg : MW_REG_NONE;
	used[1] = a->kind == MW_ARG_MEM ? a->base : MW_REG_NONE;
	used[2] = a->kind == MW_ARG_MEM ? a->index : MW_REG_NONE;
	for (int i = 0; i < 3; i++)
		if (used[i] == MW_REG_RIP || used[i] >= MW_REG_R8 ||
		    (i == 0 && used[i] != MW_REG_NONE && a->reg_bytes == 8)) {
			snprintf(err, errlen, "%s is not an i386 register",
				 i ? (i == 1 ? a->basename : a->indexname) : a->regname);
			return -1;
		}
	/* i386 names: eax, not rax */
	for (char *n = a->regname; n; n = n == a->regname ? a->basename :
					 n == a->basename ? a->indexname : NULL)
		if (n[0] == 'r' && strlen(n) == 3)
			n[0] = 'e';
	return 0;
}

int mw_sdt_arg_parse_arch(enum mw_arch arch, const char *spec, struct mw_sdt_arg *a,
			  char *err, size_t errlen)
{
	switch (arch) {
	case MW_ARCH_X86_64: return mw_sdt_arg_parse(spec, a, err, errlen);
	case MW_ARCH_I386: return parse_i386(spec, a, err, errlen);
	case MW_ARCH_AARCH64: return parse_aarch64(spec, a, err, errlen);
	case MW_ARCH_PPC64: return parse_ppc64(spec, a, err, errlen);
	case MW_ARCH_S390X: return parse_s390x(spec, a, err, errlen);
	default:
		snprintf(err, errlen, "no argument parser for this architecture");
		return -1;
	}
}

/* The length of the spec at p: up to a blank outside brackets (aarch64
 * writes "-4@[sp, 96]"). */
static size_t spec_len(const char *p)
{
	size_t n = 0;
	int depth = 0;

	for (; p[n] && (depth || (p[n] != ' ' && p[n] != '\t')); n++)
		depth += p[n] == '[' ? 1 : p[n] == ']' && depth ? -1 : 0;
	return n;
}

int mw_sdt_args_parse(const char *args, struct mw_sdt_arg *out, int max,
		      char *err, size_t errlen)
{
	return mw_sdt_args_parse_arch(MW_ARCH_X86_64, args, out, max, err, errlen);
}

int mw_sdt_args_parse_arch(enum mw_arch arch, const char *args, struct mw_sdt_arg *out,
			   int max, char *err, size_t errlen)
{
	const char *p = args;
	int n = 0;

	for (;;) {
		char spec[128], why[160];
		size_t len;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			return n;
		len = spec_len(p);
		if (n == max) {
			snprintf(err, errlen, "more than %d arguments", max);
			return -1;
		}
		if (len >= sizeof(spec)) {
			snprintf(err, errlen, "argument %d: spec too long", n + 1);
			return -1;
		}
		memcpy(spec, p, len);
		spec[len] = '\0';
		if (mw_sdt_arg_parse_arch(arch, spec, &out[n], why, sizeof(why)) < 0) {
			snprintf(err, errlen, "argument %d '%s': %s", n + 1, spec, why);
			return -1;
		}
		n++;
		p += len;
	}
}
