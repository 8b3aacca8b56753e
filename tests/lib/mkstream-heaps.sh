#!/bin/sh
# tests/lib/mkstream-heaps.sh N - write to stdout a saved stream (docs/protocol.md,
# kernel runtime's plain numbers, no samples) of a program whose thread 1001
# makes an arena (memory_arena_new) and then makes and frees a heap N times
# (memory_heap_new, memory_heap_free, timed T records 10 us apart), and
# whose thread 1002 makes a second arena, to which it adds 3 heaps that
# stay: N + 5 heaps made (each arena's first included), N freed, 5 live
# at the end (G records name their arenas).
# For the HTML chart of arenas and heaps from the events, whose steps and
# markers are bounded by its pixel columns (tests/e2e/t-html-edges.sh).
n=${1:?usage: mkstream-heaps.sh N}
exec awk -v n="$n" 'BEGIN {
	t0 = 1000000000; heap = 64 * 1024 * 1024
	a1 = 140000000000000; a2 = a1 + 16 * heap
	print "# mallocwatch-stream 1"
	print "# libc /lib/x86_64-linux-gnu/libc.so.6"
	print "# runtime kernel"
	print "# main_arena 1866848"
	print "# arg heaps"
	print "P 0 memory_arena_new 2"
	print "P 1 memory_heap_new 2"
	print "P 2 memory_heap_free 2"
	print "MW 1 ready"
	printf "O %d\n", t0
	printf "T 1 1001 %d %d 135168\n", t0 + 1000000, a1
	printf "T 0 1001 %d %d 640\n", t0 + 1000000, a1 + 48
	printf "T 1 1002 %d %d 135168\n", t0 + 2000000, a2
	printf "T 0 1002 %d %d 640\n", t0 + 2000000, a2 + 48
	for (i = 0; i < n; i++) {
		t = t0 + 3000000 + i * 10000
		printf "T 1 1001 %d %d 135168\n", t, a1 + heap
		printf "T 2 1001 %d %d 135168\n", t + 5000, a1 + heap
		if (i % int(n / 3 + 1) == 0)
			printf "T 1 1002 %d %d 135168\n", t, a2 + (1 + k++) * heap
	}
	printf "G %d %d 135168 135168 0 0\n", a1, a1 + 48
	for (j = 0; j < k; j++)
		printf "G %d %d 135168 135168 0 0\n", a2 + j * heap, a2 + 48
	printf "G %d %d 135168 135168 0 0\n", a2 + k * heap, a2 + 48
	printf "N 0 1001 1\nN 0 1002 1\nN 1 1001 %d\nN 1 1002 %d\nN 2 1001 %d\n", n + 1, k + 1, n
	print "S 0 0 0 0 0 0 0 0 0"
	print "B 0"
	print "MW 1 end"
	print "# pid 1000"
	print "# wait_status 0"
	print "# tracer_died 0"
	print "# tracer_lost 0"
}'
