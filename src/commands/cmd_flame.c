/* cmd_flame.c - `mallocwatch flame FOLDED`: a flame graph, as a
 * standalone SVG, of a file of folded stacks (the lines `--folded`
 * writes, or any tool's in that format: "a;b;c WEIGHT", root first),
 * drawn by report_flame.c, since Debian 12 packages no flame graph tool.
 * --probe keeps the lines of one probe (our folded lines end with the
 * probe's name as their last frame). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fsutil.h"
#include "msg.h"
#include "output.h"
#include "report_flame.h"
#include "xalloc.h"

/* A folded file larger than this is refused, not read (bytes). */
#define FLAME_MAX_INPUT (256u << 20)

static const char flame_usage[] =
"Usage: mallocwatch flame [--probe NAME] [--width PX] [--bytes] [-o FILE] FOLDED\n"
"\n"
"Draw a flame graph of the folded stacks in FOLDED ('-' = stdin) as a\n"
"standalone SVG: each line \"frame;frame;...;frame WEIGHT\", root first,\n"
"as `mallocwatch --stacks --folded FILE` writes them (and perf's or\n"
"bpftrace's stack collapsers).  The root frame is on top, each frame's\n"
"callees below it, each as wide as its share of the total weight; hover a\n"
"frame for its name, weight and share.  Lines that do not parse are\n"
"skipped and counted.\n"
"\n"
"  --probe NAME         only the lines whose last frame is NAME (mallocwatch's\n"
"                       folded lines end with their probe: memory_sbrk_more,\n"
"                       memory_heap_new, memory_heap_more, memory_arena_new, ...)\n"
"  --width PX           the graph's width (default 1200)\n"
"  --bytes              the weights are bytes (default with --probe\n"
"                       memory_sbrk_more or memory_heap_new; else counts)\n"
"  -o, --output FILE    the SVG to FILE (default: stdout)\n"
"\n"
"Exit status: 0; 1 when FOLDED cannot be read or has no line with a\n"
"weight; 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch --stacks --folded stacks.folded -c ./app\n"
"  mallocwatch flame --probe memory_sbrk_more -o sbrk.svg stacks.folded\n";

enum { OPT_PROBE = 256, OPT_WIDTH, OPT_BYTES };

/* All of path ('-': stdin), NUL-terminated, or NULL with the reason said. */
static char *slurp(const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : mw_fopen_input(path);
	size_t n = 0, cap = 0;
	char *buf = NULL;

	if (!f) {
		mw_error("cannot open '%s': %s", path, mw_input_strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t got;

		if (n + 65536 + 1 > cap) {
			cap = 2 * cap + 65536 + 1;
			buf = xrealloc(buf, cap);
		}
		got = fread(buf + n, 1, 65536, f);
		n += got;
		if (n > FLAME_MAX_INPUT) {
			mw_error("'%s' is larger than %u MiB: not read", path, FLAME_MAX_INPUT >> 20);
			break;
		}
		if (got < 65536) {
			if (ferror(f)) {
				mw_error("cannot read '%s': %s", path, strerror(errno));
				break;
			}
			if (f != stdin)
				fclose(f);
			buf[n] = '\0';
			return buf;
		}
	}
	if (f != stdin)
		fclose(f);
	free(buf);
	return NULL;
}

/* Keep in text, in place, the lines whose last frame (before the weight)
 * is probe. */
static void keep_probe(char *text, const char *probe)
{
	size_t plen = strlen(probe);
	char *out = text;

	for (char *l = text; *l;) {
		size_t len = strcspn(l, "\n");
		char *sp = memrchr(l, ' ', len), *semi;

		if (sp) {
			semi = memrchr(l, ';', (size_t)(sp - l));
			semi = semi ? semi + 1 : l;
			if ((size_t)(sp - semi) == plen && memcmp(semi, probe, plen) == 0) {
				memmove(out, l, len);
				out += len;
				if (l[len] == '\n')	/* (the last line may have none) */
					*out++ = '\n';
			}
		}
		l += len + (l[len] == '\n');
	}
	*out = '\0';
}

/* Lines in text that are neither empty nor "frames WEIGHT". */
static size_t bad_lines(const char *text)
{
	size_t bad = 0;

	for (const char *l = text; *l;) {
		size_t len = strcspn(l, "\n");
		const char *sp = memrchr(l, ' ', len);
		char *end;

		if (len && (!sp || sp == l || !strtoull(sp + 1, &end, 10) || end != l + len))
			bad++;
		l += len + (l[len] == '\n');
	}
	return bad;
}

int cmd_flame(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "probe", required_argument, NULL, OPT_PROBE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "bytes", no_argument, NULL, OPT_BYTES },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *probe = NULL;
	int c, width = 1200, bytes = 0, frames, bad;
	size_t nbad = 0;
	char *text, *end;
	long v;
	FILE *fo;

	while ((c = getopt_long(argc, argv, ":o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case OPT_PROBE:
			if (!*optarg || strpbrk(optarg, "; \n"))
				mw_usage_error("--probe needs a probe name, not '%s'", optarg);
			probe = optarg;
			break;
		case OPT_WIDTH:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || v < 100 || v > 100000)
				mw_usage_error("--width needs pixels from 100 to 100000, not '%s'",
					       optarg);
			width = (int)v;
			break;
		case OPT_BYTES: bytes = 1; break;
		case 'h': fputs(flame_usage, stdout); exit(MW_EXIT_OK);
		default: mw_bad_option(c, argv);
		}
	}
	if (optind + 1 != argc)
		mw_usage_error(optind < argc ? "one folded file, not several" :
			       "flame needs a file of folded stacks (or '-')");
	if (probe && (strcmp(probe, "memory_sbrk_more") == 0 ||
		      strcmp(probe, "memory_heap_new") == 0))
		bytes = 1;
	if (!(text = slurp(argv[optind])))
		return MW_EXIT_RUNTIME;
	nbad = bad_lines(text);
	if (probe)
		keep_probe(text, probe);
	if (!(fo = out ? mw_output_create(out, 1) : stdout)) {
		free(text);
		return MW_EXIT_RUNTIME;
	}
	frames = mw_flame_svg(fo, text, bytes ? NULL : !probe ? "samples" :
			      strcmp(probe, "memory_heap_more") == 0 ? "heap growths" : "hits", width);
	bad = mw_output_close(fo, out ? out : "stdout", 0) < 0;
	free(text);
	if (nbad)
		mw_warn("%zu line%s of '%s' not folded stacks (\"frames WEIGHT\"): skipped", nbad,
			nbad == 1 ? "" : "s", argv[optind]);
	if (!frames) {
		mw_error("no stack with a weight in '%s'%s%s", argv[optind],
			 probe ? " ending with " : "", probe ? probe : "");
		return MW_EXIT_RUNTIME;
	}
	return bad ? MW_EXIT_RUNTIME : MW_EXIT_OK;
}
