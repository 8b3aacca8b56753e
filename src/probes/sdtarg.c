/* sdtarg.c - parse x86_64 SDT argument specs; see sdtarg.h.
 *
 * Grammar (AT&T operands as gas prints them in <sys/sdt.h> notes):
 *
 *	spec    := [-]SIZE '@' operand | operand      (no size: 8, unsigned)
 *	operand := '$' INT | '%' REG
 *	         | [disp] '(' [%BASE] [',' %INDEX [',' SCALE]] ')'
 *	disp    := INT | SYM | SYM '+' INT | SYM '-' INT | INT '+' SYM
 *
 * The register alias table maps every width's name (rax/eax/ax/al/ah,
 * r8/r8d/r8w/r8b) to the canonical register, as libbpf's usdt.c does.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdtarg.h"

static const struct {
	const char *name;
	enum mw_reg reg;
	int bytes;
	int high8;
} aliases[] = {
	{ "rax", MW_REG_RAX, 8, 0 }, { "eax", MW_REG_RAX, 4, 0 },
	{ "ax", MW_REG_RAX, 2, 0 }, { "al", MW_REG_RAX, 1, 0 },
	{ "ah", MW_REG_RAX, 1, 1 },
	{ "rbx", MW_REG_RBX, 8, 0 }, { "ebx", MW_REG_RBX, 4, 0 },
	{ "bx", MW_REG_RBX, 2, 0 }, { "bl", MW_REG_RBX, 1, 0 },
	{ "bh", MW_REG_RBX, 1, 1 },
	{ "rcx", MW_REG_RCX, 8, 0 }, { "ecx", MW_REG_RCX, 4, 0 },
	{ "cx", MW_REG_RCX, 2, 0 }, { "cl", MW_REG_RCX, 1, 0 },
	{ "ch", MW_REG_RCX, 1, 1 },
	{ "rdx", MW_REG_RDX, 8, 0 }, { "edx", MW_REG_RDX, 4, 0 },
	{ "dx", MW_REG_RDX, 2, 0 }, { "dl", MW_REG_RDX, 1, 0 },
	{ "dh", MW_REG_RDX, 1, 1 },
	{ "rsi", MW_REG_RSI, 8, 0 }, { "esi", MW_REG_RSI, 4, 0 },
	{ "si", MW_REG_RSI, 2, 0 }, { "sil", MW_REG_RSI, 1, 0 },
	{ "rdi", MW_REG_RDI, 8, 0 }, { "edi", MW_REG_RDI, 4, 0 },
	{ "di", MW_REG_RDI, 2, 0 }, { "dil", MW_REG_RDI, 1, 0 },
	{ "rbp", MW_REG_RBP, 8, 0 }, { "ebp", MW_REG_RBP, 4, 0 },
	{ "bp", MW_REG_RBP, 2, 0 }, { "bpl", MW_REG_RBP, 1, 0 },
	{ "rsp", MW_REG_RSP, 8, 0 }, { "esp", MW_REG_RSP, 4, 0 },
	{ "sp", MW_REG_RSP, 2, 0 }, { "spl", MW_REG_RSP, 1, 0 },
	{ "rip", MW_REG_RIP, 8, 0 },
#define R(n)								\
	{ "r" #n, MW_REG_R##n, 8, 0 }, { "r" #n "d", MW_REG_R##n, 4, 0 }, \
	{ "r" #n "w", MW_REG_R##n, 2, 0 }, { "r" #n "b", MW_REG_R##n, 1, 0 }, \
	{ "r" #n "l", MW_REG_R##n, 1, 0 }
	R(8), R(9), R(10), R(11), R(12), R(13), R(14), R(15),
#undef R
};

/* Canonical names (the bpf runtime's register reads, stp/bpf.stp, are
 * named after them: mw_r_rax). */
static const char *const regs[MW_REG_COUNT] = {
	[MW_REG_RAX] = "rax", [MW_REG_RBX] = "rbx", [MW_REG_RCX] = "rcx",
	[MW_REG_RDX] = "rdx", [MW_REG_RSI] = "rsi", [MW_REG_RDI] = "rdi",
	[MW_REG_RBP] = "rbp", [MW_REG_RSP] = "rsp", [MW_REG_R8] = "r8",
	[MW_REG_R9] = "r9", [MW_REG_R10] = "r10", [MW_REG_R11] = "r11",
	[MW_REG_R12] = "r12", [MW_REG_R13] = "r13", [MW_REG_R14] = "r14",
	[MW_REG_R15] = "r15", [MW_REG_RIP] = "rip",
};

const char *mw_reg_name(enum mw_reg reg)
{
	return reg >= 0 && reg < MW_REG_COUNT ? regs[reg] : "?";
}

/* "%name" at *pp, up to a delimiter; advances *pp. */
static int parse_reg(const char **pp, enum mw_reg *reg, int *bytes, int *high8,
		     char *err, size_t errlen)
{
	const char *p = *pp, *start;
	size_t n;

	if (*p != '%') {
		snprintf(err, errlen, "expected a register at '%s'", p);
		return -1;
	}
	start = ++p;
	while (isalnum((unsigned char)*p))
		p++;
	n = (size_t)(p - start);
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (strlen(aliases[i].name) == n &&
		    strncmp(aliases[i].name, start, n) == 0) {
			*reg = aliases[i].reg;
			if (bytes)
				*bytes = aliases[i].bytes;
			if (high8)
				*high8 = aliases[i].high8;
			*pp = p;
			return 0;
		}
	}
	snprintf(err, errlen, "unknown register '%%%.*s'", (int)n, start);
	return -1;
}

int mw_sdt_parse_int(const char **pp, int base, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(*pp, &end, base);
	if (end == *pp || errno)
		return -1;
	*pp = end;
	return 0;
}

/* An integer (decimal, 0x hex, optional sign) at *pp. */
static int parse_int(const char **pp, int64_t *v)
{
	return mw_sdt_parse_int(pp, 0, v);
}

int mw_sdt_size_prefix(const char *spec, struct mw_sdt_arg *a, const char **op,
		       char *err, size_t errlen)
{
	const char *p = spec;
	int64_t sz;

	memset(a, 0, sizeof(*a));
	a->reg = a->base = a->index = MW_REG_NONE;
	a->scale = 1;
	a->size = 8;
	if (!strchr(spec, '@')) {	/* no size: 8 bytes, unsigned */
		*op = spec;
	} else {
		if (parse_int(&p, &sz) < 0 || *p != '@') {
			snprintf(err, errlen, "bad size before '@'");
			return -1;
		}
		/* range first: -INT64_MIN overflows, and a cast to int
		 * would take 4294967298 for 2 */
		if (sz < -8 || sz > 8 || (sz != 1 && sz != 2 && sz != 4 && sz != 8 &&
					   sz != -1 && sz != -2 && sz != -4 && sz != -8)) {
			snprintf(err, errlen, "size %lld is not 1, 2, 4 or 8", (long long)sz);
			return -1;
		}
		a->is_signed = sz < 0;
		a->size = (int)(sz < 0 ? -sz : sz);
		*op = p + 1;
	}
	if (!**op) {
		snprintf(err, errlen, "empty operand");
		return -1;
	}
	return 0;
}

static int is_sym_char(int c, int first)
{
	return isalpha(c) || c == '_' || c == '.' || c == '$' ||
	       (!first && isdigit(c));
}

/* disp := INT | SYM | SYM+INT | SYM-INT | INT+SYM, up to '(' */
static int parse_disp(const char **pp, struct mw_sdt_arg *a, char *err, size_t errlen)
{
	const char *p = *pp;
	int64_t v;

	if (*p == '(')
		return 0;
	if (*p == '-' || *p == '+' || isdigit((unsigned char)*p)) {
		if (parse_int(&p, &v) < 0)
			goto bad;
		a->disp = v;
		if (*p != '+')
			goto done;
		p++;
	}
	if (is_sym_char((unsigned char)*p, 1)) {
		const char *s = p;

		while (is_sym_char((unsigned char)*p, 0))
			p++;
		if ((size_t)(p - s) >= sizeof(a->sym)) {
			snprintf(err, errlen, "symbol name too long");
			return -1;
		}
		memcpy(a->sym, s, (size_t)(p - s));
		a->sym[p - s] = '\0';
		if ((*p == '+' || *p == '-') && !a->disp) {
			if (parse_int(&p, &v) < 0)
				goto bad;
			a->disp = v;
		}
	}
done:
	if (*p != '(')
		goto bad;
	*pp = p;
	return 0;
bad:
	snprintf(err, errlen, "bad displacement at '%s'", *pp);
	return -1;
}

static int parse_mem(const char *p, struct mw_sdt_arg *a, char *err, size_t errlen)
{
	int64_t scale;

	a->kind = MW_ARG_MEM;
	a->base = a->index = MW_REG_NONE;
	a->scale = 1;
	if (parse_disp(&p, a, err, errlen) < 0)
		return -1;
	p++;	/* '(' */
	if (*p == '%' && parse_reg(&p, &a->base, NULL, NULL, err, errlen) < 0)
		return -1;
	if (*p == ',') {
		p++;
		if (parse_reg(&p, &a->index, NULL, NULL, err, errlen) < 0)
			return -1;
		if (a->index == MW_REG_RIP) {
			snprintf(err, errlen, "%%rip cannot be an index");
			return -1;
		}
		if (*p == ',') {
			p++;
			if (parse_int(&p, &scale) < 0 ||
			    (scale != 1 && scale != 2 && scale != 4 && scale != 8)) {
				snprintf(err, errlen, "bad scale at '%s'", p);
				return -1;
			}
			a->scale = (int)scale;
		}
	}
	if (*p != ')' || p[1]) {
		snprintf(err, errlen, "expected ')' at the end, found '%s'", p);
		return -1;
	}
	if (a->base == MW_REG_NONE && a->index == MW_REG_NONE && !a->sym[0]) {
		snprintf(err, errlen, "memory operand without base, index or symbol");
		return -1;
	}
	if (a->sym[0] && a->base != MW_REG_RIP && a->base != MW_REG_NONE) {
		snprintf(err, errlen, "symbol '%s' relative to %%%s is not supported",
			 a->sym, mw_reg_name(a->base));
		return -1;
	}
	return 0;
}

static int parse_x86(const char *spec, struct mw_sdt_arg *a, char *err, size_t errlen);

static void name_x86(struct mw_sdt_arg *a)
{
	if (a->reg != MW_REG_NONE)
		snprintf(a->regname, sizeof(a->regname), "%s", mw_reg_name(a->reg));
	if (a->kind == MW_ARG_MEM && a->base != MW_REG_NONE)
		snprintf(a->basename, sizeof(a->basename), "%s", mw_reg_name(a->base));
	if (a->kind == MW_ARG_MEM && a->index != MW_REG_NONE)
		snprintf(a->indexname, sizeof(a->indexname), "%s", mw_reg_name(a->index));
}

int mw_sdt_arg_parse(const char *spec, struct mw_sdt_arg *a, char *err, size_t errlen)
{
	if (parse_x86(spec, a, err, errlen) < 0)
		return -1;
	name_x86(a);
	return 0;
}

static int parse_x86(const char *spec, struct mw_sdt_arg *a, char *err, size_t errlen)
{
	const char *p;

	if (mw_sdt_size_prefix(spec, a, &p, err, errlen) < 0)
		return -1;
	if (*p == '$') {
		p++;
		a->kind = MW_ARG_CONST;
		if (parse_int(&p, &a->value) < 0 || *p) {
			snprintf(err, errlen, "bad constant '%s'", spec);
			return -1;
		}
		return 0;
	}
	if (*p == '%') {
		a->kind = MW_ARG_REG;
		if (parse_reg(&p, &a->reg, &a->reg_bytes, &a->reg_high8, err, errlen) < 0)
			return -1;
		if (*p) {
			snprintf(err, errlen, "trailing text '%s'", p);
			return -1;
		}
		if (a->reg == MW_REG_RIP) {
			snprintf(err, errlen, "%%rip is not a value register");
			return -1;
		}
		return 0;
	}
	return parse_mem(p, a, err, errlen);
}
