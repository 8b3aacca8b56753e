/* stream.h - parse mallocwatch's line protocol (docs/protocol.md, version 1).
 *
 * A recorded stream, from a two-thread run:
 *
 *	P 0 memory_arena_new 2
 *	MW 1 ready
 *	E 5 4242 139830511960064 135168
 *	E 0 4242 139830511960096 135168
 *	N 0 4242 1
 *	H 139830511960064 139830511960096 200704 200704 1 0
 *	S 135168 0 1 0 135168 94059417452544 94059417587712 0
 *	B 139830518587392
 *	MW 1 end
 *
 * Each line goes to the state model (state.h).  A line that does not
 * parse is counted as garbled (and warned about once), never fatal.
 */
#ifndef MALLOCWATCH_STREAM_H
#define MALLOCWATCH_STREAM_H

#include "state.h"

/* Parse one line (without newline) into st.  Returns 0, or -1 when the
 * line was garbled (it is then counted in st). */
int mw_stream_line(struct mw_state *st, const char *line);

#endif /* MALLOCWATCH_STREAM_H */
