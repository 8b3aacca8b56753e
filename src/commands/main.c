/* main.c - mallocwatch: show what glibc's malloc does inside a program.
 *
 * Dispatches to a subcommand (cmd.h); with no subcommand name, or when the
 * first argument is an option, the command is `trace`.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "msg.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "trace", cmd_trace },
	{ "probes", cmd_probes },
	{ "script", cmd_script },
	{ "replay", cmd_replay },
	{ "snapshot", cmd_snapshot },
	{ "explain", cmd_explain },
	{ "tune", cmd_tune },
	{ "trim", cmd_trim },
	{ "serve", cmd_serve },
	{ "check", cmd_check },
	{ "diff", cmd_diff },
	{ "flame", cmd_flame },
	{ "setup", cmd_setup },
	{ "release", cmd_release },
};

int main(int argc, char **argv)
{
	if (argc < 2)
		mw_usage_error("no command given: use -c CMD or -p PID");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			if (i)	/* trace's help is the main one */
				mw_usage_command(commands[i].name);
			return commands[i].fn(argc - 1, argv + 1);
		}
	if (argv[1][0] != '-')
		mw_usage_error("unknown command '%s'", argv[1]);
	return cmd_trace(argc, argv);
}
