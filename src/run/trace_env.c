/* trace_env.c - what decides a traced run's arena counts (struct
 * mw_environment, report.h): the glibc version, online CPUs and those the
 * target may use, GLIBC_TUNABLES and MALLOC_* variables, for a baseline
 * to be compared on (metrics.h mw_check_env).  Moved out of trace_run.c.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdtnote.h"
#include "trace_run.h"
#include "xalloc.h"

/* "K=V" of the variables in a NUL- or newline-separated block that arena
 * counts depend on, into malloc_vars / tunables. */
static void env_vars(const char *block, size_t len, struct mw_environment *e)
{
	size_t n = 0;

	for (const char *p = block; p < block + len; p += strlen(p) + 1) {
		if (strncmp(p, "GLIBC_TUNABLES=", 15) == 0)
			snprintf(e->tunables, sizeof(e->tunables), "%s", p + 15);
		else if (strncmp(p, "MALLOC_", 7) == 0 && n < sizeof(e->malloc_vars) - 2)
			n += (size_t)snprintf(e->malloc_vars + n, sizeof(e->malloc_vars) - n, "%s%s",
					      n ? " " : "", p);
	}
}

/* What decides arena counts in this run (struct mw_environment). */
void mw_run_environment(const struct trace_opts *o, const struct mw_elf *libc,
			const char *runtime, struct mw_environment *e)
{
	pid_t pid = mw_procset_first(&o->procs);	/* -p's process; 0: -c */
	cpu_set_t set;

	memset(e, 0, sizeof(*e));
	e->glibc_minor = mw_elf_glibc_minor(libc);
	e->nproc = sysconf(_SC_NPROCESSORS_ONLN);
	e->cpus = sched_getaffinity(pid, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : e->nproc;
	e->runtime = runtime;
	e->version = MW_VERSION;
	if (pid) {	/* the target's own environment */
		char path[64], *buf = xmalloc(1 << 16);
		int fd;
		ssize_t len = 0;

		snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
			len = read(fd, buf, (1 << 16) - 1);
			close(fd);
		}
		if (len > 0) {
			buf[len] = '\0';
			env_vars(buf, (size_t)len, e);
		}
		free(buf);
	} else {	/* -c: the program gets ours */
		for (char **v = environ; *v; v++)
			env_vars(*v, strlen(*v) + 1, e);
	}
}
