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

/* mallocwatch explain -p PID [-o FILE] [--json FILE]: where its RSS is,
 * and the findings. */
int cmd_explain(int argc, char **argv);

/* mallocwatch tune [--repeat N] --try NAME=V1,V2... -c CMD: the program
 * under each setting of glibc's malloc tunables, measured. */
int cmd_tune(int argc, char **argv);

/* mallocwatch trim -p PID [--dry-run]: malloc_trim(0) called in the
 * process at a safe point, its RSS before and after against the ledger's
 * prediction. */
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

/* The argument of -e (trace, script): the families it names (probetab.h,
 * mw_events_parse); a bad list, or one that leaves nothing, is a usage
 * error (exit 2). */
unsigned mw_events_option(const char *arg);

/* The argument s of option opt (trace, snapshot): SECONDS, a decimal
 * above 0 and at most a day, as milliseconds (at least 1); anything else
 * is a usage error (exit 2). */
long mw_seconds_option(const char *opt, const char *s);

#endif /* MALLOCWATCH_CMD_H */
