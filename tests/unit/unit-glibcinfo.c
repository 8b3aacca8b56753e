/* unit-glibcinfo.c - the layouts a -c run reads while its tracer loads
 * (mw_glibc_preload, src/live/glibcinfo.c) are the ones a process
 * mapping that libc file gives, and mw_glibc_load of such a process then
 * reads no DWARF.  A process runs /bin/sleep under the probe-enabled
 * glibc (its loader and --library-path, as bench/ runs programs); its
 * layouts are read cold, then again after a preload of the libc file,
 * and compared.  A preload of what is no libc (a program, no file, a
 * directory, a FIFO) fails, without waiting, and keeps nothing.
 * Root (map_files) and the probe-enabled glibc (make glibc), else 77. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glibcinfo.h"
#include "unit.h"

/* The process maps libc (its loader has mapped it), or waited 10 s. */
static int maps_file(pid_t pid, const char *libc)
{
	char path[64], line[4096];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "re");
		int found = 0;

		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, libc))
				found = 1;
		if (f)
			fclose(f);
		if (found)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* What a load gives that is the file's, not the process's name for it. */
static int same_layouts(const struct mw_glibc *a, const struct mw_glibc *b)
{
	size_t from = offsetof(struct mw_glibc, main_arena);
	size_t to = offsetof(struct mw_glibc, ncode) + sizeof(a->ncode);
	size_t rest = offsetof(struct mw_glibc, mstate_size);

	return a->version_minor == b->version_minor && a->safe_linking == b->safe_linking &&
	       memcmp((const char *)a + from, (const char *)b + from, to - from) == 0 &&
	       memcmp((const char *)a + rest, (const char *)b + rest,
		      sizeof(*a) - rest) == 0;
}

int main(void)
{
	const char *prefix = getenv("MW_GLIBC_PREFIX");
	char libc[4200], loader[4200], lib[4096], err[8192];
	struct mw_glibc *cold = calloc(1, sizeof(*cold)), *warm = calloc(1, sizeof(*warm));
	unsigned long n;
	pid_t pid;
	int st;

	if (geteuid() != 0) {
		printf("needs root (/proc/PID/map_files)\n");
		return 77;
	}
	if (!prefix || !*prefix)
		prefix = "/var/cache/mallocwatch/glibc";
	snprintf(lib, sizeof(lib), "%s/lib", prefix);
	snprintf(libc, sizeof(libc), "%s/libc.so.6", lib);
	snprintf(loader, sizeof(loader), "%s/ld-linux-x86-64.so.2", lib);
	if (access(libc, R_OK) != 0 || access(loader, X_OK) != 0) {
		printf("no probe-enabled glibc at %s (make glibc)\n", prefix);
		return 77;
	}
	if (!cold || !warm)
		return 99;
	if ((pid = fork()) == 0) {
		execl(loader, loader, "--library-path", lib, "/bin/sleep", "30", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || !maps_file(pid, libc)) {
		printf("the sleeper never mapped %s\n", libc);
		kill(pid, SIGKILL);
		return 99;
	}

	/* cold: read from the process's mapping */
	mw_glibc_cache_reset();
	n = mw_glibc_dwarf_reads();
	CHECK(mw_glibc_load(pid, cold, err, sizeof(err)) == 0, "cold load: %s", err);
	CHECK(mw_glibc_dwarf_reads() == n + 1, "a cold load read %lu files",
	      mw_glibc_dwarf_reads() - n);
	CHECK(cold->main_arena && cold->mp && cold->mstate_size > 0 && cold->ncode > 0,
	      "cold load: main_arena %#llx mp %#llx malloc_state %lld bytes, %d code ranges",
	      (unsigned long long)cold->main_arena, (unsigned long long)cold->mp,
	      (long long)cold->mstate_size, cold->ncode);

	/* preloaded: the file by its path, then the process */
	mw_glibc_cache_reset();
	n = mw_glibc_dwarf_reads();
	CHECK(mw_glibc_preload(libc, err, sizeof(err)) == 0, "preload: %s", err);
	CHECK(mw_glibc_dwarf_reads() == n + 1, "the preload read %lu files",
	      mw_glibc_dwarf_reads() - n);
	CHECK(mw_glibc_preload(libc, err, sizeof(err)) == 0, "preload again: %s", err);
	CHECK(mw_glibc_load(pid, warm, err, sizeof(err)) == 0, "load after the preload: %s", err);
	CHECK(mw_glibc_dwarf_reads() == n + 1,
	      "the load after the preload read the libc again (%lu reads)",
	      mw_glibc_dwarf_reads() - n);
	CHECK(same_layouts(cold, warm), "the preloaded layouts differ from the cold load's "
	      "(main_arena %#llx/%#llx, mp %#llx/%#llx, ms_top %lld/%lld)",
	      (unsigned long long)cold->main_arena, (unsigned long long)warm->main_arena,
	      (unsigned long long)cold->mp, (unsigned long long)warm->mp,
	      (long long)cold->ms_top.off, (long long)warm->ms_top.off);
	CHECK(strcmp(cold->module, warm->module) == 0, "module '%s' against '%s'",
	      cold->module, warm->module);

	/* no libc: refused, nothing kept (the next load reads the file) */
	mw_glibc_cache_reset();
	n = mw_glibc_dwarf_reads();
	CHECK(mw_glibc_preload("/bin/sleep", err, sizeof(err)) < 0, "a preload of /bin/sleep");
	CHECK(strstr(err, "/bin/sleep") != NULL, "the reason names the file: %s", err);
	CHECK(mw_glibc_preload("/nonexistent/libc.so.6", err, sizeof(err)) < 0 &&
	      strstr(err, "cannot open") != NULL, "a preload of no file: %s", err);
	CHECK(mw_glibc_preload("/proc", err, sizeof(err)) < 0, "a preload of a directory");
	{	/* a FIFO where the libc was expected: refused, not waited on */
		char dir[] = "/tmp/unit-glibcinfo.XXXXXX", fifo[64];

		if (mkdtemp(dir)) {
			snprintf(fifo, sizeof(fifo), "%s/libc.so.6", dir);
			CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s", fifo);
			CHECK(mw_glibc_preload(fifo, err, sizeof(err)) < 0 &&
			      strstr(err, "not a regular file") != NULL, "a preload of a FIFO: %s",
			      err);
			unlink(fifo);
			rmdir(dir);
		}
	}
	CHECK(mw_glibc_load(pid, warm, err, sizeof(err)) == 0, "load after refusals: %s", err);
	CHECK(mw_glibc_dwarf_reads() == n + 2, "after a refused preload the load read %lu files",
	      mw_glibc_dwarf_reads() - n);

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	free(cold);
	free(warm);
	if (!failed)
		printf("ok: preloaded layouts equal the cold load's, and no DWARF read after\n");
	return failed ? 1 : 0;
}
