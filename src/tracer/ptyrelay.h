/* ptyrelay.h - a pseudo-terminal of its own for a program run as another
 * user, relayed to the real terminal (what sudo's use_pty does).
 *
 * Under sudo mallocwatch runs the program as the invoking user.  Left on
 * root's terminal, that program shares root's session and controlling
 * terminal, and with TIOCSTI (dev.tty.legacy_tiocsti=1) it can push
 * "id -u >/tmp/x\n" into root's input queue: root's shell runs it once
 * mallocwatch has exited.  So when privileges are dropped and stdin is a
 * terminal, the program gets a pty pair instead:
 *
 *	root's terminal (fd 0)  --keys-->  pty master  -->  slave: program's 0
 *	root's terminal (fd 1)  <-------   pty master  <--  slave: program's 1/2
 *
 * The slave gets the real terminal's modes and window size and is the
 * program's controlling terminal in a session of its own (setsid,
 * TIOCSCTTY); it replaces only those of fds 0, 1, 2 that were terminals
 * (a stdout redirected to a file stays that file).  The real terminal is
 * put in raw input mode (no echo, no line editing, no signal keys: ^C,
 * ^Z, ^\ reach the pty's line discipline and become signals to the
 * program's foreground process group there); output processing (OPOST)
 * is left on, so mallocwatch's own lines on stderr still end in CR LF.
 * A thread relays keys to the master and the master's output to the real
 * terminal (stdout when it is one, else stderr, else the terminal stdin
 * names), and SIGWINCH's new window size to the pty.
 *
 * ^Z: the program leads its session and has no parent inside it, so its
 * process group is orphaned and the kernel drops SIGTSTP, SIGTTIN and
 * SIGTTOU from its terminal: ^Z does nothing (never a stopped program
 * behind a raw terminal; a shell run as the program still stops its own
 * jobs).  sudo's monitor process, the command's parent in its session,
 * is what lets ^Z stop a command under sudo; mallocwatch must stay the
 * program's parent (ptrace, exit status).  A program stopped otherwise
 * (SIGSTOP) suspends mallocwatch: mw_pty_suspend().
 *
 * The real terminal's modes are restored when the relay ends, at exit()
 * (atexit) and while mallocwatch suspends itself with a program stopped
 * from the terminal (mw_pty_suspend).  A SIGKILLed mallocwatch (or one
 * killed by a signal it does not catch) cannot restore them; as with sudo,
 * `stty sane` or `reset` does.
 *
 * Not thread-safe; one relay at a time.
 */
#ifndef MALLOCWATCH_PTYRELAY_H
#define MALLOCWATCH_PTYRELAY_H

#include <stddef.h>
#include <sys/types.h>

struct mw_pty;

/* Before forking a program that will run as uid (-1: not dropping
 * privileges): when uid is not -1 and stdin is a terminal, open a pty
 * pair (both ends close-on-exec) with the terminal's modes and window
 * size, its slave owned by uid, and set *out; otherwise *out = NULL (no
 * pty: the program gets mallocwatch's descriptors as before).  0, or -1
 * with a one-line reason in err. */
int mw_pty_open(struct mw_pty **out, uid_t uid, char *err, size_t errlen);

/* In the forked child, as root, before anything else: a session of its
 * own with the slave as controlling terminal, the slave on those of 0, 1
 * and 2 that were terminals.  Nothing when pty is NULL.  0, or -1 with
 * errno set.  Only async-signal-safe calls. */
int mw_pty_child(const struct mw_pty *pty);

/* In mallocwatch, when the program is released: close mallocwatch's copy
 * of the slave, put the real terminal in raw mode and start the relay
 * thread.  Nothing when pty is NULL.  0, or -1 (errno set; the terminal
 * is left as it was and nothing is relayed). */
int mw_pty_start(struct mw_pty *pty);

/* The program is stopped (a group-stop: SIGSTOP, or SIGTSTP, SIGTTIN,
 * SIGTTOU sent by a process) and left stopped: do as sudo does - restore
 * the real terminal, stop mallocwatch's own process group with SIGTSTP
 * (the shell gets the terminal back), and once continued put the
 * terminal back in raw mode if mallocwatch is in the foreground.  In an
 * orphaned process group (no job-control shell above mallocwatch) the
 * kernel drops that SIGTSTP and this returns at once.  Returns 1 when
 * the relay runs: the caller then sends the program SIGCONT (it never
 * stays stopped behind a raw terminal); 0 when pty is NULL or not
 * relaying. */
int mw_pty_suspend(struct mw_pty *pty);

/* After the program exited (or was never released): relay what it left
 * on the master until EIO (every slave closed; at most 1 s more without
 * output when a process it left holds the slave), stop the relay,
 * restore the real terminal, close and free everything.  NULL is a
 * no-op. */
void mw_pty_close(struct mw_pty *pty);

#endif /* MALLOCWATCH_PTYRELAY_H */
