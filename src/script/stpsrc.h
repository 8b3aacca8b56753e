/* stpsrc.h - the SystemTap sources under stp/, embedded at build time.
 *
 * The Makefile turns each stp/NAME.stp into a C string mw_stp_NAME in
 * build/stpsrc.c; the text is the file's, byte for byte.
 */
#ifndef MALLOCWATCH_STPSRC_H
#define MALLOCWATCH_STPSRC_H

extern const char mw_stp_common[];	/* runtime-independent helpers */
extern const char mw_stp_bpf[];		/* register/memory reads, bpf runtime */
extern const char mw_stp_kernel[];	/* the same names, kernel runtime */

#endif /* MALLOCWATCH_STPSRC_H */
