/* cmd.h - mallocwatch's subcommands, dispatched from main.c (git.c style).
 *
 * Each takes the arguments after the subcommand name (argv[0] is the
 * subcommand) and returns the process exit status (msg.h).
 */
#ifndef MALLOCWATCH_CMD_H
#define MALLOCWATCH_CMD_H

/* mallocwatch [trace] [OPTIONS] -c CMD [ARGS...] | -p PID: trace and report. */
int cmd_trace(int argc, char **argv);

/* mallocwatch probes [--libc PATH | -p PID] [--json]: list SDT probes. */
int cmd_probes(int argc, char **argv);

/* mallocwatch script [--runtime=R] [--libc PATH]: print the generated script. */
int cmd_script(int argc, char **argv);

/* mallocwatch replay [-o FILE] [--json FILE] STREAM: report a saved stream. */
int cmd_replay(int argc, char **argv);

/* mallocwatch snapshot -p PID [-o FILE] [--json FILE]: the allocator now. */
int cmd_snapshot(int argc, char **argv);

/* mallocwatch explain -p PID[,PID...] | --cgroup DIR [-o FILE] [--json
 * FILE]: where its RSS is, and the findings; several one after the other. */
int cmd_explain(int argc, char **argv);

/* mallocwatch tune [--repeat N] --try NAME=V1,V2... -c CMD: the program
 * under each setting of glibc's malloc tunables, measured. */
int cmd_tune(int argc, char **argv);

/* mallocwatch trim -p PID[,PID...] | --cgroup DIR [--dry-run | --no-stop]:
 * malloc_trim(0) called in each process at a safe point, its RSS before and
 * after against the ledger's prediction. */
int cmd_trim(int argc, char **argv);

/* mallocwatch serve [--listen [ADDR:]PORT] [--textfile DIR] -p PID... |
 * --cgroup DIR | --all: the allocator state as Prometheus metrics, until
 * SIGINT or SIGTERM (exit 0). */
int cmd_serve(int argc, char **argv);

/* mallocwatch check [--baseline B] --check RULE... REPORT: judge a report. */
int cmd_check(int argc, char **argv);

/* mallocwatch diff [--json] BASE NEW: two reports side by side; exit 0. */
int cmd_diff(int argc, char **argv);

/* mallocwatch flame [--probe NAME] FOLDED: a standalone SVG flame graph
 * of folded stacks (cmd_flame.c); the exit status. */
int cmd_flame(int argc, char **argv);

/* mallocwatch setup glibc: build and cache the probe-enabled glibc with
 * the installed build-glibc.sh (cmd_setup.c); its exit status. */
int cmd_setup(int argc, char **argv);

/* mallocwatch release PID: the -f run tracing PID lets go of it
 * (cmd_release.c, release.h); the exit status. */
int cmd_release(int argc, char **argv);

/* The argument of -e (trace, script): the families it names (probetab.h,
 * mw_events_parse); a bad list, or one that leaves nothing, is a usage
 * error (exit 2). */
unsigned mw_events_option(const char *arg);

/* The argument s of option opt (trace, snapshot): SECONDS, a decimal
 * above 0 and at most a day, as milliseconds (at least 1); anything else
 * is a usage error (exit 2). */
long mw_seconds_option(const char *opt, const char *s);

/* The stop bounds (snapshot.h, mw_snapshot_stop_bounds), options of
 * every command that may stop a process: MW_STOP_LONG_OPTIONS in its
 * getopt_long table, MW_STOP_HELP with its defaults (snapshot.h's, as
 * strings) in its usage, and mw_stop_option(c,
 * optarg) for c one of MW_OPT_MAX_STOP..MW_OPT_STOP_SHARE (a bad value is
 * a usage error, exit 2). */
enum { MW_OPT_MAX_STOP = 0x4d57, MW_OPT_MAX_STOPPED, MW_OPT_STOP_SHARE };
#define MW_STOP_LONG_OPTIONS \
	{ "max-stop", required_argument, NULL, MW_OPT_MAX_STOP }, \
	{ "max-stopped", required_argument, NULL, MW_OPT_MAX_STOPPED }, \
	{ "max-stopped-share", required_argument, NULL, MW_OPT_STOP_SHARE }
#define MW_STR(x) #x
#define MW_XSTR(x) MW_STR(x)	/* a macro's value as a string */
#define MW_STOP_HELP(STOP, STOPPED) \
"  --max-stop MS        a process is held at most MS ms at a time (default\n" \
"                       " STOP ")\n" \
"  --max-stopped MS     a snapshot's stops together at most MS ms (default\n" \
"                       " STOPPED "); this run's stops of one process at most\n" \
"                       MS ms plus --max-stopped-share PCT % (default 1) of\n" \
"                       the time since the first of them.  A stop that could\n" \
"                       not last what a read takes is not made: the snapshot\n" \
"                       is refused, with the bound that stopped it\n"
void mw_stop_option(int c, const char *arg);

#endif /* MALLOCWATCH_CMD_H */
