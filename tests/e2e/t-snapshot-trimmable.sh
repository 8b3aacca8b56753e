#!/bin/sh
# What malloc_trim(0) could give back (issue 44, item 4): the snapshot's
# TRIMMABLE, JSON trimmable_bytes and serve's mallocwatch_process_trimmable
# must be at least what malloc_trim(0) then gives back, also when the
# free chunks sit in fastbins, which malloc_trim's malloc_consolidate
# merges first (snapshot_consolidate.c).  tests/fixtures/many-free fast 500000:
# 500,000 freed 112-byte chunks side by side at the top of the main heap,
# in a fastbin (about 53 MiB; without the model, TRIMMABLE said under
# 1 MiB); then the fixture calls malloc_trim(0) itself and prints its RSS
# and mallinfo2's arena before and after.  (top) they reach the top: the
# main heap shrinks (sbrk) by exactly TRIMMABLE; (mid) a chunk in use
# after them: one free chunk, its whole pages given back (madvise, RSS).
# Each must also not be far above what was given back (within 1 MiB of
# the RSS drop: the pages were all written).  (lone) many-free chunks:
# fastbin chunks each between chunks in use give back nothing.  Under
# Debian's own libc (libc6-dbg) and the probe-enabled glibc when it is
# there.
# needs: root
. tests/lib/lib.sh
need_root
FIX=build/tests/fixtures/many-free
[ -x $FIX ] || { echo "no $FIX (make check builds it)"; exit 99; }
pid= holder=
trap '[ -z "$holder" ] || kill $holder 2>/dev/null; [ -z "$pid" ] || kill $pid 2>/dev/null' EXIT

# start NAME LIBC ARGS...: the fixture under LIBC (system or probes), its
# stdin a FIFO held open by a sleeper; returns once it is ready
start() {
	name=$1 libc=$2
	shift 2
	rm -f "$OUT/$name.in"
	mkfifo "$OUT/$name.in"
	if [ $libc = probes ]; then
		"$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path \
			"$GLIBC_PREFIX/lib:/lib/x86_64-linux-gnu" $FIX "$@" <"$OUT/$name.in" >"$OUT/$name.out" &
	else
		$FIX "$@" <"$OUT/$name.in" >"$OUT/$name.out" &
	fi
	pid=$!
	sleep 1000 >"$OUT/$name.in" &
	holder=$!
	wait_for "$OUT/$name.out" '^ready' 60
}
stop() {
	kill $holder; wait $holder 2>/dev/null; holder=
	wait $pid; pid=
}
# trimmed NAME: let the fixture call malloc_trim(0); its figures in $OUT/NAME.trim
trimmed() {
	echo x >"$OUT/$1.in"
	wait_for "$OUT/$1.out" '^trimmed' 30
	grep '^trimmed' "$OUT/$1.out" >"$OUT/$1.trim"
}

for libc in system probes; do
	if [ $libc = probes ] && [ ! -f "$GLIBC_PREFIX/lib/libc.so.6" ]; then
		echo "note: no probe-enabled glibc: Debian's libc only"
		continue
	fi
	for where in top mid; do
		name=$libc-$where
		start $name $libc fast 500000 $where
		# 500,000 fastbin chunks: a loaded machine reads them in more
		# than the default 2 s (the figures, not the speed, are tested)
		"$MW" snapshot -p $pid --read-timeout 60 --json "$OUT/$name.json" -o "$OUT/$name.txt" 2>"$OUT/$name.err" ||
			fail "$name: snapshot exited $?: $(cat "$OUT/$name.err")"
		mkdir -p "$OUT/prom-$name"
		"$MW" serve --textfile "$OUT/prom-$name" -p $pid --interval 60 --read-timeout 60 \
			2>"$OUT/$name.serve" &
		serve=$!
		wait_for "$OUT/prom-$name/mallocwatch.prom" trimmable 90 $serve
		cp "$OUT/prom-$name/mallocwatch.prom" "$OUT/$name.prom"	# gone at its exit
		kill $serve; wait $serve
		trimmed $name
		stop
		python3 - "$OUT/$name.json" "$OUT/$name.trim" "$OUT/$name.prom" \
			"$OUT/$name.txt" $where <<'PY' || fail "$name: the figures"
import json, re, sys
s = json.load(open(sys.argv[1]))["snapshot"]
_, r0, r1, a0, a1 = open(sys.argv[2]).read().split()
rss_drop, sbrk_drop = int(r0) - int(r1), int(a0) - int(a1)
t = s["totals"]["trimmable_bytes"]
assert t == sum(a["trimmable_bytes"] for a in s["arenas"]), s["totals"]
prom = [float(l.split()[-1]) for l in open(sys.argv[3])
        if l.startswith("mallocwatch_process_trimmable")]
assert prom == [t], (prom, t)
print("%s: trimmable %d, malloc_trim(0) gave back %d of RSS and %d of the main heap (sbrk)"
      % (sys.argv[5], t, rss_drop, sbrk_drop))
assert rss_drop > 50 * 2**20, rss_drop      # the fixture's 53 MiB
assert t >= rss_drop and t >= sbrk_drop, "TRIMMABLE below what malloc_trim(0) gave back"
assert t <= rss_drop + 2**20, "TRIMMABLE far above what malloc_trim(0) gave back"
if sys.argv[5] == "top":
    assert sbrk_drop == t, "the main heap shrank by %d, not TRIMMABLE" % sbrk_drop
else:
    assert sbrk_drop < 2**20, sbrk_drop
text = open(sys.argv[4]).read()
m = re.search(r"malloc_trim\(0\) could give back at most ([0-9.]+) MiB", text)
assert m and abs(float(m.group(1)) * 2**20 - t) < 0.06 * 2**20, (m and m.group(0), t)
PY
		echo "ok: $name: trimmable $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["snapshot"]["totals"]["trimmable_bytes"])' "$OUT/$name.json") bytes; $(cat "$OUT/$name.trim")"
	done
	# fastbin chunks each between chunks in use: nothing more to give back
	name=$libc-lone
	start $name $libc chunks 200000 1
	"$MW" snapshot -p $pid --read-timeout 60 --json "$OUT/$name.json" -o /dev/null 2>"$OUT/$name.err" ||
		fail "$name: snapshot exited $?: $(cat "$OUT/$name.err")"
	stop
	python3 - "$OUT/$name.json" <<'PY' || fail "$name: lone fastbin chunks counted as trimmable"
import json, sys
s = json.load(open(sys.argv[1]))["snapshot"]
assert s["arenas"][0]["main"] and s["arenas"][0]["malloc_info"]["fast_count"] > 40000, s["arenas"][0]
for a in s["arenas"]:
    # the top, at most (no binned chunk holds a whole page)
    assert a["trimmable_bytes"] <= (a["top_bytes"] if a["main"] else 0), a
print("lone: trimmable", [a["trimmable_bytes"] for a in s["arenas"]])
PY
	echo "ok: $name"
done
