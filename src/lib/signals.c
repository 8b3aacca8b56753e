/* signals.c - SIGINT, SIGTERM and SIGHUP caught and kept for whoever
 * runs the work they end (signals.h).  Moved out of tracer.c.
 */
#include <signal.h>
#include <string.h>

#include "signals.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

void mw_signals_catch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int mw_signal_take(void)
{
	int sig = got_signal;

	got_signal = 0;
	return sig;
}

int mw_signal_pending(void)
{
	return got_signal;
}
