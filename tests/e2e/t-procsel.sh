#!/bin/sh
# One process selection for every command that takes processes (issue 48,
# item 6; src/commands/procsel.h): trace, snapshot, explain, trim and
# serve take -p/--pid PID[,PID...], --cgroup DIR, --all, -f and --no-stop
# the same way, and refuse the same bad input with the same line and exit
# status:
#  - -p 0, -p abc, --pid 1,x, --pid= (empty): one line, exit 2, each command
#  - -p with --cgroup, two --cgroup, --all where a command reads processes
#    one by one (trace, explain, trim), -f where it follows none: one line
#    saying what the command takes, exit 2
#  - a pid that does not exist: "no process N", exit 1 (serve is left
#    out: it serves a process that is gone as not read, by design)
#  - long forms equal short ones: --pid, --output, --output=, --command
#    (trace, tune), the same report as -p, -o, -c (the read's times aside);
#    -p A,A is -p A
#  - explain and trim of a pid list, one after the other: two reports (JSON:
#    one document a line); a gone pid among them: its one line, the others
#    reported, exit 1; trim --no-stop: the prediction, nothing called
#  - --cgroup for explain and trim, where a cgroup v2 can be made
#  - the completion offers --pid (and --output) to every such command
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
# (with MW_ROOT, the root's, built there by scripts/check-glibc.sh)
[ -x "${MW_ROOT:-.}/examples/frag-hold" ] || { echo "no examples/frag-hold (make -C examples)"; exit 99; }
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=${V2:-/nonexistent}/mw-t-procsel-$$
pids= holders=
cleanup() {
	for p in $holders $pids; do kill "$p" 2>/dev/null; done
	for p in $holders $pids; do wait "$p" 2>/dev/null; done
	i=0
	while [ -d "$CG" ] && ! rmdir "$CG" 2>/dev/null && [ $i -lt 50 ]; do
		i=$((i + 1)); sleep 0.1
	done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# expect RC LINE CMD...: exit status RC and LINE as the first line of stderr
expect() {
	want=$1 line=$2
	shift 2
	"$@" >"$OUT/out" 2>"$OUT/err" </dev/null
	rc=$?
	[ $rc = "$want" ] || fail "'$*' exited $rc, expected $want: $(cat "$OUT/err")"
	[ "$(head -n 1 "$OUT/err")" = "$line" ] ||
		fail "'$*': '$(head -n 1 "$OUT/err")', expected '$line'"
}
# sub CMD: the words that start CMD (trace is the default command)
sub() { [ "$1" = trace ] && echo "$MW" || echo "$MW $1"; }

# hold NAME: examples/frag-hold pages 64 on the probe-enabled glibc, its
# stdin held open; its pid in $pid once it is ready
hold() {
	rm -f "$OUT/$1.in"
	mkfifo "$OUT/$1.in"
	(on_glibc ./examples/frag-hold pages 64) <"$OUT/$1.in" >"$OUT/$1.out" 2>&1 &
	pid=$!
	sleep 1000 >"$OUT/$1.in" &
	holders="$holders $!"
	pids="$pids $pid"
	i=0
	until [ -s "$OUT/$1.out" ]; do
		i=$((i + 1)); [ $i -lt 600 ] || fail "$1 never got ready"; sleep 0.05
	done
}
# same A B: the two reports, the read's times aside
same() {
	for f in "$1" "$2"; do
		# the resident set (smaps_rollup's Rss, the file pages not
		# malloc's, and so the ledger's difference) moves by a page or so
		# between two readings (within the ledger's tolerance): not compared;
		# nor the peak (VmHWM is the larger of the high-water mark and the
		# resident set now: it fell by a page between the two once), nor
		# the "where" finding's bytes (the resident set)
		sed -e 's/read in [0-9.]* ms/read in T ms/' -e 's/held for [0-9.]* ms/held for T ms/' \
			-e '/"peak_rss"/d' -e '/"id": "where"/{n;n;d}' -e 's/RSS [0-9.]* [KMGT]*i*B/RSS R/g' \
			-e 's/peak [0-9.]* [KMGT]*i*B/peak P/g' \
			-e 's/difference [-+][0-9]* bytes/difference D bytes/' -e '/"difference"/d' \
			-e "s/smaps_rollup's Rss [0-9.]* [KMGT]*i*B/smaps_rollup's Rss R/" -e '/"smaps_rollup_rss"/d' \
			-e "/not malloc's\|^RSS ledger/d" -e '/"rss"\|"not_malloc"\|"files"/d' \
			-e '/"taken_unix_ns"\|"duration_ns"\|"held_ns"\|"call_ns"\|"ledger_ms"\|"held_ms"/d' "$f" >"$f.n"
	done
	diff -u "$1.n" "$2.n" || fail "$3"
}

gone=$(sh -c 'echo $$')	# a pid that was and is no more (not reused this soon)
kill -0 "$gone" 2>/dev/null && gone=4194304
hold a; A=$pid
hold b; B=$pid

# 1. The same bad input, the same line and status, in every command.
for cmd in trace snapshot explain trim serve; do
	c=$(sub $cmd)
	for bad in 0 abc 1,x -5 4294967297 ""; do
		expect 2 "mallocwatch: -p needs process ids separated by commas, not '${bad#1,}'" $c -p "$bad"
		expect 2 "mallocwatch: -p needs process ids separated by commas, not '${bad#1,}'" $c --pid="$bad"
	done
	expect 2 "mallocwatch: --cgroup takes one directory" $c --cgroup /a --cgroup /b
	case $cmd in
	trace) takes="-p PID[,PID...] and --cgroup DIR" ;;
	snapshot|serve) takes="-p PID[,PID...], --cgroup DIR and --all" ;;
	*) takes="-p PID[,PID...] and --cgroup DIR" ;;
	esac
	expect 2 "mallocwatch: $cmd takes one of $takes" $c -p 1 --cgroup /sys/fs/cgroup
	expect 2 "mallocwatch: $cmd takes one of $takes" $c --pid 1 --cgroup=/sys/fs/cgroup
	case $cmd in
	trace|explain|trim)
		expect 2 "mallocwatch: $cmd does not take --all: it takes ${takes% and *} or ${takes#* and }" \
			$c --all ;;
	*)	expect 2 "mallocwatch: $cmd takes one of $takes" $c --all -p 1 ;;
	esac
	case $cmd in
	trace) expect 2 "mallocwatch: no command given: use -c CMD or -p PID" $c -f ;;
	*)	expect 2 "mallocwatch: $cmd does not take -f (--follow-forks): it takes the processes there are now, and follows none" \
			$c -f -p 1
		expect 2 "mallocwatch: $cmd does not take -f (--follow-forks): it takes the processes there are now, and follows none" \
			$c --follow-forks --pid 1
		expect 2 "mallocwatch: $cmd takes one of $takes" $c --no-stop ;;
	esac
	[ $cmd = serve ] && continue	# a gone process is served as not read
	expect 1 "mallocwatch: no process $gone" $c -p "$gone" -o /dev/null
	expect 1 "mallocwatch: no process $gone" $c --pid "$gone" --output /dev/null
done
echo "ok: the same bad input, the same line and status, in trace, snapshot, explain, trim, serve"

# 2. Long forms equal short ones.
for cmd in snapshot explain; do
	ok "$MW" $cmd -p $A -o "$OUT/$cmd-short.txt" --json "$OUT/$cmd-short.json"
	ok "$MW" $cmd --pid $A --output "$OUT/$cmd-long.txt" --json "$OUT/$cmd-long.json"
	ok "$MW" $cmd --pid=$A,$A --output="$OUT/$cmd-eq.txt" --json "$OUT/$cmd-eq.json"
	same "$OUT/$cmd-short.txt" "$OUT/$cmd-long.txt" "$cmd --pid/--output is not -p/-o"
	same "$OUT/$cmd-short.json" "$OUT/$cmd-long.json" "$cmd --pid/--output's JSON is not -p/-o's"
	same "$OUT/$cmd-short.txt" "$OUT/$cmd-eq.txt" "$cmd --pid=A,A is not -p A"
	same "$OUT/$cmd-short.json" "$OUT/$cmd-eq.json" "$cmd --pid=A,A's JSON is not -p A's"
done
ok "$MW" trim -p $A --dry-run -o "$OUT/trim-short.txt"
ok "$MW" trim --pid $A --dry-run --output "$OUT/trim-long.txt"
same "$OUT/trim-short.txt" "$OUT/trim-long.txt" "trim --pid/--output is not -p/-o"
printf 'main;grow 100\n' >"$OUT/x.folded"
ok "$MW" flame -o "$OUT/short.svg" "$OUT/x.folded"
ok "$MW" flame --output "$OUT/long.svg" "$OUT/x.folded"
cmp -s "$OUT/short.svg" "$OUT/long.svg" || fail "flame --output is not -o"
ok "$MW" tune --repeat 1 --try glibc.malloc.arena_max=1 --output "$OUT/tune.txt" --command true
grep -q "arena_max=1" "$OUT/tune.txt" || fail "tune --output/--command: $(cat "$OUT/tune.txt")"
ok "$MW" tune --repeat 1 --try glibc.malloc.arena_max=1 -o /dev/null --command=sh -c 'exit 0'
ok "$MW" probes --pid $A >"$OUT/probes-long.txt"
ok "$MW" probes -p $A >"$OUT/probes-short.txt"
cmp -s "$OUT/probes-long.txt" "$OUT/probes-short.txt" || fail "probes --pid is not -p"
echo "ok: --pid, --pid=, --output, --output=, --command, --command= equal -p, -o, -c; -p A,A is -p A"

# 3. explain and trim of a list: one after the other.
"$MW" explain -p $A,$B -o "$OUT/ab.txt" --json "$OUT/ab.jsonl" 2>"$OUT/ab.err" ||
	fail "explain -p A,B: exit $?: $(cat "$OUT/ab.err")"
python3 - "$OUT/ab.jsonl" $A $B <<'PY' || fail "explain -p A,B --json: $(head -c 300 "$OUT/ab.jsonl")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, len(lines)
got = [json.loads(l)["snapshot"] for l in lines]
assert [s["pid"] for s in got] == [int(sys.argv[2]), int(sys.argv[3])], [s["pid"] for s in got]
assert all("ledger" in s and "findings" in s for s in got)
PY
[ "$(grep -c '^mallocwatch: process [0-9]* (' "$OUT/ab.txt")" = 2 ] || fail "explain -p A,B: $(cat "$OUT/ab.txt")"
"$MW" explain -p $A,$gone,$B -o "$OUT/agb.txt" 2>"$OUT/agb.err"
rc=$?
[ $rc = 1 ] || fail "explain -p A,gone,B: exit $rc"
[ "$(cat "$OUT/agb.err")" = "mallocwatch: no process $gone" ] || fail "explain -p A,gone,B: $(cat "$OUT/agb.err")"
[ "$(grep -c '^mallocwatch: process [0-9]* (' "$OUT/agb.txt")" = 2 ] || fail "explain -p A,gone,B: A and B not both explained"
echo "ok: explain -p A,B: two reports, one JSON document a line; a gone one among them: its line, exit 1"

"$MW" trim -p $A,$B --no-stop -o "$OUT/ns.txt" --json "$OUT/ns.jsonl" 2>"$OUT/ns.err" ||
	fail "trim --no-stop: exit $?: $(cat "$OUT/ns.err")"
[ "$(grep -c 'would give back .* nothing called (--no-stop)$' "$OUT/ns.txt")" = 2 ] || fail "trim --no-stop: $(cat "$OUT/ns.txt")"
"$MW" trim -p $A,$gone,$B -o "$OUT/trim.txt" --json "$OUT/trim.jsonl" 2>"$OUT/trim.err"
rc=$?
[ $rc = 1 ] && [ "$(cat "$OUT/trim.err")" = "mallocwatch: no process $gone" ] ||
	fail "trim -p A,gone,B: exit $rc: $(cat "$OUT/trim.err")"
python3 - "$OUT/ns.jsonl" "$OUT/trim.jsonl" $A $B <<'PY' || fail "trim lists' JSON: $(cat "$OUT/ns.jsonl" "$OUT/trim.jsonl")"
import json, sys
ns = [json.loads(l)["trim"] for l in open(sys.argv[1]).read().splitlines()]
tr = [json.loads(l)["trim"] for l in open(sys.argv[2]).read().splitlines()]
a, b = int(sys.argv[3]), int(sys.argv[4])
assert [t["pid"] for t in ns] == [a, b] and all(t["dry_run"] and t["returned"] is None for t in ns), ns
assert [t["pid"] for t in tr] == [a, b] and all(t["returned"] == 1 for t in tr), tr
for n, t in zip(ns, tr):	# what was predicted without a stop was given back
	drop = t["rss_before"] - t["rss_after"]
	assert n["predicted"] > 3000000 and abs(drop - n["predicted"]) <= 0.02 * n["predicted"], (n, t)
PY
echo "ok: trim --no-stop -p A,B: the predictions, nothing called; trim -p A,gone,B: A and B trimmed as predicted, the gone one's line, exit 1"

# 4. --cgroup for explain and trim.
if [ -n "$V2" ] && [ -w "$V2/cgroup.procs" ] && mkdir "$CG" 2>/dev/null; then
	echo $A >"$CG/cgroup.procs" && echo $B >"$CG/cgroup.procs" || fail "cannot fill $CG"
	ok "$MW" explain --cgroup "$CG" --json "$OUT/cg.jsonl" -o /dev/null
	[ "$(wc -l <"$OUT/cg.jsonl")" = 2 ] || fail "explain --cgroup: $(wc -l <"$OUT/cg.jsonl") documents"
	ok "$MW" trim --cgroup "$CG" --dry-run -o "$OUT/cg.txt"
	[ "$(grep -c 'nothing called (--dry-run)$' "$OUT/cg.txt")" = 2 ] || fail "trim --cgroup: $(cat "$OUT/cg.txt")"
	mkdir "$CG/empty" || exit 99
	expect 1 "mallocwatch: no process in cgroup '$CG/empty'" "$MW" explain --cgroup "$CG/empty"
	expect 1 "mallocwatch: no process in cgroup '$CG/empty'" "$MW" trim --cgroup "$CG/empty"
	rmdir "$CG/empty"
	echo "ok: explain and trim --cgroup: both of its processes; an empty cgroup: one line, exit 1"
else
	echo "no writable cgroup v2: --cgroup of explain and trim not tried"
fi

# 5. The completion offers the long forms.
cat >"$OUT/comp.bash" <<'EOS'
. completions/mallocwatch.bash || exit 99
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
_mallocwatch
printf '%s\n' "${COMPREPLY[@]}"
EOS
for cmd in trace snapshot explain trim serve probes script; do
	w=$cmd; [ $cmd = trace ] && w=
	bash "$OUT/comp.bash" "$MW" $w -- >"$OUT/comp" 2>/dev/null || exit 99
	grep -qx -- --pid "$OUT/comp" || fail "$cmd: --pid not offered: $(tr '\n' ' ' <"$OUT/comp")"
	case $cmd in probes|script|serve) ;; *)
		grep -qx -- --output "$OUT/comp" || fail "$cmd: --output not offered" ;;
	esac
	case $cmd in probes|script) ;; *)
		for o in --cgroup --no-stop; do
			grep -qx -- $o "$OUT/comp" || fail "$cmd: $o not offered"
		done ;;
	esac
done
echo "ok: --pid, --output, --cgroup, --no-stop offered by the completion"
