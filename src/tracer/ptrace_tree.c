/* ptrace_tree.c - a -c run's processes under ptrace; see ptrace_tree.h. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "procmem.h"
#include "ptrace_tree.h"

struct tracee {
	pid_t tid, tgid;
	unsigned char started;	/* its first stop was seen */
	unsigned char detach;	/* not followed: let go at its first stop */
	unsigned char held;	/* at its exit stop, for the caller */
	unsigned char letgo;	/* released (mw_ptree_let_go): detached at its
				 * next stop, never an event */
	unsigned short execs;	/* programs it ran (MW_PT_EXEC), at most 65535 */
};

struct mw_ptree {
	int follow;
	struct tracee *v;
	size_t n, cap;
	size_t live;		/* processes (leaders) not ended */
	unsigned long untraced;
	pid_t pending;		/* held for the caller until the next call */
};

/* execs: 1 for a process that was running its program when it was
 * seized (-p), else 0 (its first exec starts one) */
static int add(struct mw_ptree *t, pid_t tid, pid_t tgid, int started, int detach, int execs)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct tracee *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct tracee){ .tid = tid, .tgid = tgid, .started = (unsigned char)started,
					.detach = (unsigned char)detach,
					.execs = (unsigned short)execs };
	return 0;
}

static void drop(struct mw_ptree *t, size_t i)
{
	t->v[i] = t->v[--t->n];
}

static struct tracee *find(struct mw_ptree *t, pid_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].tid == tid)
			return &t->v[i];
	return NULL;
}

struct mw_ptree *mw_ptree_seize(pid_t root, int follow)
{
	long opts = PTRACE_O_TRACEEXIT | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACEEXEC | (follow ? PTRACE_O_TRACECLONE : 0);
	struct mw_ptree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->follow = follow;
	if (add(t, root, root, 1, 0, 0) < 0 || ptrace(PTRACE_SEIZE, root, 0, (void *)opts) < 0) {
		int e = errno;

		mw_ptree_free(t);
		errno = e;
		return NULL;
	}
	t->live = 1;
	return t;
}

struct mw_ptree *mw_ptree_attach(pid_t pid)
{
	long opts = PTRACE_O_TRACEEXIT | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE;
	struct mw_ptree *t = calloc(1, sizeof(*t));
	char dir[64];
	int added = 1;

	if (!t)
		return NULL;
	t->follow = 1;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	/* a thread made by one not seized yet shows up in the next round */
	for (int round = 0; added && round < 100; round++) {
		DIR *d = opendir(dir);
		struct dirent *e;

		if (!d)
			goto fail;
		added = 0;
		while ((e = readdir(d))) {
			pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);

			if (tid <= 0 || find(t, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, (void *)opts) < 0) {
				if (errno == ESRCH)
					continue;	/* gone meanwhile */
				closedir(d);
				goto fail;
			}
			if (add(t, tid, pid, 1, 0, 1) < 0) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				closedir(d);
				errno = ENOMEM;
				goto fail;
			}
			added = 1;
		}
		closedir(d);
	}
	if (!find(t, pid)) {
		errno = ESRCH;
		goto fail;
	}
	t->live = 1;
	return t;
fail:
	{
		int e = errno;

		for (size_t i = 0; i < t->n; i++)
			ptrace(PTRACE_DETACH, t->v[i].tid, 0, 0);
		mw_ptree_free(t);
		errno = e;
	}
	return NULL;
}

/* The thread group of tid, from /proc/TID/status; 0 unknown. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "\nTgid:")))
		return 0;
	return (pid_t)strtol(p + 6, NULL, 10);
}

/* tr created tid (a fork, vfork or clone event): a thread is traced as
 * it comes, a process is handed to the caller (-f) or counted and let
 * go.  1 with *ev set when the caller has something to do. */
static int created(struct mw_ptree *t, struct tracee *tr, int event,
		   struct mw_ptree_event *ev)
{
	unsigned long msg = 0;
	pid_t c, parent = tr->tgid, tid = tr->tid;
	int thread;

	if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) < 0 || !msg) {
		ptrace(PTRACE_CONT, tid, 0, 0);
		return 0;
	}
	c = (pid_t)msg;
	thread = event == PTRACE_EVENT_CLONE && tgid_of(c) != c;
	/* tr may move: add() reallocates */
	if (add(t, c, thread ? parent : c, 0, !thread && !t->follow, 0) < 0) {
		ptrace(PTRACE_CONT, tid, 0, 0);
		return 0;	/* never waited for: it stays stopped */
	}
	if (thread || !t->follow) {
		if (!thread)
			t->untraced++;
		ptrace(PTRACE_CONT, tid, 0, 0);
		return 0;
	}
	t->live++;
	t->pending = tid;	/* the parent goes on after the caller */
	*ev = (struct mw_ptree_event){ .kind = MW_PT_NEW, .pid = c, .parent = parent };
	return 1;
}

/* A stop of the i-th tracee, released (mw_ptree_let_go): it is let go
 * from there, a signal it was being given passed on (a signal-delivery
 * stop; an event stop or a group-stop has none: after the detach a
 * group-stop goes on untraced, ptrace(2)).  A task it created at this
 * stop (fork, vfork, clone) is traced by us already: let go at its own
 * first stop. */
static void letgo_stop(struct mw_ptree *t, size_t i, int st)
{
	int sig = WSTOPSIG(st), event = st >> 16;
	unsigned long msg = 0;
	pid_t tid = t->v[i].tid;

	if ((event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
	     event == PTRACE_EVENT_CLONE) && ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 && msg &&
	    add(t, (pid_t)msg, (pid_t)msg, 0, 1, 0) == 0)
		t->v[t->n - 1].letgo = 1;
	ptrace(PTRACE_DETACH, tid, 0, event ? 0 : (void *)(long)sig);
	drop(t, i);
}

/* One stop of the i-th tracee (waitpid status st).  1 with *ev set when
 * the caller has something to do. */
static int stopped(struct mw_ptree *t, size_t i, int st, struct mw_ptree_event *ev)
{
	struct tracee *tr = &t->v[i];
	int sig = WSTOPSIG(st), event = st >> 16;
	unsigned long msg = 0;
	pid_t tid = tr->tid;

	if (tr->letgo) {
		letgo_stop(t, i, st);
		return 0;
	}
	if (!tr->started) {	/* a new tracee, before its first instruction */
		tr->started = 1;
		if (event == PTRACE_EVENT_STOP) {
			if (tr->detach) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				drop(t, i);
			} else {
				ptrace(PTRACE_CONT, tid, 0, 0);
			}
			return 0;
		}
	}
	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		return created(t, tr, event, ev);
	case PTRACE_EVENT_EXEC:
		/* a thread that was not the leader takes the leader's tid;
		 * its own is gone without a word (ptrace(2)) */
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 && (pid_t)msg != tid) {
			struct tracee *old = find(t, (pid_t)msg);

			if (old)
				drop(t, (size_t)(old - t->v));
			tr = find(t, tid);
		}
		if (tr) {
			tr->tgid = tid;
			if (tr->execs < 65535)
				tr->execs++;
		}
		t->pending = tid;
		*ev = (struct mw_ptree_event){ .kind = MW_PT_EXEC, .pid = tid,
					       .execs = tr ? tr->execs : 0 };
		return 1;
	case PTRACE_EVENT_EXIT:
		if (tid != tr->tgid) {	/* a thread */
			ptrace(PTRACE_CONT, tid, 0, 0);
			return 0;
		}
		tr->held = 1;
		*ev = (struct mw_ptree_event){ .kind = MW_PT_EXIT_STOP, .pid = tid };
		return 1;
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			ptrace(PTRACE_LISTEN, tid, 0, 0);
			if (tid != tr->tgid)
				return 0;
			*ev = (struct mw_ptree_event){ .kind = MW_PT_STOPPED, .pid = tid };
			return 1;
		}
		ptrace(PTRACE_CONT, tid, 0, 0);
		return 0;
	default:	/* the signal, as it was */
		ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
		return 0;
	}
}

int mw_ptree_next(struct mw_ptree *t, struct mw_ptree_event *ev)
{
	if (t->pending) {
		ptrace(PTRACE_CONT, t->pending, 0, 0);
		t->pending = 0;
	}
	for (size_t i = 0; i < t->n;) {
		struct tracee *tr = &t->v[i];
		pid_t tid = tr->tid, tgid = tr->tgid;
		int st;
		pid_t w = waitpid(tid, &st, WNOHANG | __WALL);

		if (w == 0) {
			i++;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w > 0 && WIFSTOPPED(st)) {
			if (stopped(t, i, st, ev))
				return 1;
			continue;	/* the same index again: it may be another now */
		}
		/* ended (or ECHILD: gone without a word, a thread of an exec) */
		if (tr->letgo) {	/* released: no event of it any more */
			drop(t, i);
			continue;
		}
		drop(t, i);
		if (tid == tgid) {
			if (t->live)
				t->live--;
			*ev = (struct mw_ptree_event){ .kind = MW_PT_EXITED, .pid = tid,
						       .status = w > 0 ? st : -1 };
			return 1;
		}
	}
	return 0;
}

int mw_ptree_hold(struct mw_ptree *t, pid_t pid)
{
	struct tracee *tr = find(t, pid);

	if (!tr || t->pending != pid)
		return -1;
	t->pending = 0;
	tr->held = 1;
	return 0;
}

void mw_ptree_release(struct mw_ptree *t, pid_t pid)
{
	struct tracee *tr = find(t, pid);

	if (tr && tr->held) {
		tr->held = 0;
		ptrace(PTRACE_CONT, pid, 0, 0);
	}
}

int mw_ptree_let_go(struct mw_ptree *t, pid_t pid, int *busy, char *why, size_t len)
{
	struct tracee *lead = find(t, pid);

	*busy = 0;
	if (!lead || lead->tgid != pid || lead->letgo || lead->detach) {
		snprintf(why, len, "process %d is not a process this run traces", (int)pid);
		return -1;
	}
	if (lead->held) {	/* the caller reads it there, then lets it go on */
		*busy = 1;
		snprintf(why, len, "process %d is held at its exit or exec stop, being read",
			 (int)pid);
		return -1;
	}
	for (size_t i = 0; i < t->n;) {
		struct tracee *tr = &t->v[i];

		if (tr->tgid != pid) {
			i++;
			continue;
		}
		if (tr->tid == t->pending) {	/* stopped, the caller done with it */
			ptrace(PTRACE_DETACH, tr->tid, 0, 0);
			t->pending = 0;
			drop(t, i);
			continue;
		}
		/* running (or stopped, not yet waited for): stops at once,
		 * seen by mw_ptree_next */
		tr->letgo = 1;
		ptrace(PTRACE_INTERRUPT, tr->tid, 0, 0);
		i++;
	}
	if (t->live)
		t->live--;
	return 0;
}

size_t mw_ptree_live(const struct mw_ptree *t)
{
	return t ? t->live : 0;
}

unsigned long mw_ptree_untraced(const struct mw_ptree *t)
{
	return t ? t->untraced : 0;
}

void mw_ptree_free(struct mw_ptree *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}
