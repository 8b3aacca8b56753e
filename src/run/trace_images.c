/* trace_images.c - a traced process that replaced its image (exec), for
 * one run's sink (trace_run_int.h) and -f's (trace_multi.c): its figures
 * from the tracer are right, or refused with why (state.h
 * mw_state_images_mixed).  Refused when the tracer's totals of the old
 * image were not emptied for the new one (tracer.h on_mixed: "the tracer
 * did not answer in 3000 ms"), and when the program it runs at its exit
 * was not traced at all: it maps no libc, or another libc file than the
 * one traced, as /proc/PID/maps says at its exit stop:
 *
 *	7f2c4a200000-7f2c4a228000 r--p 00000000 fe:01 1311038  /lib/x86_64-linux-gnu/libc.so.6
 *
 * (the traced file is the device and inode of the run's libc path, as
 * mw_glibc_preload keys it: the probe-enabled glibc a mount namespace
 * shows at the system's path is the same file).  And, for the processes
 * -p attaches to without -f (not ptraced), when an exec is seen at all
 * (mw_images_watch: procexec.h's witnesses, asked every sample tick and
 * at the end).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "clock.h"
#include "mapped.h"
#include "msg.h"
#include "procexec.h"
#include "procs.h"
#include "state.h"
#include "stream.h"
#include "trace_images.h"
#include "trace_run_int.h"
#include "xalloc.h"

void mw_images_refuse(struct mw_state *st, FILE *save, const char *why)
{
	uint64_t ns = mw_now_ns();

	if (mw_state_images_refused(st, NULL))
		return;	/* the first reason stands */
	mw_state_images_mixed(st, why, ns);
	if (save)
		mw_stream_write_images_mixed(save, ns, why);
}

int mw_images_untraced(pid_t pid, const char *libc_path, char *why, size_t whylen)
{
	struct mw_mapped m;
	struct stat sb;
	char err[PATH_MAX + 128];
	int r;

	if (!libc_path || stat(libc_path, &sb) < 0)
		return 0;	/* nothing to tell it by: as traced */
	r = mw_mapped_find(pid, MW_LIB_LIBC, &m, err, sizeof(err));
	if (r < 0)
		return 0;	/* gone: its exit snapshot says so */
	if (r == 0) {
		snprintf(why, whylen, "it replaced its image (exec) with a program that maps no "
			 "libc (a static program): none of that program was traced");
		return 1;
	}
	if (m.ino == (uint64_t)sb.st_ino && m.dev_major == major(sb.st_dev) &&
	    m.dev_minor == minor(sb.st_dev))
		return 0;
	/* the process's name for it: quoted where it is printed */
	snprintf(why, whylen, "it replaced its image (exec) with a program that maps another "
		 "libc, '%s', than the one traced: none of that program was traced", m.name);
	return 1;
}

struct mw_images_watch {
	FILE *save;
	size_t n, cap, execd;
	int noted;		/* a process not counted was said */
	struct watched {
		struct mw_process *pr;	/* the run's (procs.h: it does not move) */
		pid_t pid;
		struct mw_procexec *x;
		int execd;
	} *v;
};

struct mw_images_watch *mw_images_watch_new(FILE *save)
{
	struct mw_images_watch *w = xcalloc(1, sizeof(*w));

	w->save = save;
	return w;
}

void mw_images_watch_add(struct mw_images_watch *w, struct mw_process *pr, pid_t pid,
			 const char *libc_path)
{
	char seen[PATH_MAX + 200], why[PATH_MAX + 400];
	struct watched *v;

	if (!w || !pr || pid <= 0)
		return;
	if (w->n == w->cap)
		xgrow((void **)&w->v, w->n, &w->cap, sizeof(*w->v));
	v = &w->v[w->n++];
	*v = (struct watched){ .pr = pr, .pid = pid, .x = mw_procexec_open(pid) };
	/* an exec after the libc was found (the run's preparation, a second
	 * or more) and before the watch: the program watched from now on is
	 * the new one, traced only if it maps the same libc file */
	if (mw_images_untraced(pid, libc_path, seen, sizeof(seen)) == 1) {
		snprintf(why, sizeof(why), "process %d: %s (before it was watched)", (int)pid, seen);
		v->execd = 1;
		w->execd++;
		mw_warn("process %d replaced its program (exec) while the run was prepared; its "
			"figures from the tracer are refused in the report", (int)pid);
		mw_images_refuse(pr->st, w->save, why);
	}
	if (!mw_procexec_counted(v->x) && !w->noted++)	/* said once */
		mw_note("process %d: its execs cannot be counted (the kernel's sched_process_exec "
			"event, through perf_event_open and tracefs, on each of its threads; "
			"src/live/procexec.h), nor perhaps other processes' after it; one is seen only "
			"while it runs, every second and at the end", (int)pid);
}

size_t mw_images_watch_check(struct mw_images_watch *w)
{
	char seen[PATH_MAX + 400], why[PATH_MAX + 600];

	for (size_t i = 0; w && i < w->n; i++) {
		int x = w->v[i].execd ? 0 : mw_procexec_check(w->v[i].x, seen, sizeof(seen));

		if (!x)
			continue;
		snprintf(why, sizeof(why), "%s: not ptraced (-p, --cgroup without -f), it was "
			 "not held at the exec for the tracer to empty the old program's totals, "
			 "which would mix with the new one's", seen);
		w->v[i].execd = 1;
		w->execd++;
		if (x == 1)
			mw_warn("process %d replaced its program (exec) during the run, which only "
				"-f follows; its figures from the tracer are refused in the report, "
				"and it has no snapshot at the end", (int)w->v[i].pid);
		else
			mw_warn("process %d exited, and an exec before its exit cannot be ruled out "
				"(not every thread of it was counted); its figures from the tracer "
				"are refused in the report", (int)w->v[i].pid);
		mw_images_refuse(w->v[i].pr->st, w->save, why);
	}
	return w ? w->execd : 0;
}

const char *mw_images_watch_end_why(const struct mw_images_watch *w,
				    const struct mw_process *pr)
{
	for (size_t i = 0; w && i < w->n; i++)
		if (w->v[i].pr == pr && w->v[i].execd)
			return "none at the end: the process replaced its program (exec) during "
			       "the run, and the layouts read at attach are the old program's";
	return NULL;
}

void mw_images_watch_free(struct mw_images_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		mw_procexec_free(w->v[i].x);
	free(w->v);
	free(w);
}
