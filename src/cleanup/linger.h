/* linger.h - a tracer session that stays armed for a bounded idle time
 * after a -c run and serves the next run of the same script (--linger
 * SECONDS, MALLOCWATCH_LINGER): separate invocations back to back then
 * arm the uprobes once, and none waits behind the removal of an earlier
 * run's (about 0.11 s a site, serialized by the kernel's event_mutex;
 * docs/platform.md).
 *
 * The session is a process of its own, forked by the run that arms it
 * before its tracer starts, so that stapbpf is its child (stapbpf dies
 * with its parent: PR_SET_PDEATHSIG) and lives on after that run's
 * mallocwatch has exited.  It holds the tracer's stdout and stderr and
 * the work directory's lock (a live run for sweeps: leftovers.h), and
 * listens on a unix socket (SOCK_SEQPACKET) named after the script:
 *
 *	/run/mallocwatch/linger/1f3a9c0e5b7d2a64
 *
 * The directory is root's, mode 0700, checked from / down without
 * following links (fsutil.h mw_dir_open_safe) and used through its
 * descriptor; both ends check each other with SO_PEERCRED (uid 0).  A
 * later run of the same script asks it (one message):
 *
 *	JOIN                      the first line, then
 *	LIBC DEV INO BUILDID      the traced libc file, then the script, byte for byte
 *
 * and gets, when the session is idle and the libc and script are the
 * same, "OK TRACER MODULE" and the script's declarations and ready line,
 * one per line, with the tracer's stdout and stderr (SCM_RIGHTS);
 * otherwise "BUSY" or "NO" (the run arms a tracer of its own).  The run
 * then adds its program to the set (pidset.h), reads the stream, and at
 * its exit stop takes its program out of the set and reads the drain
 * probe (gen.h opts->linger): its aggregates, the maps emptied.  It
 * sends "DONE" and closes; the session is idle again for the linger
 * time, then stops its tracer (SIGINT: the uprobes go), waits for it,
 * removes what it left and exits.  A run that could not drain, or went
 * away without DONE, ends the session.
 */
#ifndef MALLOCWATCH_LINGER_H
#define MALLOCWATCH_LINGER_H

#include <stddef.h>
#include <sys/types.h>

#include "runtime.h"

/* The longest idle time a session may linger, seconds. */
#define MW_LINGER_MAX_S 600
/* Where sessions listen; MW_LINGER_DIR_ENV names another (tests), which
 * must pass the same checks. */
#define MW_LINGER_DIR "/run/mallocwatch/linger"
#define MW_LINGER_DIR_ENV "MALLOCWATCH_LINGER_DIR"

/* A run's hold on a session: the one it armed or joined. */
struct mw_linger {
	int fd;			/* the connection to the session process */
	int armed;		/* this run armed it */
	pid_t tracer;		/* stapbpf, the session's child */
	char module[64];	/* its stap module name (runtime.h) */
	int out_fd, err_fd;	/* the tracer's stdout, stderr (the run's
				 * until it leaves; -1 once taken) */
	char **pre;		/* the script's lines up to its ready line */
	size_t npre, cpre;
};

/* The session name of script (a path) on the libc file libc_path: 16
 * hex digits of a hash of both (the libc by device, inode and build-id)
 * into key (at least 17 bytes); its identity line ("LIBC DEV INO
 * BUILDID") into id (idlen bytes).  0, or -1 when either cannot be
 * read. */
int mw_linger_key(const char *script, const char *libc_path, char *key, char *id,
		  size_t idlen);

/* Join the idle session key of the same libc (id) and script.  The hold,
 * or NULL with a one-line reason in why (none, busy, another script, a
 * rendezvous that is not root's); *busy set to 1 when a session of
 * root's answered but is serving another run (the run should then not
 * arm one that takes its name), else 0. */
struct mw_linger *mw_linger_join(const char *key, const char *id, const char *script,
				 int *busy, char *why, size_t whylen);

/* Arm a session: listen as key, fork the session process, which starts
 * the tracer argv (spawn.h, mw_tracer_spawn: preload and sites, in
 * workdir) and lingers linger_ms after each run.  The hold (tracer,
 * module, out_fd and err_fd filled), or NULL with a reason in why (the
 * caller then starts its tracer itself). */
struct mw_linger *mw_linger_arm(const char *key, const char *id, const char *script,
				long linger_ms, const char *workdir, const char *module,
				char *const argv[], const char *preload, const char *sites,
				char *why, size_t whylen);

/* An armed run's line of the tracer's stdout up to its ready line, kept
 * for the runs that join later. */
void mw_linger_pre(struct mw_linger *l, const char *line);

/* Let go of the session: drained (the run's aggregates were drained and
 * its process left the set): DONE, the session serves the next run;
 * else it ends.  Closes and frees l; NULL is fine. */
void mw_linger_leave(struct mw_linger *l, int drained);

/* 1 when this process armed a session: the work directory is the
 * session's now (it removes it when it ends). */
int mw_linger_armed(void);

#endif /* MALLOCWATCH_LINGER_H */
