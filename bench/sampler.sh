#!/bin/sh
# bench/sampler.sh - what the periodic sampler (--interval) and the exit
# snapshot cost, per sample and per arena (issue 21 item 4).
#
# Usage: bench/sampler.sh [ARENAS...]   (default 1 8 64)
#
# examples/hold-arenas N-1 makes N arenas (its threads and main, with
# glibc.malloc.arena_max=64), prints malloc_info and blocks in read(2)
# until its stdin closes: SECONDS_HELD (default 4) after it printed.  It is traced with
# mallocwatch -c at two intervals, FAST (default 0.01 s) and SLOW (1 s);
# the program itself uses no CPU while it waits, so the CPU time of the
# whole command (mallocwatch, stapbpf, the program) at FAST less that at
# SLOW, over the difference in samples taken (Y records in
# --save-stream), is the CPU one sample costs (the allocator's headers
# read from the process, the lock waits asked of the script, the sample
# recorded).  The exit snapshot's own duration_ns comes from the JSON
# report.  Medians of REPS (default 3).
set -eu
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
SECONDS_HELD=${SECONDS_HELD:-4}
FAST=${FAST:-0.01}
SLOW=${SLOW:-1}
MW=${MW:-./build/mallocwatch}
ARENAS=${*:-1 8 64}
W=$(mktemp -d /tmp/mw-sampler.XXXXXX)
trap 'rm -rf "$W"' EXIT

# one run: N ARENAS, INTERVAL; prints "cpu_s samples exit_snapshot_ms"
one() {
	rm -f "$W/in"
	mkfifo "$W/in"
	GLIBC_TUNABLES=glibc.malloc.arena_max=64 \
		/usr/bin/time -f '%U %S' -o "$W/time" $MW -q --interval "$2" \
		--save-stream "$W/stream" --json "$W/r.json" -o /dev/null \
		-c ./examples/hold-arenas $(($1 - 1)) <"$W/in" >"$W/out" 2>/dev/null &
	mw=$!
	exec 3>"$W/in"
	# held from when its arenas are made (the tracer armed before)
	until grep -q '</malloc>' "$W/out" 2>/dev/null; do sleep 0.05; done
	sleep "$SECONDS_HELD"
	exec 3>&-
	wait $mw
	python3 - "$W/r.json" "$W/stream" "$W/time" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
e = r["snapshots"]["exit"]
y = sum(1 for l in open(sys.argv[2]) if l.startswith("Y "))
u, s = open(sys.argv[3]).read().split()[-2:]
print("%.3f %d %.3f %d" % (float(u) + float(s), y, e["duration_ns"] / 1e6, e["narenas"]))
EOF
}
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "  load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %7s %10s %10s %12s %14s %14s\n' ARENAS "SAMPLES" "" "CPU/SAMPLE" "EXIT SNAPSHOT" "PER ARENA"
for n in $ARENAS; do
	for i in $(seq "$REPS"); do
		one $n $FAST >>"$W/fast.$n"
		one $n $SLOW >>"$W/slow.$n"
	done
	awk -v n=$n -v fast=$FAST -v slow=$SLOW '
	FNR == 1 { f++ }
	{ cpu[f, FNR] = $1; ys[f, FNR] = $2; ex[++ne] = $3; na = $4; k[f] = FNR }
	function med(a, f, m,   i, j, t, v) {
		for (i = 1; i <= m; i++) v[i] = a[f, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
			if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return v[int((m + 1) / 2)]
	}
	END {
		cf = med(cpu, 1, k[1]); cs = med(cpu, 2, k[2])
		yf = med(ys, 1, k[1]); ys2 = med(ys, 2, k[2])
		for (i = 1; i <= ne; i++) for (j = i + 1; j <= ne; j++)
			if (ex[j] < ex[i]) { t = ex[i]; ex[i] = ex[j]; ex[j] = t }
		e = ex[int((ne + 1) / 2)]
		per = (yf > ys2) ? (cf - cs) / (yf - ys2) * 1e3 : 0
		printf "  %7d %4d @%-5s %4d @%-3s %9.3f ms %11.2f ms %11.3f ms\n",
			na, yf, fast, ys2, slow, per, e, e / na
	}' "$W/fast.$n" "$W/slow.$n"
done
echo "  load after: $(cut -d' ' -f1-3 /proc/loadavg)"
