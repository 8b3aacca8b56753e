/* cmd_probes.c - `mallocwatch probes` and `mallocwatch script`.
 *
 * probes: every SDT note in the target's libc, one row per site: provider,
 * name, family, whether mallocwatch covers it, its argument specs and
 * whether every argument can be read (parses, and its symbols resolve).
 * script: the SystemTap script mallocwatch would run, on stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "gen.h"
#include "jsonout.h"
#include "msg.h"
#include "probetab.h"
#include "proclist.h"
#include "runtime.h"
#include "sdtarg.h"
#include "sdtnote.h"
#include "target.h"

static const char probes_usage[] =
"Usage: mallocwatch probes [--libc PATH | -p PID] [--libm PATH] [--json]\n"
"       mallocwatch probes --table\n"
"\n"
"List every SDT probe site in the libc a program would load (or PATH, or\n"
"the libc process PID has mapped) and in the libm beside it (or --libm):\n"
"provider, name, mallocwatch's family, whether it is traced, argument\n"
"specs, and whether each argument resolves.  --table prints mallocwatch's\n"
"own table of known probes (src/probes/probes.def) as Markdown: docs/probes.md.\n"
"\n"
"  -p, --pid PID        the libc process PID has mapped\n"
"\n"
"EXAMPLES\n"
"  mallocwatch probes\n"
"  mallocwatch probes --libc /var/cache/mallocwatch/glibc/lib/libc.so.6 --json\n";

static const char script_usage[] =
"Usage: mallocwatch script [--runtime=auto|kernel|bpf] [-e LIST] [-f]\n"
"                         [--stacks] [--libc PATH | -p PID] [--libm PATH]\n"
"\n"
"Print the SystemTap script mallocwatch generates for the libc (for the\n"
"runtime a run here would use by default), e.g. to check it with `stap -p3`.  -e LIST: only\n"
"those probe families, as for a run (mallocwatch --help).  -f: the script\n"
"of a run whose processes change while it runs (-f, --cgroup).  --stacks:\n"
"under the kernel runtime, each rare probe's hit also prints its user\n"
"stack (ubacktrace(), a Q record; a run builds the module with --ldd and\n"
"-d PROGRAM for it).\n"
"\n"
"  -p, --pid PID        the libc process PID has mapped\n"
"\n"
"EXAMPLES\n"
"  mallocwatch script --runtime=kernel > mw.stp && stap -p3 mw.stp\n";

/* Does every argument of site s parse and resolve?  Why not, into why. */
static int site_readable(const struct mw_elf *e, const struct mw_sdt_site *s,
			 char *why, size_t len)
{
	struct mw_sdt_arg a[MW_MAX_ARGS];
	enum mw_arch arch = mw_arch_of_machine(mw_elf_machine(e));
	int n = mw_sdt_args_parse_arch(arch, s->args, a, MW_MAX_ARGS, why, len);
	uint64_t v;

	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (a[i].kind == MW_ARG_MEM && a[i].sym[0] &&
		    mw_elf_symbol(e, a[i].sym, &v) < 0) {
			snprintf(why, len, "argument %d: symbol '%s' not found", i + 1, a[i].sym);
			return 0;
		}
	snprintf(why, len, "yes");
	return 1;
}

/* One file's sites: rows on stdout, or objects appended to sites. */
static void list(const struct mw_elf *e, json_t *sites)
{
	size_t n = mw_elf_nsites(e);

	for (size_t i = 0; i < n; i++) {
		const struct mw_sdt_site *s = mw_elf_site(e, i);
		const struct mw_probe_info *info = mw_probe_info(mw_probe_lookup(s->name));
		int traced = mw_probe_traced(s->provider, s->name, 0);
		const char *fam = info ? mw_family_name(info->family) : traced ? "unknown" : "-";
		char why[256], pc[24], q[4][512];
		int ok = site_readable(e, s, why, sizeof(why));

		snprintf(pc, sizeof(pc), "0x%" PRIx64, s->pc);
		/* notes are input: every string from the file is quoted */
		mw_quote(s->provider, q[0], sizeof(q[0]));
		mw_quote(s->name, q[1], sizeof(q[1]));
		mw_quote(s->args, q[2], sizeof(q[2]));
		mw_quote(mw_elf_path(e), q[3], sizeof(q[3]));
		if (sites)
			mw_json_append(&sites, json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:b}",
				"file", q[3], "provider", q[0], "name", q[1], "family", fam,
				"traced", traced, "pc", pc, "args", q[2], "readable", ok));
		else
			printf("%-8s %-38s %-10s %-7s %-12s %s (%s)\n", q[0], q[1], fam,
			       traced ? "yes" : "no", pc, q[2], why);
	}
}

/* --runtime's argument into *rt (NULL: the command takes none) */
static void runtime_arg(const char *arg, enum mw_runtime *rt)
{
	if (rt && strcmp(arg, "kernel") == 0)
		*rt = MW_RT_KERNEL;
	else if (rt && strcmp(arg, "bpf") == 0)
		*rt = MW_RT_BPF;
	else if (rt && strcmp(arg, "auto") == 0)
		*rt = MW_RT_AUTO;
	else
		mw_usage_error("--runtime takes auto, kernel or bpf");
}

static int pick_args(int argc, char **argv, const char *usage, int *json, int *follow,
		     int *stacks, enum mw_runtime *rt, unsigned *families, char *libc,
		     unsigned len, char *libm)
{
	static const struct option lo[] = {
		{ "libc", required_argument, NULL, 'l' },
		{ "libm", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "table", no_argument, NULL, 't' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "events", required_argument, NULL, 'e' },
		{ "follow-forks", no_argument, NULL, 'f' },
		{ "stacks", no_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *libc_opt = NULL, *libm_opt = NULL;
	char err[PATH_MAX + 256];
	pid_t pid = 0;
	int c;

	while ((c = getopt_long(argc, argv, ":e:fp:h", lo, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!follow)
				goto bad;
			*follow = 1;
			break;
		case 'e':
			if (!families)
				goto bad;
			*families = mw_events_option(optarg);
			break;
		case 's':
			if (!stacks)
				goto bad;
			*stacks = 1;
			break;
		case 'l': libc_opt = optarg; break;
		case 'm': libm_opt = optarg; break;
		case 'j': if (json) { *json = 1; break; } goto bad;
		case 't': if (json) { *json = 2; break; } goto bad;
		case 'p':
			if (mw_parse_pid(optarg, &pid) < 0)
				mw_usage_error("-p needs a process id, not '%s'", optarg);
			break;
		case 'h': fputs(usage, stdout); exit(MW_EXIT_OK);
		case 'r': runtime_arg(optarg, rt); break;
		default:
			mw_bad_option(c, argv);
		bad:	/* an option of the other command that shares these */
			for (size_t i = 0; lo[i].name; i++)
				if (lo[i].val == c && strchr("ef", c))
					mw_usage_error("this command does not take -%c (--%s)", c,
						       lo[i].name);
				else if (lo[i].val == c)
					mw_usage_error("this command does not take --%s", lo[i].name);
			mw_usage_error("this command does not take -%c", c);
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s'", argv[optind]);
	if (json && *json == 2)	/* --table: our own table, no libc read */
		return 0;
	if (mw_choose_libc(libc_opt, pid, libc, len, err, sizeof(err)) < 0 ||
	    mw_choose_libm(libm_opt, libc, libm, len, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		return -1;
	}
	return 0;
}

/* Open path and list its sites; a missing libm is said, not fatal. */
static int list_file(const char *path, json_t *sites, int required)
{
	char err[512];
	struct mw_elf *e = mw_elf_open(path, err, sizeof(err));
	const char *why;
	size_t bad;

	if (!e) {
		if (required)
			mw_die(MW_EXIT_RUNTIME, "%s", err);
		mw_warn("%s", err);
		return 0;
	}
	if ((bad = mw_elf_bad_notes(e, &why)))
		mw_warn("%zu malformed SDT notes skipped in '%s' (first: %s)", bad, path, why);
	if (!mw_elf_nsites(e))
		mw_note("'%s' has no SDT probes%s", path, required ?
			" (built without --enable-systemtap?)" :
			" (glibc 2.19 to 2.33 have slow-math probes in libm)");
	list(e, sites);
	mw_elf_close(e);
	return 0;
}

static const char *const unit_names[] = {
	[MW_UNIT_NONE] = "", [MW_UNIT_ADDR] = "address", [MW_UNIT_BYTES] = "bytes",
	[MW_UNIT_COUNT] = "count", [MW_UNIT_VALUE] = "value", [MW_UNIT_FLAG] = "flag",
	[MW_UNIT_PARAM] = "mallopt parameter", [MW_UNIT_DPTR] = "double *",
	[MW_UNIT_IPTR] = "int *",
};

static const char *const mode_names[] = {
	[MW_MODE_STREAM] = "streamed", [MW_MODE_HEAP] = "aggregated per heap",
	[MW_MODE_WAIT] = "aggregated per thread and arena",
	[MW_MODE_SBRK] = "aggregated sums", [MW_MODE_SETJMP] = "aggregated",
	[MW_MODE_MATH] = "counted; first 4 streamed",
};

/* src/probes/probes.def as Markdown (docs/probes.md is this output). */
static void table(void)
{
	printf("# Probes mallocwatch knows\n\nGenerated by `mallocwatch probes --table` from "
	       "`src/probes/probes.def`; `tests/e2e/t-options.sh` checks that this file matches it.\n"
	       "A `memory_*` probe of libc that is not here is still traced, its arguments "
	       "reported raw.\n\n| probe | provider | family | reported | arguments | meaning |\n"
	       "|---|---|---|---|---|---|\n");
	for (int id = 0; id < MW_P_COUNT; id++) {
		const struct mw_probe_info *p = mw_probe_info(id);

		printf("| `%s` | %s | %s | %s | ", p->name, p->provider, mw_family_name(p->family),
		       mode_names[p->mode]);
		for (int i = 0; i < p->nargs; i++)
			printf("%s%s (%s)", i ? ", " : "", i < 3 ? p->arg_name[i] : "result",
			       unit_names[mw_probe_arg_unit(p, i)]);
		printf(" | %s |\n", p->doc);
	}
}

int cmd_probes(int argc, char **argv)
{
	char libc[4096], libm[4096];
	int json = 0;
	json_t *sites = NULL;

	if (pick_args(argc, argv, probes_usage, &json, NULL, NULL, NULL, NULL, libc, sizeof(libc), libm) < 0)
		return MW_EXIT_RUNTIME;
	if (json == 2) {
		table();
		return MW_EXIT_OK;
	}
	if (json)
		sites = json_array();
	else
		printf("%-8s %-38s %-10s %-7s %-12s %s\n", "PROVIDER", "NAME", "FAMILY",
		       "TRACED", "ADDRESS", "ARGUMENTS (readable)");
	list_file(libc, sites, 1);
	if (libm[0])
		list_file(libm, sites, 0);
	if (json) {
		json_t *root = json_pack("{s:o, s:o, s:o}", "libc", mw_json_str(libc),
					 "libm", mw_json_str(libm), "sites", sites);
		int ret = mw_json_write(root, stdout, JSON_INDENT(1));

		json_decref(root);
		if (ret < 0) {
			mw_error("cannot write the list of probes: %s", strerror(errno));
			return MW_EXIT_RUNTIME;
		}
	}
	return fflush(stdout) == 0 && !ferror(stdout) ? MW_EXIT_OK : MW_EXIT_RUNTIME;
}

int cmd_script(int argc, char **argv)
{
	char libc[4096], libm_path[4096], err[512];
	enum mw_runtime rt = MW_RT_AUTO;	/* as a run's: mw_runtime_pick() */
	unsigned families = 0;
	int follow = 0, stacks = 0;
	struct mw_gen_stats st;
	struct mw_elf *e, *libm = NULL;
	int ret;

	if (pick_args(argc, argv, script_usage, NULL, &follow, &stacks, &rt, &families, libc, sizeof(libc),
		      libm_path) < 0)
		return MW_EXIT_RUNTIME;
	rt = mw_runtime_pick(rt);
	if (!(e = mw_elf_open(libc, err, sizeof(err))))
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (libm_path[0] && !(libm = mw_elf_open(libm_path, err, sizeof(err))))
		mw_warn("%s; slow-math probes left out", err);
	ret = mw_gen_script(e, &(struct mw_gen_opts){ .runtime = rt, .libc_path = libc,
			    .families = families, .libm = libm, .libm_path = libm_path, .dynamic = follow,
			    .stacks = stacks },
			    stdout, &st, err, sizeof(err));
	mw_elf_close(libm);
	mw_elf_close(e);
	if (ret < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	return MW_EXIT_OK;
}
