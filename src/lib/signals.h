/* signals.h - the signals that end a run: SIGINT (a terminal's ^C),
 * SIGTERM and SIGHUP, caught and kept until taken.  The tracer's run
 * loop (tracer.h) stops tracing on one, stap's bpf compile gives up, a
 * -p run without probes stops sampling; one that comes before tracing
 * started gives the run up.
 */
#ifndef MALLOCWATCH_SIGNALS_H
#define MALLOCWATCH_SIGNALS_H

/* Catch SIGINT, SIGTERM and SIGHUP from now on (no SA_RESTART: a blocked
 * poll(2) returns EINTR); the run loop and the compile act on them.  Call
 * it before anything that must be cleaned up exists. */
void mw_signals_catch(void);

/* The signal caught and not yet taken, 0 if none; _take clears it. */
int mw_signal_pending(void);
int mw_signal_take(void);

#endif /* MALLOCWATCH_SIGNALS_H */
