/* stream.c - the line protocol parser; see stream.h and docs/protocol.md.
 *
 * Every field after the record letter is a decimal integer (stap prints
 * longs as signed 64-bit: addresses above 2^63 come out negative and are
 * taken back as unsigned), except the probe name in P records.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

#define MAX_FIELDS 16

/* One number at p: decimal, or "HI:LO" (two 32-bit halves, as stapbpf
 * must print them; LO is taken modulo 2^32).  End in *end. */
static int number(const char *p, int64_t *v, const char **endp)
{
	char *end;
	int64_t hi, lo;

	errno = 0;
	hi = *p == '-' ? strtoll(p, &end, 10) : (int64_t)strtoull(p, &end, 10);
	if (end == p || errno)
		return -1;
	if (*end == ':') {
		p = end + 1;
		lo = strtoll(p, &end, 10);
		if (end == p || errno || hi < INT32_MIN || hi > INT32_MAX)
			return -1;
		hi = (int64_t)(((uint64_t)hi << 32) | ((uint64_t)lo & 0xffffffffu));
	}
	*v = hi;
	*endp = end;
	return 0;
}

/* Split the numbers after the record tag; -1 on anything not a number. */
static int numbers(const char *p, int64_t *v, int max)
{
	int n = 0;

	for (;;) {
		const char *end;

		while (*p == ' ')
			p++;
		if (!*p)
			return n;
		if (n == max || number(p, &v[n], &end) < 0 || (*end && *end != ' '))
			return -1;
		n++;
		p = end;
	}
}

/* P ID NAME NARGS [UNAVAILABLE-MASK] */
static int parse_decl(struct mw_state *st, const char *p)
{
	char name[128];
	int id, nargs, used = 0, used2 = 0;
	unsigned mask = 0;

	if (sscanf(p, "%d %127s %d%n", &id, name, &nargs, &used) != 3 ||
	    id < 0 || nargs < 0 || nargs > 12)
		return -1;
	if (p[used] && (sscanf(p + used, " %u%n", &mask, &used2) != 1 || p[used + used2]))
		return -1;
	mw_state_declare(st, id, name, nargs, mask);
	return 0;
}

int mw_stream_line(struct mw_state *st, const char *line)
{
	int64_t v[MAX_FIELDS];
	int n;

	if (line[0] == '#')	/* metadata of a saved stream */
		return 0;
	if (strcmp(line, "MW 1 ready") == 0) {
		mw_state_ready(st);
		return 0;
	}
	if (strcmp(line, "MW 1 end") == 0) {
		mw_state_end(st);
		return 0;
	}
	if (!line[0] || line[1] != ' ')
		goto garbled;
	if (line[0] == 'P') {
		if (parse_decl(st, line + 2) < 0)
			goto garbled;
		return 0;
	}
	n = numbers(line + 2, v, MAX_FIELDS);
	switch (line[0]) {
	case 'E':
		if (n < 2 || v[0] < 0)
			goto garbled;
		if (mw_state_event(st, (int)v[0], (int)v[1], v + 2, n - 2) < 0)
			goto garbled;
		return 0;
	case 'N':
		if (n != 3 || v[0] < 0 || v[2] < 0)
			goto garbled;
		mw_state_hits(st, (int)v[0], (int)v[1], (uint64_t)v[2]);
		return 0;
	case 'H':
		if (n != 6)
			goto garbled;
		mw_state_heap(st, (uint64_t)v[0], (uint64_t)v[1], (uint64_t)v[2],
			      (uint64_t)v[3], (uint64_t)v[4], (uint64_t)v[5]);
		return 0;
	case 'W':
		if (n != 3 || v[2] < 0)
			goto garbled;
		mw_state_wait(st, (int)v[0], (uint64_t)v[1], (uint64_t)v[2]);
		return 0;
	case 'S': {
		struct mw_sbrk s;

		if (n != 8)
			goto garbled;
		s = (struct mw_sbrk){ .grown = (uint64_t)v[0], .trimmed = (uint64_t)v[1],
			.nmore = (uint64_t)v[2], .nless = (uint64_t)v[3], .peak = v[4],
			.first_brk = (uint64_t)v[5], .last_brk = (uint64_t)v[6],
			.failed = (uint64_t)v[7] };
		mw_state_sbrk(st, &s);
		return 0;
	}
	case 'J':
		if (n != 4 || v[0] < 0 || v[3] < 0 ||
		    mw_state_jump(st, (int)v[0], (int)v[1], v[2], (uint64_t)v[3]) < 0)
			goto garbled;
		return 0;
	case 'B':
		if (n != 1)
			goto garbled;
		mw_state_bias(st, (uint64_t)v[0]);
		return 0;
	}
garbled:
	mw_state_garbled(st);
	return -1;
}
