#!/bin/sh
# tests/lib/mkstream-threads.sh N [ARENAS] - write to stdout a saved stream
# (docs/protocol.md, kernel runtime's plain numbers) of a program whose
# N threads each attach to an arena once: the first ARENAS threads
# (default 8) make an arena each (memory_arena_new), every other thread
# reuses one of them in turn (memory_arena_reuse), each a timed T record
# 1 ms apart, with the end-of-run N records and a clean exit.  For the
# HTML report's cost per thread (tests/t-html-scale.sh, bench/run).
n=${1:?usage: mkstream-threads.sh N [ARENAS]}
arenas=${2:-8}
exec awk -v n="$n" -v arenas="$arenas" 'BEGIN {
	t0 = 1000000000; base = 140000000000000; size = 64 * 1024 * 1024
	print "# mallocwatch-stream 1"
	print "# libc /lib/x86_64-linux-gnu/libc.so.6"
	print "# runtime kernel"
	print "# main_arena 1866848"
	print "# arg threads"
	print "P 0 memory_arena_new 2"
	print "P 1 memory_arena_reuse 2"
	print "MW 1 ready"
	printf "O %d\n", t0
	for (i = 0; i < n; i++) {
		tid = 1001 + i
		if (i < arenas)
			printf "T 0 %d %d %d 640\n", tid, t0 + (i + 1) * 1000000, base + i * size + 48
		else
			printf "T 1 %d %d %d 0\n", tid, t0 + (i + 1) * 1000000, base + (i % arenas) * size + 48
	}
	for (i = 0; i < n; i++)
		printf "N %d %d 1\n", i < arenas ? 0 : 1, 1001 + i
	print "S 0 0 0 0 0 0 0 0 0"
	print "B 0"
	print "MW 1 end"
	print "# pid 1000"
	print "# wait_status 0"
	print "# tracer_died 0"
	print "# tracer_lost 0"
}'
