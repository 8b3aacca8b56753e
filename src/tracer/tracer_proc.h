/* tracer_proc.h - the processes a run starts and talks to, for the run
 * loop (tracer.c): the tracer (stap, stapbpf) and stap's compile of a
 * bpf object, the program held before its first instruction, and the
 * script's procfs files (protocol.h: MW_FLUSH_FILE, MW_SAMPLE_FILE).
 *
 * Every child gets SIGINT, SIGTERM and SIGHUP at their default actions
 * and no descriptor of mallocwatch's but stdin/stdout/stderr.
 */
#ifndef MALLOCWATCH_TRACER_PROC_H
#define MALLOCWATCH_TRACER_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "ptyrelay.h"
#include "runtime.h"
#include "spawn.h"
#include "target.h"

/* Fork the program t (t->loader when set), on the pseudo-terminal pty
 * when not NULL (ptyrelay.h), held until a byte is written to *hold_w
 * (closing it unwritten kills the program before its first instruction),
 * then run as t's user.  An exec failure sends its errno (an int) on the
 * pipe whose read end is *errpipe_r.  Returns the pid (the caller's to
 * reap), or -1 with errno set. */
pid_t mw_program_start(const struct mw_target *t, const struct mw_pty *pty, int *hold_w,
		       int *errpipe_r);

/* The threads of process pid still there (its leader included), from
 * /proc/PID/status; -1 when unreadable. */
int mw_threads_of(pid_t pid);

/* Ask the procfs probe name of the script running as module under runtime
 * rt (runtime.h): the kernel runtime's probe runs in read() and the file
 * is closed again at once (*fd = -1; a failed read is a note when
 * verbose); stapbpf's runs when a reader opens its FIFO, and the FIFO
 * stays open in *fd until the answer is in: mw_procfs_answered().  0 when
 * asked, -1 with err set when the file cannot be opened. */
int mw_procfs_ask(enum mw_runtime rt, const char *module, int verbose, const char *name,
		  int *fd, char *err, size_t errlen);

/* poll() said revents about an asked FIFO *fd (nothing when -1): take
 * what is in it; close it (*fd = -1) once stapbpf has written its answer
 * and closed its end (POLLHUP, POLLERR, POLLNVAL).  Returns the bytes
 * taken (0 with *fd closed: a writer came and went without answering,
 * see mw_tr_exec_check()). */
int mw_procfs_answered(int *fd, short revents);

/* Before the tracer is stopped or left: wait at most ms milliseconds for
 * the answer on an asked FIFO *fd, then close it (*fd = -1). */
void mw_procfs_settle(int *fd, int ms);

/* The tracer's argv for the runtime env->rt into argv[] (at most 12
 * entries, NULL-terminated; its strings are object's and pidbuf's, which
 * must outlive it): stapbpf -w -x PID on the compiled object (a .bo), or
 * staprun -R -x PID on the compiled module (a .ko; loaded under the name
 * mw_kmod_loaded_name() gives); no -x PID when env->untargeted.  pidbuf
 * (at least 12 bytes) gets pid in decimal. */
void mw_tracer_argv(const struct mw_runtime_env *env, pid_t pid, char *pidbuf,
		    const char *object, const char **argv);

/* The -D flags of every kernel module's build, NULL-terminated: a probe
 * allowed 50,000,000 statements (MAXACTION: the dumps' and drains' loops
 * over the maps) and no overload check (STP_NO_OVERLOAD; tracer_proc.c
 * says why).  Part of the module's cache key. */
extern const char *const mw_kmod_defines[];

/* Compile script for the kernel runtime (stap -p4 -m NAME, in workdir;
 * env->kbuild when set) into a module whose path goes to ko (kolen
 * bytes), from SystemTap's runtime mended where it needs it (kmod_sources.h;
 * a warning when it cannot be), built with mw_kmod_defines.  NAME is MW_KMOD_PREFIX
 * and 16 hex digits of a hash of the script, the running kernel
 * (release, version, machine), env->kbuild, stap's file, those flags and the mend's
 * version: as root the module is kept in MW_CACHE_DIR/modules
 * (root's alone, 0700; cache.h: its bound, the least recently used going
 * first) and reused by every run of the same script on the same kernel
 * (*cached = 1), since a compile takes tens of seconds, and minutes in an
 * emulated guest; otherwise it stays in workdir.  A signal
 * caught meanwhile stops stap's process group and is left pending.  0,
 * or -1 with a one-line reason in err. */
int mw_tracer_compile_kernel(const struct mw_runtime_env *env, const char *script,
			     const char *workdir, char *ko, size_t kolen, int *cached,
			     char *err, size_t errlen);

/* The name the module ko (a path, its file name NAME.ko) is loaded under
 * by a `staprun -R` whose pid is staprun (it execs stapio, same pid):
 * NAME's head and "_PID", as long as NAME; into buf.  /proc/modules and
 * /proc/systemtap/ know it by that name. */
void mw_kmod_loaded_name(const char *ko, pid_t staprun, char *buf, size_t len);

/* Compile script for the bpf runtime (stap -p4 -m rn_module, in workdir;
 * env->kbuild when set) into workdir/rn_module.bo, whose path goes to bo
 * (bolen bytes).  The .bo does not hold the module's name (stapbpf takes
 * it from the file's name), so with cache set and as root it is kept in
 * MW_CACHE_DIR/modules (0700, root's; cache.h) as "bpf_" and 16 hex
 * digits of the same hash as a kernel module's, and a later run of the same script
 * copies it instead of compiling (about 0.2 s saved; -c runs, whose
 * scripts name no pid).  A signal caught meanwhile (signals.h) stops
 * stap's process group and is left pending.  0, or -1 with a one-line
 * reason in err (stap's first error line, or the signal); *cached 1
 * when the cache's copy was used.  The object, compiled or kept, has
 * stapbpf's internal map as an array (bpfobj.h). */
int mw_tracer_compile_bpf(const struct mw_runtime_env *env, const char *script,
			  const char *workdir, const char *rn_module, char *bo, size_t bolen,
			  int cache, int *cached, char *err, size_t errlen);

/* Why stap's compile failed, from its first error line msg, into err: a
 * kernel module's build (kernel 1) that fails on the kernel's
 * task_work_cancel_func() or uprobes API (Linux 6.12's) names that and
 * says to use --runtime=bpf; any other module build failure says that
 * --runtime=bpf needs no module; the bpf runtime's says stap's line. */
void mw_tracer_compile_why(int kernel, const char *msg, char *err, size_t errlen);

/* Why the tracer name ended with waitpid() status st, into msg (len
 * bytes): the signal that killed it or its non-zero exit status; msg is
 * left alone when it exited with 0. */
void mw_tracer_fate(const char *name, int st, char *msg, size_t len);

#endif /* MALLOCWATCH_TRACER_PROC_H */
