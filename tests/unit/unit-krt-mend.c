/* unit-krt-mend.c - the kernel runtime's mends (src/runtime/kmod_sources.c): on
 * texts made up for each case (upstream's fix there, the text a mend
 * replaces missing or twice, a kernel without task_work_cancel_func),
 * then on this machine's SystemTap runtime: its relay_v2.c mended in
 * exactly the one line, stp_task_work.c in its two, the copy made whole
 * under a work directory with only the mended files changed, and a
 * runtime with upstream's fixes (SYSTEMTAP_RUNTIME) left as it is.  That
 * the mended runtime builds a module that delivers every record is
 * tests/e2e/t-e2e-exec.sh's under the kernel runtime (make check-vm), and
 * that it builds for a kernel with task_work_cancel_func is every
 * kernel-runtime test's there.  Last, what a module build that fails
 * anyway says (mw_tracer_compile_why): the cause and --runtime=bpf; and
 * the -D flags every module is built with (mw_kmod_defines). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmod_sources.h"
#include "tracer_proc.h"
#include "unit.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void texts(void)
{
	const char *relay = "a\n\t" MW_KRT_RELAY_ANCHOR "\n\t\tswitch;\n}\n";
	char *m = (char *)1;

	const char *buggy = "if (likely(entry && bytes_reserved > hlen)) {";

	CHECK(mw_krt_mend_relay(relay, buggy, &m) == 1 && m,
	      "the anchor once, the bug, no fix: mended");
	if (m && m != (char *)1) {
		CHECK(strcmp(m, "a\n\t" MW_KRT_RELAY_MENDED "\n\t\tswitch;\n}\n") == 0,
		      "mended text: %s", m);
		free(m);
	}
	m = (char *)1;
	CHECK(mw_krt_mend_relay(relay, "/* Cannot have header straddle sub buffers. */", &m) == 0
	      && !m, "upstream's fix: nothing to do");
	/* SystemTap 4.5 and before: the header never cut short, no anchor */
	CHECK(mw_krt_mend_relay("no anchor here", "bytes_reserved > 0", &m) == 0 && !m,
	      "no bug: nothing");
	CHECK(mw_krt_mend_relay("no anchor here", buggy, &m) == -1 && !m, "no anchor: -1");
	CHECK(mw_krt_mend_relay(MW_KRT_RELAY_ANCHOR MW_KRT_RELAY_ANCHOR, buggy, &m) == -1 && !m,
	      "the anchor twice: -1");

	const char *tw = "typedef typeof(&task_work_cancel) task_work_cancel_fn;\n"
			 "x = (void *)kallsyms_lookup_name(\"task_work_cancel\");\n"
			 "twork = task_work_cancel(task, func);\n";

	CHECK(mw_krt_mend_task_work(tw, 1, &m) == 1 && m, "task_work: mended");
	if (m) {
		CHECK(strcmp(m, "typedef typeof(&task_work_cancel_func) task_work_cancel_fn;\n"
			  "x = (void *)kallsyms_lookup_name(\"task_work_cancel_func\");\n"
			  "twork = task_work_cancel(task, func);\n") == 0, "task_work text: %s", m);
		free(m);
	}
	CHECK(mw_krt_mend_task_work(tw, 0, &m) == 0 && !m, "task_work, old kernel: nothing");
	CHECK(mw_krt_mend_task_work("typeof(&task_work_cancel_func) x; "
				    "kallsyms_lookup_name(\"task_work_cancel_func\")", 1, &m) == 0 &&
	      !m, "task_work, upstream's fix: nothing");
	CHECK(mw_krt_mend_task_work("typeof(&task_work_cancel) x;", 1, &m) == -1 && !m,
	      "task_work, no kallsyms line: -1");
}

/* Linux 6.12's uprobes: the four texts of uprobes-inode.c each replaced,
 * the optional ones where they are, transport.c's lookup renamed; an old
 * kernel, upstream's fix, a text missing or twice. */
static void uprobes_texts(void)
{
	const char *reg = "ret = uprobe_register (inst->inode, c->offset, &inst->kconsumer);\n";
	const char *unreg = "(void) uprobe_unregister (inst->inode, c->offset, &inst->kconsumer);\n";
	char up[1024], twice[2048], *m = (char *)1;

	snprintf(up, sizeof(up), "typedef typeof(&uprobe_unregister) uprobe_unregister_fn;\n"
		 "struct x { struct uprobe_consumer kconsumer; };\n%s%s"
		 "  if (!f)\n    g();\n  else\n    ; // already unlocked\n", reg, unreg);
	CHECK(mw_krt_mend_uprobes(up, 1, &m) == 1 && m, "uprobes: mended");
	if (m && m != (char *)1) {
		CHECK(count(m, "typeof(&uprobe_unregister_nosync)") == 1 &&
		      count(m, "struct uprobe *mw_uprobe;") == 1 &&
		      count(m, "uprobe_register (inst->inode, c->offset, 0, &inst->kconsumer)") == 1 &&
		      count(m, "uprobe_unregister_nosync (inst->mw_uprobe, &inst->kconsumer); "
			    "uprobe_unregister_sync ();") == 1 &&
		      count(m, "uprobe_unregister (") == 0 && count(m, "; // already") == 0,
		      "uprobes text: %s", m);
		free(m);
	}
	CHECK(mw_krt_mend_uprobes(up, 0, &m) == 0 && !m, "uprobes, old kernel: nothing");
	CHECK(mw_krt_mend_uprobes("uprobe_unregister_nosync(u, c);", 1, &m) == 0 && !m,
	      "uprobes, upstream's fix: nothing");
	CHECK(mw_krt_mend_uprobes(strstr(up, "struct x"), 1, &m) == -1 && !m,
	      "uprobes, no typedef: -1");
	snprintf(twice, sizeof(twice), "%s%s", up, reg);
	CHECK(mw_krt_mend_uprobes(twice, 1, &m) == -1 && !m, "uprobes, a text twice: -1");

	const char *tr = "p = (void*) kallsyms_lookup_name (\"uprobe_unregister\");\n";

	CHECK(mw_krt_mend_uprobes_sym(tr, 1, &m) == 1 && m &&
	      strcmp(m, "p = (void*) kallsyms_lookup_name (\"uprobe_unregister_nosync\");\n") == 0,
	      "transport.c: the lookup renamed");
	free(m);
	CHECK(mw_krt_mend_uprobes_sym(tr, 0, &m) == 0 && !m, "transport.c, old kernel: nothing");
	CHECK(mw_krt_mend_uprobes_sym("no lookup", 1, &m) == -1 && !m, "transport.c, no lookup: -1");
}

/* The runtime's copy for a kernel whose headers (a made-up build tree,
 * kbuild) declare uprobe_unregister_nosync: stap's own uprobes-inode.c
 * and transport.c mended, as Linux 6.12 needs (the compile itself:
 * make check-vm MW_VM_SUITE=trixie). */
static void uprobes_kernel(const char *sys, const char *work)
{
	char kb[600], cmd[2400], dir[512], err[512], p[700], *text;

	snprintf(kb, sizeof(kb), "%s/kb612", work);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/include/linux' && printf 'extern void "
		 "uprobe_unregister_nosync(struct uprobe *u, struct uprobe_consumer *uc);\\n' "
		 ">'%s/include/linux/uprobes.h' && printf 'x\\n' >'%s/include/linux/task_work.h'",
		 kb, kb, kb);
	CHECK(system(cmd) == 0, "%s", cmd);
	CHECK(mw_krt_runtime(work, kb, dir, sizeof(dir), err, sizeof(err)) == 1,
	      "a copy for 6.12's uprobes: %s", err);
	snprintf(p, sizeof(p), "%s/linux/uprobes-inode.c", dir);
	text = slurp(p);
	CHECK(text && count(text, "uprobe_unregister_nosync (inst->mw_uprobe") == 1 &&
	      count(text, "typeof(&uprobe_unregister)") == 0, "the copy's uprobes-inode.c is mended");
	free(text);
	snprintf(p, sizeof(p), "%s/transport/transport.c", dir);
	text = slurp(p);
	CHECK(text && count(text, "kallsyms_lookup_name (\"uprobe_unregister_nosync\")") == 1,
	      "the copy's transport.c looks up uprobe_unregister_nosync");
	free(text);
	(void)sys;
}

/* A runtime upgraded in place (its directory's time changed): a new
 * copy, the one made from it before gone, as is one named as an older
 * mallocwatch named them (one hash); another runtime's copy (keep)
 * stays. */
static void upgraded(const char *sys, const char *work, const char *keep, const char *cache)
{
	char up[600], cmd[2048], first[512], second[512], legacy[700], err[512];

	snprintf(up, sizeof(up), "%s/up", work);
	snprintf(cmd, sizeof(cmd), "cp -R -L '%s' '%s' && touch -d '2001-01-01 00:00' '%s'", sys,
		 up, up);
	CHECK(system(cmd) == 0, "%s", cmd);
	setenv("SYSTEMTAP_RUNTIME", up, 1);
	CHECK(mw_krt_runtime(work, "", first, sizeof(first), err, sizeof(err)) == 1,
	      "a copy of %s: %s", up, err);
	snprintf(legacy, sizeof(legacy), "%s/0123456789abcdef", cache);
	CHECK(mkdir(legacy, 0700) == 0, "mkdir %s", legacy);
	snprintf(cmd, sizeof(cmd), "touch -d '2002-02-02 00:00' '%s'", up);
	CHECK(system(cmd) == 0, "%s", cmd);
	CHECK(mw_krt_runtime(work, "", second, sizeof(second), err, sizeof(err)) == 1,
	      "a copy of %s, upgraded: %s", up, err);
	printf("upgraded: %s, then %s\n", first, second);
	CHECK(strcmp(first, second) != 0, "the upgraded runtime gets a new copy");
	CHECK(access(first, F_OK) != 0, "the copy made before the upgrade is gone: %s", first);
	CHECK(access(legacy, F_OK) != 0, "the copy named by one hash is gone");
	CHECK(access(second, F_OK) == 0 && access(keep, F_OK) == 0,
	      "the new copy and another runtime's copy stay");
	snprintf(cmd, sizeof(cmd), "find '%s' -maxdepth 1 -name 'new.*' | grep -q .", cache);
	CHECK(system(cmd) != 0, "no temporary left in %s", cache);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s'", second, legacy, up);
	system(cmd);
	setenv("SYSTEMTAP_RUNTIME", sys, 1);
}

static void installed(const char *sys)
{
	char rv[512], pf[512], work[] = "/tmp/unit-krt-mend.XXXXXX", dir[512], err[512];
	char cmd[8192], got_rv[1024], got_pf[1024];
	char *relay, *flush, *m = NULL, *copied;
	int r, tw_func;

	snprintf(rv, sizeof(rv), "%s/transport/relay_v2.c", sys);
	snprintf(pf, sizeof(pf), "%s/print_flush.c", sys);
	relay = slurp(rv);
	flush = slurp(pf);
	CHECK(relay && flush, "cannot read %s's relay_v2.c and print_flush.c", sys);
	if (!relay || !flush)
		return;
	r = mw_krt_mend_relay(relay, flush, &m);
	printf("this machine's runtime %s: %s\n", sys,
	       r == 1 ? "mended" : r == 0 ? "has upstream's fix" : "unknown");
	CHECK(r >= 0, "this machine's runtime is one the mend knows");
	if (r == 1) {
		CHECK(count(relay, MW_KRT_RELAY_ANCHOR) == 1 && count(m, MW_KRT_RELAY_ANCHOR) == 0 &&
		      count(m, MW_KRT_RELAY_MENDED) == 1, "the anchor replaced once");
		CHECK(strlen(m) == strlen(relay) - strlen(MW_KRT_RELAY_ANCHOR) +
		      strlen(MW_KRT_RELAY_MENDED), "nothing else changed");
		/* the line stands in _stp_data_write_reserve() */
		char *fn = strstr(m, "_stp_data_write_reserve(size_t");
		char *end = fn ? strstr(fn, "\n}\n") : NULL;
		char *at = strstr(m, MW_KRT_RELAY_MENDED);

		CHECK(fn && end && at && at > fn && at < end,
		      "the mended line is in _stp_data_write_reserve()");
	}
	free(m);

	if (!mkdtemp(work)) {
		CHECK(0, "mkdtemp");
		return;
	}
	setenv("SYSTEMTAP_RUNTIME", sys, 1);
	r = mw_krt_runtime(work, "", dir, sizeof(dir), err, sizeof(err));
	CHECK(r >= 0, "runtime: %s", err);
	if (r == 1 && geteuid() == 0 && !getenv("MW_NO_CACHE")) {
		/* as root the copy is kept (MW_CACHE_DIR/runtime) and used again
		 * as it is: its path and times are what stap's stapconf cache
		 * is keyed by */
		char again[512], parent[600];
		struct stat a, b, pb;

		printf("kept copy: %s\n", dir);
		CHECK(strncmp(dir, "/var/cache/mallocwatch/runtime/", 31) == 0, "kept: %s", dir);
		snprintf(parent, sizeof(parent), "%.*s", (int)(strrchr(dir, '/') - dir), dir);
		CHECK(lstat(parent, &pb) == 0 && S_ISDIR(pb.st_mode) && pb.st_uid == 0 &&
		      (pb.st_mode & 077) == 0, "the cache directory is root's alone: %s", parent);
		CHECK(stat(dir, &a) == 0, "stat %s", dir);
		sleep(1);
		CHECK(mw_krt_runtime(work, "", again, sizeof(again), err, sizeof(err)) == 1 &&
		      strcmp(again, dir) == 0, "the same copy again: %s", again);
		CHECK(stat(again, &b) == 0 && a.st_ino == b.st_ino && a.st_mtime == b.st_mtime,
		      "the kept copy is not made again");
		upgraded(sys, work, dir, parent);
	}
	/* the rest in the work directory: nothing of theirs kept */
	setenv("MW_NO_CACHE", "1", 1);
	r = mw_krt_runtime(work, "", dir, sizeof(dir), err, sizeof(err));
	CHECK(r >= 0, "runtime: %s", err);
	if (r == 1) {
		CHECK(strncmp(dir, work, strlen(work)) == 0, "MW_NO_CACHE: in the work directory: %s",
		      dir);
		snprintf(got_rv, sizeof(got_rv), "%s/transport/relay_v2.c", dir);
		copied = slurp(got_rv);
		CHECK(copied && count(copied, MW_KRT_RELAY_MENDED) == 1,
		      "the copy's relay_v2.c is mended");
		free(copied);
		/* this kernel's task_work_cancel_func: its headers, or (none on
		 * this machine) its kallsyms, as the mend looks */
		snprintf(got_pf, sizeof(got_pf), "%s/stp_task_work.c", dir);
		copied = slurp(got_pf);
		tw_func = system("grep -qw task_work_cancel_func /proc/kallsyms") == 0;
		printf("task_work_cancel_func in /proc/kallsyms: %d\n", tw_func);
		if (access("/lib/modules", F_OK) != 0 || system("ls /lib/modules/$(uname -r)/build "
							       ">/dev/null 2>&1") != 0)
			CHECK(copied && (strstr(copied, "\"task_work_cancel_func\"") != NULL) == tw_func,
			      "the copy's stp_task_work.c mended as the kernel needs (%d)", tw_func);
		free(copied);
		/* every other file the same as stap's own (uprobes-inode.c
		 * and transport.c mended when this kernel is 6.12 or later) */
		snprintf(cmd, sizeof(cmd), "diff -r -q '%s' '%s' | grep -v '^Files .*/relay_v2.c ' "
			 "| grep -v '^Files .*/stp_task_work.c ' | grep -v '^Files .*/uprobes-inode.c ' "
			 "| grep -v '^Files .*/transport.c ' | grep -q .", sys, dir);
		CHECK(system(cmd) != 0, "only the mended files differ (%s)", cmd);
		snprintf(got_pf, sizeof(got_pf), "%s/print_flush.c", dir);
		CHECK(access(got_pf, R_OK) == 0, "the copy is whole");
	}

	uprobes_kernel(sys, work);

	/* a runtime with upstream's fix: stap's own, nothing copied */
	char fixed[600];

	snprintf(fixed, sizeof(fixed), "%s/fixed", work);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/transport' && cp '%s' '%s/transport/' && "
		 "printf '/* Cannot have header straddle sub buffers. */\\n' >'%s/print_flush.c' && "
		 "printf 'typeof(&task_work_cancel_func)\\n' >'%s/stp_task_work.c'",
		 fixed, rv, fixed, fixed, fixed);
	CHECK(system(cmd) == 0, "%s", cmd);
	setenv("SYSTEMTAP_RUNTIME", fixed, 1);
	r = mw_krt_runtime(work, "", dir, sizeof(dir), err, sizeof(err));
	CHECK(r == 0 && dir[0] == '\0', "upstream's fix: stap's own runtime (%d)", r);

	/* a runtime reached through links (the runtime itself, its
	 * transport/): the mend is written into the copy, never through a
	 * link into the files linked to */
	char linked[64], real[64], *before, *after;

	snprintf(real, sizeof(real), "%s/real", work);
	snprintf(linked, sizeof(linked), "%s/linked", work);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/rt/transport' '%s/tr' && cp '%s' '%s/tr/' && "
		 "cp '%s' '%s/rt/' && printf 'typeof(&task_work_cancel)\\n' >'%s/rt/stp_task_work.c' && "
		 "rm -r '%s/rt/transport' && ln -s '%s/tr' '%s/rt/transport' && ln -s '%s/rt' '%s'",
		 real, real, rv, real, pf, real, real, real, real, real, real, linked);
	CHECK(system(cmd) == 0, "%s", cmd);
	snprintf(got_rv, sizeof(got_rv), "%s/tr/relay_v2.c", real);
	before = slurp(got_rv);
	setenv("SYSTEMTAP_RUNTIME", linked, 1);
	snprintf(cmd, sizeof(cmd), "%s/w2", work);
	if (mkdir(cmd, 0700) == 0) {
		r = mw_krt_runtime(cmd, "", dir, sizeof(dir), err, sizeof(err));
		after = slurp(got_rv);
		CHECK(before && after && strcmp(before, after) == 0,
		      "the linked-to relay_v2.c is unchanged (%d)", r);
		if (r == 1) {
			snprintf(got_pf, sizeof(got_pf), "%s/transport/relay_v2.c", dir);
			copied = slurp(got_pf);
			CHECK(copied && count(copied, MW_KRT_RELAY_MENDED) == 1,
			      "the copy through links is mended");
			free(copied);
		}
		free(after);
	}
	free(before);

	/* a runtime that is not there */
	setenv("SYSTEMTAP_RUNTIME", "/nonexistent/runtime", 1);
	r = mw_krt_runtime(work, "", dir, sizeof(dir), err, sizeof(err));
	CHECK(r == -1 && strstr(err, "/nonexistent/runtime"), "missing: %d %s", r, err);
	printf("missing: %s\n", err);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
	if (system(cmd) != 0)
		printf("could not remove %s\n", work);
	free(relay);
	free(flush);
}

/* A module build's failure names its cause and --runtime=bpf; the bpf
 * runtime's says stap's line alone. */
static void compile_why(void)
{
	char err[600];

	mw_tracer_compile_why(1, "linux/uprobes-inode.c:97:9: error: implicit declaration of "
			      "function 'uprobe_unregister'", err, sizeof(err));
	CHECK(strstr(err, "uprobes API (Linux 6.12") && strstr(err, "use --runtime=bpf") &&
	      strstr(err, "'uprobe_unregister'"));
	mw_tracer_compile_why(1, "stp_task_work.c: error: 'task_work_cancel' undeclared", err,
			      sizeof(err));
	CHECK(strstr(err, "task_work_cancel_func()") && strstr(err, "use --runtime=bpf"));
	mw_tracer_compile_why(1, "semantic error: no match", err, sizeof(err));
	CHECK(strstr(err, "kernel module: semantic error: no match") &&
	      strstr(err, "--runtime=bpf traces without one"));
	mw_tracer_compile_why(0, "semantic error: no match", err, sizeof(err));
	CHECK(!strcmp(err, "stap could not compile the script: semantic error: no match"));
}

/* Every module is built without stap's overload check and with the
 * statement bound (mw_kmod_defines; docs/tracing.md, "The kernel
 * runtime"). */
static void kmod_defines(void)
{
	int overload = 0, maxaction = 0;

	for (int d = 0; mw_kmod_defines[d]; d++) {
		overload += !strcmp(mw_kmod_defines[d], "-DSTP_NO_OVERLOAD");
		maxaction += !strcmp(mw_kmod_defines[d], "-DMAXACTION=50000000");
	}
	CHECK(overload == 1 && maxaction == 1);
}

int main(void)
{
	const char *sys = MW_STAP_RUNTIME;

	texts();
	uprobes_texts();
	compile_why();
	kmod_defines();
	if (access(sys, R_OK) == 0)
		installed(sys);
	else
		printf("no SystemTap runtime at %s: only the texts checked\n", sys);
	if (failed)
		printf("%d failed\n", failed);
	else
		printf("all passed\n");
	return failed ? 1 : 0;
}
