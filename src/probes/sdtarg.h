/* sdtarg.h - SDT argument specs (x86_64 AT&T syntax).
 *
 * A site's argument string holds space-separated specs "SIZE@OPERAND"
 * (<sys/sdt.h>, SystemTap wiki "UserSpaceProbeImplementation"): SIZE is
 * 1, 2, 4 or 8 bytes, negative when the value is signed; OPERAND is the
 * asm operand the compiler chose.  Real examples from glibc 2.36:
 *
 *	8@%rbx		register
 *	-4@%esi		32-bit register, signed
 *	8@32+mp_(%rip)	memory: symbol mp_ plus 32, RIP-relative
 *	-4@perturb_byte(%rip)
 *	8@-16(%rbp)	memory: base register plus displacement
 *	4@(%rax,%rdx,4)	memory: base, index, scale
 *	-4@$-1		constant
 */
#ifndef MALLOCWATCH_SDTARG_H
#define MALLOCWATCH_SDTARG_H

#include <stddef.h>
#include <stdint.h>

/* x86_64 registers, canonical 64-bit names. */
enum mw_reg {
	MW_REG_NONE = -1,
	MW_REG_RAX, MW_REG_RBX, MW_REG_RCX, MW_REG_RDX, MW_REG_RSI,
	MW_REG_RDI, MW_REG_RBP, MW_REG_RSP, MW_REG_R8, MW_REG_R9,
	MW_REG_R10, MW_REG_R11, MW_REG_R12, MW_REG_R13, MW_REG_R14,
	MW_REG_R15, MW_REG_RIP, MW_REG_COUNT,
};

enum mw_arg_kind { MW_ARG_REG, MW_ARG_MEM, MW_ARG_CONST };

/* Spec syntaxes mallocwatch parses.  Code generation for the bpf runtime
 * exists for x86_64 only; the others are parsed for `mallocwatch probes`
 * and the kernel runtime (where stap reads $argN itself). */
enum mw_arch {
	MW_ARCH_X86_64,		/* AT&T: 8@%rbx, -4@-20(%rbp), 8@32+mp_(%rip) */
	MW_ARCH_I386,		/* AT&T, 32-bit registers: -4@8(%ebp) */
	MW_ARCH_AARCH64,	/* 8@x0, -4@w1, -4@[sp, 96], 8@[x19], 4@5 */
	MW_ARCH_PPC64,		/* -8@%r25, 8@3 (a register), -4@16(6), 8@i-693 */
	MW_ARCH_S390X,		/* -8@%r2, -2@-28(%r15), 4@71 */
	MW_ARCH_UNKNOWN,
};

struct mw_sdt_arg {
	int size;		/* bytes read: 1, 2, 4 or 8 */
	int is_signed;		/* spec had a minus sign */
	enum mw_arg_kind kind;
	/* MW_ARG_REG */
	enum mw_reg reg;
	int reg_bytes;		/* width named by the alias: 1, 2, 4, 8 */
	int reg_high8;		/* %ah, %bh, %ch, %dh */
	/* MW_ARG_MEM: address = base + index * scale + disp (+ sym) */
	enum mw_reg base;	/* MW_REG_NONE if absent; MW_REG_RIP for sym(%rip) */
	enum mw_reg index;	/* MW_REG_NONE if absent */
	int scale;		/* 1, 2, 4, 8 */
	int64_t disp;
	char sym[64];		/* "" if none */
	/* MW_ARG_CONST */
	int64_t value;
	/* every arch: canonical register names, "" when absent ("rax",
	 * "x19", "sp", "r15") - the value register, or the base and index */
	char regname[8], basename[8], indexname[8];
};

/* Parse one spec such as "-4@%esi".  Returns 0, or -1 with a reason in
 * err (errlen bytes), e.g. "unknown register '%xyz'". */
int mw_sdt_arg_parse(const char *spec, struct mw_sdt_arg *out,
		     char *err, size_t errlen);

/* The same for the spec syntax of arch. */
int mw_sdt_arg_parse_arch(enum mw_arch arch, const char *spec, struct mw_sdt_arg *out,
			  char *err, size_t errlen);

/* Shared by the per-arch parsers (sdtarg_arch.c): an integer at *pp in
 * base (0: 0x prefix allowed), advancing *pp; and the "[-]SIZE@" prefix,
 * which clears *a, sets size and sign and points *op at the operand.
 * Both return 0, or -1 (the prefix with a reason in err). */
int mw_sdt_parse_int(const char **pp, int base, int64_t *v);
int mw_sdt_size_prefix(const char *spec, struct mw_sdt_arg *a, const char **op,
		       char *err, size_t errlen);

/* The arch of an ELF e_machine (EM_X86_64, EM_386, EM_AARCH64, EM_PPC64,
 * EM_S390), else MW_ARCH_UNKNOWN; and its name ("x86_64", ...). */
enum mw_arch mw_arch_of_machine(int e_machine);
const char *mw_arch_name(enum mw_arch arch);

/* Parse a whole argument string into out[0..max-1].  Returns the number
 * of arguments, or -1 with "argument N 'SPEC': reason" in err. */
int mw_sdt_args_parse(const char *args, struct mw_sdt_arg *out, int max,
		      char *err, size_t errlen);

/* The same for arch. */
int mw_sdt_args_parse_arch(enum mw_arch arch, const char *args, struct mw_sdt_arg *out,
			   int max, char *err, size_t errlen);

/* Canonical name of reg ("rax"), "?" for MW_REG_NONE. */
const char *mw_reg_name(enum mw_reg reg);

#endif /* MALLOCWATCH_SDTARG_H */
