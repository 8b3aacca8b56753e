/* snapattach.c - the snapshot a run starts from, tried again while a busy
 * process refuses it; see snapattach.h.  (Was in trace_snaps.c; -p's runs
 * with probes and without, and those of several processes, all take it.)
 */
#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "snapattach.h"

int mw_attach_snapshot(pid_t pid, struct mw_glibc *g, long timeout_ms, struct mw_snapshot **out,
		       char *err, size_t errlen)
{
	long long start = mw_now_ms(), left, t0, took;
	long total = timeout_ms > 0 ? timeout_ms : MW_SNAP_TIMEOUT_MS;
	char why[512], refused[512] = "";
	int r, tries = 0;

	for (;;) {
		t0 = mw_now_ms();
		left = total - (t0 - start);
		r = mw_snapshot_read(pid, g, left > 1 ? (long)left : 1, out, why, sizeof(why));
		tries++;
		took = mw_now_ms() - t0;
		left = total - (mw_now_ms() - start);
		/* another try only when one as long as this one fits: the last
		 * reason is then a refusal, not a try cut short */
		if (r == MW_SNAP_INCONSISTENT)
			snprintf(refused, sizeof(refused), "%s", why);
		if (r != MW_SNAP_INCONSISTENT || left <= MW_ATTACH_RETRY_MS + took)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = MW_ATTACH_RETRY_MS * 1000000L }, NULL);
	}
	if (r == MW_SNAP_TIMEOUT && refused[0]) {	/* a retry cut short: why the others failed */
		r = MW_SNAP_INCONSISTENT;
		snprintf(why, sizeof(why), "%s", refused);
	}
	if (r < 0 && tries > 1)
		snprintf(err, errlen, "%d tries in %.1f s: %s", tries,
			 (double)(mw_now_ms() - start) / 1000.0, why);
	else if (r < 0)
		snprintf(err, errlen, "%s", why);
	return r;
}
