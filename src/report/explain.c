/* explain.c - one process read for `explain`, `snapshot -p` and the
 * reports of traced runs: its snapshot with the free chunks kept, its RSS
 * ledger and the findings; see explain.h.
 *
 * The ledger adds up only when the process did not move between the
 * snapshot and the ledger's reads of smaps, pagemap and smaps_rollup.
 * The first reading is made as a snapshot alone is (the process stopped
 * only when it must be, for the walk); a ledger that does not add up is
 * read again with the process held for the snapshot and the ledger both
 * (mw_snapshot_keep: the stop keeps twice the first ledger's read time for
 * it, within the stop bounds), up to EXPLAIN_READINGS in all within the
 * read timeout; one that still does not says why (ledger.h: readings,
 * held_ns, not_held).
 */
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "explain.h"
#include "procmem.h"
#include "ptstop.h"

#define EXPLAIN_READINGS 3
#define CMDLINE_MAX 4096
#define CMDLINE_WORDS 64
#define LEDGER_SLACK_NS 2000000ULL	/* a ledger's read, again: this more */

/* The CPUs pid may run on; 1 when unknown. */
static uint64_t process_cpus(pid_t pid)
{
	cpu_set_t set;
	long n = -1;

	if (sched_getaffinity(pid, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (uint64_t)n : 1;
}

/* pid's /proc/PID/cmdline as words into v (at most CMDLINE_WORDS - 1,
 * NULL-terminated; the strings in buf); v[0] NULL when it cannot be read
 * or is longer than buf.  The words are the process's: findings.c shows
 * them only when they are printable. */
static void read_cmdline(pid_t pid, char *buf, size_t len, const char **v)
{
	char path[64];
	ssize_t n;
	size_t k = 0;
	int fd;

	v[0] = NULL;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, buf, len);
	close(fd);
	if (n <= 0 || (size_t)n >= len || buf[n - 1] != '\0')
		return;	/* empty, cut, or a title without its NUL */
	for (char *w = buf; w < buf + n && k < CMDLINE_WORDS - 1; w += strlen(w) + 1)
		v[k++] = w;
	v[k] = NULL;
}

static void take_over(struct mw_explained *e, struct mw_snapshot *s, struct mw_ledger *l)
{
	mw_snapshot_free(e->s);
	mw_ledger_free(e->l);
	e->s = s;
	e->l = l;
}

/* When the stop st must end: its start plus --max-stop. */
static uint64_t stop_end(const struct mw_ptstop *st)
{
	uint64_t held = mw_ptstop_held_ns(st), max = mw_snapshot_max_stop_ns();

	return mw_now_ns() + (max > held ? max - held : 0);
}

/* One reading into s, l: a snapshot and its ledger; with held, the
 * snapshot read stopped only and the ledger in the same stop (reserve_ns
 * of it kept for the ledger), the process let go after both.  The
 * snapshot's status; *l NULL with the reason in lerr when no ledger. */
static int reading(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms, int held,
		   uint64_t reserve_ns, struct mw_snapshot **s, struct mw_ledger **l, char *err,
		   size_t errlen, char *lerr, size_t lerrlen)
{
	struct mw_ptstop *st = NULL;
	int r;

	*s = NULL;
	*l = NULL;
	r = held ? mw_snapshot_keep(p, g, timeout_ms, reserve_ns, s, &st, err, errlen) :
	    mw_snapshot_take_chunks(p, g, timeout_ms, s, err, errlen);
	if (r != MW_SNAP_OK)
		return r;
	if (mw_ledger_read_by(p, *s, st ? stop_end(st) : 0, l, lerr, lerrlen) < 0)
		*l = NULL;
	if (st) {
		uint64_t ns = mw_ptstop_resume(st);

		if (*l) {
			(*l)->held_ns = ns;
			(*l)->max_stop_ns = mw_snapshot_max_stop_ns();
		}
	}
	return r;
}

/* The first reading did not add up: read again, held, within the time
 * left; e keeps the last reading with a ledger. */
static void read_again(struct mw_proc *p, const struct mw_glibc *g, uint64_t deadline,
		       struct mw_explained *e)
{
	int n = 1;
	char why[sizeof(e->lerr) + 32] = "", lerr[sizeof(e->lerr)];

	while (!e->l->ok && n < EXPLAIN_READINGS && mw_now_ns() + 1000000 < deadline) {
		struct mw_snapshot *s;
		struct mw_ledger *l;
		uint64_t reserve = 2 * e->l->read_ns + LEDGER_SLACK_NS;
		long left = (long)((deadline - mw_now_ns()) / 1000000);

		n++;
		if (reading(p, g, left, 1, reserve, &s, &l, why, sizeof(why), lerr,
			    sizeof(lerr)) != MW_SNAP_OK) {
			/* not held (a bound, --no-stop, traced): once more as it runs */
			if (reading(p, g, left, 0, 0, &s, &l, lerr, sizeof(lerr), lerr,
				    sizeof(lerr)) != MW_SNAP_OK || !l) {
				mw_snapshot_free(s);
				continue;
			}
		} else if (!l) {	/* the ledger's read ran out of the stop's time */
			snprintf(why, sizeof(why), "the RSS ledger: %s", lerr);
			mw_snapshot_free(s);
			continue;
		}
		take_over(e, s, l);
	}
	e->l->readings = n;
	if (!e->l->ok && !e->l->held_ns)
		snprintf(e->l->not_held, sizeof(e->l->not_held), "%s", why[0] ? why :
			 "the read timeout ran out first");
}

int mw_explain_read(pid_t pid, const struct mw_glibc *g, long timeout_ms,
		    struct mw_explained *e, char *err, size_t errlen)
{
	const char *argv[CMDLINE_WORDS];
	char cmd[CMDLINE_MAX];
	struct mw_proc p;
	uint64_t deadline;
	int r;

	memset(e, 0, sizeof(*e));
	if (timeout_ms <= 0)
		timeout_ms = MW_SNAP_TIMEOUT_MS;
	deadline = mw_now_ns() + (uint64_t)timeout_ms * 1000000;
	if (mw_proc_open(&p, pid, err, errlen) < 0)
		return MW_SNAP_ERROR;
	r = reading(&p, g, timeout_ms, 0, 0, &e->s, &e->l, err, errlen, e->lerr,
		    sizeof(e->lerr));
	if (r == MW_SNAP_OK && e->l) {
		if (!e->l->ok)
			read_again(&p, g, deadline, e);
		read_cmdline(pid, cmd, sizeof(cmd), argv);
		mw_findings_make_cmd(e->s, e->l, process_cpus(pid), NULL, 0, argv[0] ? argv : NULL,
				     &e->f, &e->nf);
	}
	mw_proc_close(&p);
	return r;
}

void mw_explained_free(struct mw_explained *e)
{
	mw_snapshot_free(e->s);
	mw_ledger_free(e->l);
	free(e->f);
	memset(e, 0, sizeof(*e));
}
