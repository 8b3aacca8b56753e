/* tracer_int.h - what tracer.c's run loop shares with tracer_set.c
 * (the tracer's set of processes: -f's, --cgroup's joiners, serve's,
 * --repeat's runs), which calls nothing of tracer.c, and with the files
 * the loop's parts are in: tracer_read.c (the tracer's lines, the
 * answers asked for), tracer_repeat.c (--repeat's next run),
 * tracer_target.c (the program started, held, released), tracer_start.c, tracer_end.c, tracer_after.c (after the loop).  Not a
 * public interface: tracer.h is. */
#ifndef MALLOCWATCH_TRACER_INT_H
#define MALLOCWATCH_TRACER_INT_H

#include <poll.h>
#include <stddef.h>
#include <sys/types.h>

#include "pidset.h"
#include "ptrace_tree.h"
#include "ptyrelay.h"
#include "tracer.h"

/* One run of the tracer: tracer.c's state, its loop's and the set's. */
struct linebuf {
	char buf[8192];
	size_t len;
};

struct run {
	const struct mw_tracer_opts *o;
	struct mw_trace_result *r;
	const struct mw_consumer *c;	/* what is done with the events */
	pid_t prog, tracer;
	int tracer_fd;		/* pidfd of the tracer; -1 once reaped */
	int hold_w;		/* write end of the hold pipe; -1 once released */
	struct mw_pty *pty;	/* -c under sudo on a terminal: the program's own */
	int out_fd, err_fd;	/* tracer stdout/stderr; -1 at EOF */
	int pidfd;		/* the traced process; -1 once it exited */
	pid_t *watch;		/* -p PID,PID,...: the others, then the cgroup's
				 * joiners: the processes watched in turn */
	size_t nwatch, capwatch, next_more;	/* next_more: the next to watch */
	pid_t *known;		/* --cgroup: pids seen in it (traced or not) */
	size_t nknown, capknown;
	long long next_cgroup;	/* mw_now_ms() of the next look at it */
	struct mw_pidset *pids;	/* -f, --cgroup: the tracer's set */
	int pids_failed;	/* it could not be opened (warned) */
	int stopping;		/* SIGINT sent to the tracer on a signal of ours */
	int uprobes_left;	/* its uprobe definitions when last counted */
	struct mw_ptree *pt;	/* -c: the program (and -f's tree) under ptrace */
	int tree_over;		/* -c: every process of it has ended */
	long long stop_at;	/* --duration: when to stop, once ready; 0 none */
	char module[64];	/* bpf: stap -m mallocwatch_PID_XXXXXX; kernel:
				 * the module's loaded name (runtime.h) */
	/* the flush at the program's exit (tracer.h) */
	int flush_fd;		/* the procfs file, open while it runs; -1 */
	int flushing;		/* the program is held at its exit stop */
	pid_t flush_pid;	/* -c: which process is held there */
	int end_seen;		/* MW_LINE_END arrived */
	long long flush_start, flush_until, end_at;
	int detach_bg;		/* tracer left to detach; loop ends */
	long long next_sample;	/* mw_now_ms() of the next sample; 0 none yet */
	int samples_taken;	/* samples asked of the consumer's sample so far */
	int sample_fd;		/* the sample FIFO, asked and not yet answered; -1 */
	int *errpipe;		/* -c: the program's exec error comes on it */
	int run_i;		/* -c --repeat: the run under way, from 0 */
	int late_flush;		/* --repeat: the flush after the series ended
				 * early was asked (once) */
	struct linebuf out, errb;
	struct mw_linger *lg;	/* --linger: the session armed or joined */
	int handback;		/* drained: the tracer goes back to it */
	/* the images (mw_procset_ptraced): the exec file asked (-1), the
	 * process held at its exec stop until exec_line came (exec_seen) or
	 * exec_until, those held waiting for their turn */
	unsigned long set_added;	/* processes put in the set so far */
	int exec_fd;
	pid_t exec_pid;
	int exec_seen;
	long long exec_until;
	int exec_got;		/* bytes of exec_fd's answer so far */
	long long exec_reask;	/* asked again then (ms), when not 0 */
	long long exec_owed_until;	/* its line came, its old image's streamed
				 * events not all: held until then (ms), or 0 */
	char exec_line[32];
	char exec_late[32];	/* the exec line of one that was not answered in
				 * time: dropped when it comes late (its image's
				 * figures stay refused) */
	unsigned long exec_mixed;	/* processes whose images mixed (warned once) */
	pid_t exec_wait[MW_EXEC_WAIT_MAX];	/* tracer.h */
	size_t nexec_wait;
	struct mw_release_srv *rel;	/* -f: release.h's socket; NULL */
	int rel_tried;		/* it was made (or could not be) */
};

/* tracer_end.c: the held exec's end, once MW_LINE_EXEC came or waiting
 * ran out (mw_procset_ptraced) */
void mw_tr_exec_check(struct run *rn);

/* tracer_start.c: the run's module name, and its script compiled (or a
 * session's module taken): the object's path into bo.  0, or -1 with err
 * (r->interrupted set when a signal stopped the compile).  Then the
 * tracer: a joined session's; one that a session armed here starts
 * (--linger); else our own child.  0, or -1 with errno set. */
int mw_tr_compile(struct run *rn, char *bo, size_t bolen, char *err, size_t errlen);
int mw_tr_start_tracer(struct run *rn, const char **argv);

/* tracer_set.c: open the tracer's set once its maps exist (-f, --cgroup,
 * serve, --repeat, an untargeted session; warned when it cannot be); add
 * pid to it (counted in r->set_failed when it cannot be); put the run's
 * own processes in an untargeted session's empty set (runtime.h); look
 * at the cgroup or serve's list for processes that joined or left (every
 * MW_CGROUP_POLL_MS, MW_SERVE_POLL_MS). */
void mw_tr_open_set(struct run *rn);
void mw_tr_set_add(struct run *rn, pid_t pid);
void mw_tr_set_start(struct run *rn);
void mw_tr_cgroup_look(struct run *rn);

/* tracer_set.c, -f: listen for `mallocwatch release` (release.h) once
 * the tree is traced, and serve the requests waiting (rn->rel), at most
 * MW_RELEASE_ACCEPTS new connections a call (one a wake-up of the loop). */
void mw_tr_release_serve(struct run *rn);

/* Append pid to the growing array *v (*n of *cap). */
void mw_tr_pid_push(pid_t **v, size_t *n, size_t *cap, pid_t pid);

/* How long an asked procfs probe may take to answer before its FIFO is
 * closed anyway (mw_procfs_settle), ms. */
#define PROCFS_SETTLE_MS 100

/* tracer_end.c: signal a child of ours through its pidfd (kill(2) on pid
 * before Linux 5.3, safe while it is our unreaped child). */
void mw_tr_signal_child(int pidfd, pid_t pid, int sig);

/* tracer_end.c: the program's end.
 * mw_tr_flush_wait: at the ready line, wait (bounded) until the flush
 *   (or drain) file the flush will read is there: stapbpf makes its FIFOs
 *   after its begin probe has run.
 * mw_tr_flush_ask: read the script's flush (or, --linger, drain) file so
 *   the tracer prints its aggregates and MW_LINE_END now; 1 when asked, 0
 *   when it cannot be (warned).
 * mw_tr_stop_attach: -p's end: flush when the tracer can answer, else
 *   stop it (its end probe prints the aggregates).
 * mw_tr_flush_check: complete the flush when MW_LINE_END and every event
 *   it counted came, or waiting ran out (FLUSH_WAIT_MS); then
 *   mw_tr_flush_end: the held leader goes on; -p: the tracer is stopped
 *   and left to remove its uprobes.
 * mw_tr_reap_program: collect the program's (tree's) state changes; with
 *   wait, block until it has ended; 1 once it has (r->status set).
 * mw_tr_signal_tracer, mw_tr_stop_tracer: signal the tracer; SIGINT it
 *   once a sample asked for is answered.
 * mw_tr_program_exited: the watched process is gone: watch the next of
 *   -p's list, or end the run (flush, hand back to a --linger session, or
 *   stop the tracer). */
void mw_tr_flush_wait(struct run *rn);
int mw_tr_flush_ask(struct run *rn);
void mw_tr_stop_attach(struct run *rn);
void mw_tr_flush_check(struct run *rn);
void mw_tr_flush_end(struct run *rn);
int mw_tr_reap_program(struct run *rn, int wait);
void mw_tr_signal_tracer(struct run *rn, int sig);
void mw_tr_stop_tracer(struct run *rn);
void mw_tr_program_exited(struct run *rn);

/* tracer_target.c: the program.
 * mw_tr_release: let the held program (-c) run: its terminal relayed
 *   (killed when it cannot be), the hold pipe written and closed.
 * mw_tr_attach_tree: -p -f: the process and its threads under ptrace
 *   from now, its new processes followed (r->ptrace_msg when not).
 * mw_tr_start_target: -c: the program forked and held (seized for its
 *   exit stop when the consumer has at_exit), its exec error on
 *   *errpipe; -p: the process.  0, or -1 with err. */
void mw_tr_release(struct run *rn);
void mw_tr_attach_tree(struct run *rn);
int mw_tr_start_target(struct run *rn, int *errpipe, char *err, size_t errlen);

/* tracer_target.c: the program's ptrace stops (its exec, its exit, a
 * child's) wake the run loop's poll: SIGCHLD writes a byte to
 * mw_tr_chld_pipe[1] (made once, both ends non-blocking and
 * close-on-exec; -1 when it could not be); the loop polls
 * mw_tr_chld_pipe[0] and empties it with mw_tr_chld_drain before it
 * reaps the stops. */
extern int mw_tr_chld_pipe[2];
void mw_tr_chld_drain(void);

/* tracer_read.c: what the loop reads.
 * mw_tr_stdout_line: one line of the tracer's stdout (the ready line's
 *   work, skipped counts, the exec and end lines noted; the consumer's
 *   line), also the lines a joined session's tracer printed before.
 * mw_tr_read_ready: what poll() found (p[0..n) as loop() polls them):
 *   the tracer's stdout and stderr, each closed at EOF, and the answers
 *   of the asked procfs files.
 * mw_tr_sample_due: a sample (or serve's live reading) asked when it is
 *   time; the poll timeout until the next, at most max_ms. */
void mw_tr_stdout_line(struct run *rn, char *line);
void mw_tr_read_ready(struct run *rn, const struct pollfd *p, int n);
int mw_tr_sample_due(struct run *rn, int max_ms);

/* tracer_repeat.c, --repeat: the run's program (its tree) has ended:
 * start the next run, or ask the flush once when the series ended early.
 * 1 while the session goes on; 0 when the run is over. */
int mw_tr_more_runs(struct run *rn);

/* tracer_after.c.
 * mw_tr_after_loop: the tracer left detaching, or reaped (name: its
 *   argv[0]) and how the run ended told.  0, or -1 with err.
 * mw_tr_end_run: close what the run still holds; a program never
 *   released is killed before its first instruction. */
int mw_tr_after_loop(struct run *rn, int errpipe, const char *name, char *err,
		     size_t errlen);
void mw_tr_end_run(struct run *rn, int errpipe);

#endif /* MALLOCWATCH_TRACER_INT_H */
