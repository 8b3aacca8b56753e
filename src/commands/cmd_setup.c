/* cmd_setup.c - `mallocwatch setup glibc`: build and cache the
 * probe-enabled glibc with the installed copy of scripts/build-glibc.sh,
 * the very script `make glibc` runs in the source tree, e.g.
 *
 *	$ sudo mallocwatch setup glibc
 *	build-glibc: building glibc 2.36-9+deb12u14 with --enable-systemtap into
 *	/var/cache/mallocwatch/glibc (about 15 minutes)
 *	build-glibc: done: 79 SDT notes in /var/cache/mallocwatch/glibc/lib/libc.so.6
 *
 * The script is looked for in the build tree first (build/mallocwatch's
 * ../scripts/), then in MW_LIBEXECDIR, where `make install` and the Debian
 * package put it.  It runs as root, so it must be as safe as the binary
 * that runs it: a regular file owned by root or by the binary's owner, in
 * directories owned by one of them, and none of them writable by anyone
 * else (a sticky directory on the way aside).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "msg.h"

static const char setup_usage[] =
"Usage: mallocwatch setup glibc\n"
"\n"
"Build the probe-enabled glibc and cache it where mallocwatch looks for it\n"
"($MW_GLIBC_PREFIX, default " MW_GLIBC_PREFIX "), as `make glibc`\n"
"does in the source tree, with the same script (build-glibc.sh, installed\n"
"in " MW_LIBEXECDIR ").  Debian builds its libc without\n"
"--enable-systemtap, so it has no SDT probes to trace; this builds\n"
"glibc from Debian's own source package of the installed libc6 (its\n"
"patches applied) with them.  As root, it installs what the build needs\n"
"when missing (gcc, make, gawk, bison, python3, dpkg-dev,\n"
"systemtap-sdt-dev) with apt-get, adds deb-src entries for apt's suites,\n"
"fetches the source with apt-get source and builds it in a fresh 0700\n"
"directory under $MW_GLIBC_WORKDIR (default /var/tmp): about 15 minutes\n"
"on 2 cores ($JOBS: make's jobs, default the CPU count).  The result is\n"
"moved into place only when complete.\n"
"\n"
"The system's libc is never replaced: a traced -c program runs on the\n"
"cached glibc in a mount namespace of its own (mallocwatch --help).  It\n"
"is built once, again only when the installed libc6's version changes;\n"
"with it current, or when the system libc has probes (Fedora, Ubuntu),\n"
"there is nothing to do.\n"
"\n"
"Options:\n"
"  --help               this text\n"
"\n"
"Exit status: 0 when the glibc is there (built now or before) or not\n"
"needed; 1 when it could not be built (the build's last log lines are\n"
"shown), or when it is missing and this is not run as root; 2 on a usage\n"
"error; 128+N when signal N ended the build.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch setup glibc\n"
"  sudo nice mallocwatch setup glibc && sudo mallocwatch -c ./app\n";

/* Is st owned by root or by owner, and writable by no one else? */
static int trusted(const struct stat *st, uid_t owner, int sticky_ok)
{
	if (st->st_uid != 0 && st->st_uid != owner)
		return 0;
	return !(st->st_mode & (S_IWGRP | S_IWOTH)) || (sticky_ok && (st->st_mode & S_ISVTX));
}

/* path (already resolved) and every directory above it trusted (see
 * above); 0, or -1 with the reason in err. */
static int check_script(const char *path, uid_t owner, char *err, size_t errlen)
{
	char d[PATH_MAX];
	struct stat st;
	char *slash;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", path);
		return -1;
	}
	if (!trusted(&st, owner, 0)) {
		snprintf(err, errlen, "'%s' (uid %u, mode %04o) may be changed by a user other than "
			 "root and the binary's owner: refused", path, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
		return -1;
	}
	snprintf(d, sizeof(d), "%s", path);
	while ((slash = strrchr(d, '/'))) {
		slash[slash == d] = '\0';	/* "/x" -> "/" */
		if (lstat(d, &st) < 0 || !S_ISDIR(st.st_mode) || !trusted(&st, owner, 1)) {
			snprintf(err, errlen, "'%s', a directory above '%s', may be changed by a user "
				 "other than root and the binary's owner: refused", d, path);
			return -1;
		}
		if (slash == d)
			break;
	}
	return 0;
}

/* The script NAME: build/../scripts/NAME beside our binary (the source
 * tree), else MW_LIBEXECDIR/NAME, resolved into out and checked. */
static int find_script(const char *name, char *out, char *err, size_t errlen)
{
	char exe[PATH_MAX], cand[PATH_MAX + 32];
	struct stat st;
	char *slash;

	if (!realpath("/proc/self/exe", exe) || stat(exe, &st) < 0) {
		snprintf(err, errlen, "cannot find our own binary: %s", strerror(errno));
		return -1;
	}
	if ((slash = strrchr(exe, '/')))
		*slash = '\0';
	snprintf(cand, sizeof(cand), "%s/../scripts/%s", exe, name);
	if (!realpath(cand, out)) {
		snprintf(cand, sizeof(cand), "%s/%s", MW_LIBEXECDIR, name);
		if (!realpath(cand, out)) {
			snprintf(err, errlen, "%s is not installed (looked in '%s' and '%s/../scripts')",
				 name, MW_LIBEXECDIR, exe);
			return -1;
		}
	}
	return check_script(out, st.st_uid, err, errlen);
}

/* sh SCRIPT PREFIX, waited for; its exit status (128+N for signal N).
 * We ignore ^C while it runs: the script cleans up after its own. */
static int run_script(const char *script, const char *prefix)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oterm;
	int st;
	pid_t pid;

	fflush(NULL);
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGTERM, &ign, &oterm);
	if ((pid = fork()) < 0)
		mw_die(MW_EXIT_RUNTIME, "cannot fork: %s", strerror(errno));
	if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGTERM, &oterm, NULL);
		execl("/bin/sh", "sh", script, prefix, (char *)NULL);
		fprintf(stderr, "mallocwatch: cannot run /bin/sh: %s\n", strerror(errno));
		_exit(MW_EXIT_RUNTIME);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			mw_die(MW_EXIT_RUNTIME, "cannot wait for '%s': %s", script, strerror(errno));
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGTERM, &oterm, NULL);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st) == 0 ? MW_EXIT_OK : MW_EXIT_RUNTIME;
}

int cmd_setup(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prefix = getenv("MW_GLIBC_PREFIX");
	char script[PATH_MAX], err[3 * PATH_MAX];
	int c;

	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(setup_usage, stdout); exit(MW_EXIT_OK);
		default: mw_bad_option(c, argv);
		}
	}
	if (optind >= argc)
		mw_usage_error("setup needs what to set up: glibc");
	if (strcmp(argv[optind], "glibc") != 0)
		mw_usage_error("setup knows glibc, not '%s'", argv[optind]);
	if (optind + 1 < argc)
		mw_usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (!prefix || !*prefix)
		prefix = MW_GLIBC_PREFIX;
	if (prefix[0] != '/')
		mw_die(MW_EXIT_USAGE, "MW_GLIBC_PREFIX must be an absolute path, not '%s'", prefix);
	if (find_script("build-glibc.sh", script, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	return run_script(script, prefix);
}
