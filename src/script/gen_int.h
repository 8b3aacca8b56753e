/* gen_int.h - what gen.c, gen_args.c and gen_end.c share: the
 * generator's state while it writes one script, the packing of a heap's
 * record into one map value, and the printers of protocol records.  Not
 * a public interface (gen.h is).
 */
#ifndef MALLOCWATCH_GEN_INT_H
#define MALLOCWATCH_GEN_INT_H

#include <stdio.h>

#include "gen.h"
#include "probetab.h"
#include "sdtarg.h"

#define MAX_PROBES 128
#define MAX_SITES 16

/* One probe name of the libc (or libm) and its SDT sites. */
struct group {
	const struct mw_elf *elf;	/* the file the sites are in */
	const char *path;		/* for process("...") */
	const char *name;
	int id;			/* MW_P_* or a dynamic id >= MW_P_COUNT */
	int nargs;
	unsigned unavail;	/* bit i: argument i+1 cannot be read at some site */
	const struct mw_probe_info *info;	/* NULL for unknown probes */
	const struct mw_sdt_site *site[MAX_SITES];
	int nsites;
};

struct gen {
	const struct mw_elf *elf;
	const struct mw_gen_opts *o;
	FILE *out;
	struct group g[MAX_PROBES];
	int ng;
	struct mw_gen_stats *st;
	unsigned modes;		/* bit per enum mw_mode present */
	int multi;		/* several processes (opts->npids >= 2) */
	/* the process and thread: pid() and tid(), or in the bpf runtime's
	 * handlers the locals pi and ti, set from one mw_pidtgid() call;
	 * and from the process, for a run of several (multi): */
	const char *pe, *te;
	char pk[16];		/* key prefix of per-process maps: "pid(), " or "" */
	char sk[16];		/* index of per-process scalars: "[pid()]" or "" */
	char unresolved[256];	/* symbols not found, ", "-separated, once each */
	int draining;		/* writing the drain probe (opts->linger) */
	int marked;		/* writing the exec probe of a run of several
				 * processes: the records of those marked in
				 * mw_pids (value 2) only */
};

/* mw_h[heap]: everything memory_heap_more/less keep of a heap, in one
 * value, so that a hit is one lookup and one update of one map (each
 * update of a stapbpf hash map is ~70 ns, a lookup ~30: a third map
 * for the size cost 50 ns a hit).  Bits, from the top: the heap's peak
 * size (the largest memory_heap_more saw) and its current size (the
 * last hit's), each in 4 KiB units in 21 bits (heap sizes are whole
 * pages; a heap is at most HEAP_MAX_SIZE, 64 MiB on 64-bit, or 4 hugetlb
 * pages, 4 GiB with 1 GiB pages: malloc/arena.c; 21 bits hold 8 GiB, so
 * bit 63 stays clear and stap's signed shifts are plain), then the
 * heap_less and the heap_more counts modulo 2^11; each 2^11th hit carries
 * 2^11 into mw_hlhi[heap] or mw_hmhi[heap], the counts' high parts.
 * The printers unpack it with these stap expressions (no immediate over
 * 32 bits: see mw_zext in stp/common.stp). */
#define HEAP_PAGE_SHIFT 12
#define HEAP_CBITS 11		/* bits of each count in mw_h */
#define HEAP_CMASK 2047		/* 2^HEAP_CBITS - 1 */
#define HEAP_PBITS 21		/* bits of each size in mw_h, 4 KiB units */
#define HEAP_PMASK 2097151	/* 2^HEAP_PBITS - 1 */
#define HEAP_SIZE(v) "((((" v ") >> 22) & 2097151) << 12)"
#define HEAP_PEAK(v) "((" v ") >> 43 << 12)"
#define HEAP_NMORE(v, hi) "(" hi " + ((" v ") & 2047))"
#define HEAP_NLESS(v, hi) "(" hi " + (((" v ") >> 11) & 2047))"

/* The setjmp family's map mw_j is keyed [jmp_buf, return address, word]
 * (a process first in a run of several), the word holding from the top
 * the probe's id (bits 56-63; ids are below MW_P_COUNT, under 128, so
 * the word stays positive), the thread (bits 32-55: a Linux thread id is
 * at most PID_MAX_LIMIT, 2^22 on 64-bit, include/linux/threads.h) and
 * the value's 32 bits (an int: setjmp's savemask, longjmp's value).  A
 * 24-byte key where five words took 40: the hash map hashes and compares
 * a key on every hit (jhash2: one round per 12 bytes).  The printers
 * unpack it with these stap expressions (signed shifts; the value comes
 * back sign-extended, as mw_sext(a2, 32) read it). */
#define MW_JW_ID_SHIFT 56
#define MW_JW_TID_SHIFT 32
#define MW_JW_ID(w) "((" w ") >> 56)"
#define MW_JW_TID(w) "(((" w ") << 8) >> 40)"
#define MW_JW_VALUE(w) "(((" w ") << 32) >> 32)"

/* printf("TAG v1 v2 ...\n") of stap expressions v[0..n-1] into g->out,
 * each line starting with indent; the first nplain values printed as
 * they are, the others under the bpf runtime as two 32-bit halves
 * "HI:LO" (docs/protocol.md).  who: NULL, or an expression of the
 * process whose record it is, printed first as "@%d " (MW_REC_PROCESS):
 * pid() in a script of several processes. */
void mw_gen_emit_print(struct gen *g, const char *indent, const char *tag,
		       int nplain, int n, const char *const *v);

/* gen_args.c: the statements that set bias and a1..aN in gr's handler,
 * for its one site, or for each site behind a test of the hit's page
 * offset (gen.h); an argument that cannot be read is set to 0 and
 * marked in gr->unavail, a symbol that does not resolve noted in
 * g->unresolved. */
void mw_gen_dispatch(struct gen *g, struct group *gr);

/* gen_end.c: the probes that end a run or read it while it runs - the
 * flush (procfs MW_FLUSH_FILE), the end probe, the pid set's procfs
 * file (kernel runtime, -f), serve's live reading, --linger's drain and
 * the sample's lock-wait count - written to g->out. */
void mw_gen_end_probes(struct gen *g);

#endif /* MALLOCWATCH_GEN_INT_H */
