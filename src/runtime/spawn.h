/* spawn.h - the helper processes a run starts and waits for (the
 * tracer, stap's compiles, cp and rm for the kernel runtime's mended
 * sources: kmod_sources.h), apart from the program itself (tracer_proc.h).
 *
 * Every child gets SIGINT, SIGTERM and SIGHUP at their default actions
 * and no descriptor of mallocwatch's but stdin/stdout/stderr.
 */
#ifndef MALLOCWATCH_SPAWN_H
#define MALLOCWATCH_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

/* In a child before exec: every descriptor past stderr close-on-exec
 * (close_range(2), else each of 3..1023), so nothing of mallocwatch's
 * (the saved stream, reports, libdw's files) reaches the program or the
 * tracer, whoever opened it and however. */
void mw_cloexec_from_3(void);

/* fork+exec argv (PATH searched) in cwd (NULL: this one) with stderr on a
 * new pipe, its read end in *err_fd, and stdout on another, its read end
 * in *out_fd (out_fd NULL: stdout to /dev/null).  The child gets its own
 * process group, SIGPIPE ignored, SIGTERM when mallocwatch dies
 * (PR_SET_PDEATHSIG) and, when preload is not NULL, LD_PRELOAD=preload
 * (else LD_PRELOAD unset), and when sites is not NULL MW_UMULTI_SITES=sites
 * (the probe sites umulti-shim.so may arm early: gen.h, sites_out; else
 * unset).  Returns the pid (the caller's to reap), or -1 with errno set
 * when a pipe or the fork failed; an exec failure is the child's exit
 * status 127 and a line on its stderr. */
pid_t mw_tracer_spawn(char *const argv[], const char *cwd, const char *preload,
		      const char *sites, int *out_fd, int *err_fd);

/* Run argv (PATH searched) in cwd (NULL: this one) to its end, its stdout
 * to /dev/null and its stderr collected.  0 when it exited with status 0;
 * -1 with msg (len bytes) set to the first line of its stderr that says
 * "error" (else its first line), or to why it could not start; -2 when a
 * signal was caught meanwhile (signals.h): its process group got SIGTERM,
 * the signal is left pending. */
int mw_run_capture(char *const argv[], const char *cwd, char *msg, size_t len);

#endif /* MALLOCWATCH_SPAWN_H */
