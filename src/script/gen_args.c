/* gen_args.c - a probe's arguments in its handler (gen.c): a1..aN set
 * from each site's argument specs (sdtarg.h), as stap's $argN under the
 * kernel runtime and as register and memory reads under the bpf runtime,
 * where stap 4.8 cannot expand $argN on SDT marks; and the dispatch
 * between a probe's sites by the page offset of the hit's address.  Two
 * sites of memory_mallopt_arena_max (specs "8@%rax ..." and "8@%rbp
 * ...") give, under the bpf runtime:
 *
 *	ip = mw_ip()
 *	if ((ip & 4095) == 2995) {
 *		bias = ip - 580531
 *		a1 = mw_r_rax()
 *		a2 = mw_rd8(mw_r_rip_bias + ...)
 *	} else if ((ip & 4095) == 1332) { ... } else next
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gen.h"
#include "gen_int.h"
#include "msg.h"
#include "sdtarg.h"
#include "sdtnote.h"

#define PAGE_MASK_LOW 4095

/* The value of register operand a, as a stap expression, into buf.  The
 * size extension (bpf_arg) narrows it further; a register narrower than
 * the size read (8@%eax) is zero-extended here first. */
static void reg_expr(const struct mw_sdt_arg *a, char *buf, size_t len)
{
	const char *r = mw_reg_name(a->reg);

	if (a->reg_high8)
		snprintf(buf, len, "((mw_r_%s() >> 8) & 255)", r);
	else if (a->reg_bytes < a->size)
		snprintf(buf, len, "mw_zext(mw_r_%s(), %d)", r, a->reg_bytes * 8);
	else
		snprintf(buf, len, "mw_r_%s()", r);
}

/* Remember a symbol that did not resolve, for one warning at the end. */
static void unresolved(struct gen *g, const char *sym)
{
	char quoted[80];
	size_t n = strlen(g->unresolved);

	snprintf(quoted, sizeof(quoted), "'%s'", sym);
	if (!strstr(g->unresolved, quoted))
		snprintf(g->unresolved + n, sizeof(g->unresolved) - n, "%s%s", n ? ", " : "",
			 quoted);
}

/* Can operand a be read: no symbol, or one that resolves (into *sym)? */
static int operand_resolves(struct gen *g, const struct mw_elf *elf,
			    const struct mw_sdt_arg *a, uint64_t *sym)
{
	if (a->kind != MW_ARG_MEM || (!a->sym[0] && a->base != MW_REG_RIP))
		return 1;
	if (a->sym[0] && mw_elf_symbol(elf, a->sym, sym) == 0)
		return 1;
	unresolved(g, a->sym[0] ? a->sym : "(%rip)");
	return 0;
}

/* The address of memory operand a; -1 when it cannot be computed. */
static int addr_expr(struct gen *g, const struct mw_elf *elf, const struct mw_sdt_arg *a,
		     char *buf, size_t len)
{
	char base[96] = "0", index[96] = "0";
	uint64_t sym = 0;

	if (!operand_resolves(g, elf, a, &sym))
		return -1;
	if (a->sym[0])
		snprintf(base, sizeof(base), "bias + %" PRIu64, sym);
	else if (a->base != MW_REG_NONE)
		snprintf(base, sizeof(base), "mw_r_%s()", mw_reg_name(a->base));
	if (a->index != MW_REG_NONE)
		snprintf(index, sizeof(index), "mw_r_%s() * %d", mw_reg_name(a->index), a->scale);
	snprintf(buf, len, "(%s + %s + %" PRId64 ")", base, index, a->disp);
	return 0;
}

/* One argument's expression for the bpf runtime; -1 (and "0") when it
 * cannot be read. */
static int bpf_arg(struct gen *g, const struct group *gr, const struct mw_sdt_arg *a,
		   char *buf, size_t len)
{
	char v[256];

	switch (a->kind) {
	case MW_ARG_CONST:
		snprintf(buf, len, "%" PRId64, a->value);
		return 0;
	case MW_ARG_REG:
		reg_expr(a, v, sizeof(v));
		break;
	case MW_ARG_MEM: {
		char ad[200];

		if (addr_expr(g, gr->elf, a, ad, sizeof(ad)) < 0) {
			snprintf(buf, len, "0");
			return -1;
		}
		snprintf(v, sizeof(v), "mw_rd%d(%s)", a->size, ad);
		break;
	}
	}
	if (a->size < 8 && a->is_signed)
		snprintf(buf, len, "mw_sext(%s, %d)", v, a->size * 8);
	else if (a->size < 8)
		snprintf(buf, len, "mw_zext(%s, %d)", v, a->size * 8);
	else
		snprintf(buf, len, "%s", v);
	return 0;
}

/* The statements that set bias (0 when with_bias is 0: the site is not
 * known exactly) and a1..aN for one site.  An argument that cannot be
 * read is set to 0 and marked in gr->unavail. */
static void site_body(struct gen *g, struct group *gr,
		      const struct mw_sdt_site *s, const char *indent, int with_bias)
{
	struct mw_sdt_arg args[MW_MAX_ARGS];
	char err[256], expr[320];
	uint64_t sym;
	int n;

	if (with_bias)
		fprintf(g->out, "%sbias = ip - %" PRIu64 "\n", indent, s->pc);
	else
		fprintf(g->out, "%sbias = 0\n", indent);
	n = mw_sdt_args_parse_arch(mw_arch_of_machine(mw_elf_machine(gr->elf)), s->args,
				   args, MW_MAX_ARGS, err, sizeof(err));
	if (n < 0) {
		mw_warn("%s at 0x%" PRIx64 ": %s; arguments reported unavailable", s->name,
			s->pc, err);
		n = 0;
	}
	for (int i = 0; i < gr->nargs; i++) {
		int ok = i < n;

		if (ok && g->o->runtime == MW_RT_KERNEL) {
			/* stap resolves the same symbols; give it none it cannot */
			ok = operand_resolves(g, gr->elf, &args[i], &sym);
			snprintf(expr, sizeof(expr), "$arg%d", i + 1);
		} else if (ok) {
			ok = bpf_arg(g, gr, &args[i], expr, sizeof(expr)) == 0;
		}
		if (!ok) {
			gr->unavail |= 1u << i;
			g->st->unavailable++;
		}
		fprintf(g->out, "%sa%d = %s\n", indent, i + 1, ok ? expr : "0");
	}
}

/* Do all sites read their arguments the same way, without the load bias
 * (no %rip operand)?  Then one body serves them all. */
static int sites_alike(const struct group *gr)
{
	for (int i = 0; i < gr->nsites; i++)
		if (strcmp(gr->site[i]->args, gr->site[0]->args) != 0 ||
		    strstr(gr->site[i]->args, "(%rip)"))
			return 0;
	return 1;
}

/* Page-offset dispatch between sites; see the comment in gen.h. */
void mw_gen_dispatch(struct gen *g, struct group *gr)
{
	if (gr->nsites == 1 || sites_alike(gr)) {
		site_body(g, gr, gr->site[0], "\t", gr->nsites == 1);
		return;
	}
	for (int i = 0; i < gr->nsites; i++) {
		uint64_t off = gr->site[i]->pc & PAGE_MASK_LOW;

		for (int j = 0; j < i; j++)
			if ((gr->site[j]->pc & PAGE_MASK_LOW) == off)
				mw_warn("%s: sites 0x%" PRIx64 " and 0x%" PRIx64
					" share a page offset; the second is read as the first",
					gr->name, gr->site[j]->pc, gr->site[i]->pc);
		fprintf(g->out, "\t%sif ((ip & %d) == %" PRIu64 ") {\n",
			i ? "} else " : "", PAGE_MASK_LOW, off);
		site_body(g, gr, gr->site[i], "\t\t", 1);
	}
	fprintf(g->out, "\t} else next\n");
}
