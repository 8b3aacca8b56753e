#!/bin/sh
# mallocwatch snapshot of many processes (issue 17, item 2): three
# processes in a cgroup this test makes (cgroup v2 under
# /sys/fs/cgroup/unified, and the same three in a v1 hierarchy), one of
# them in a child cgroup whose name holds an escape sequence: `snapshot
# --cgroup DIR` and `-p A,B,C` report each, and each equals that
# process's own malloc_info(), arena for arena (examples/hold-arenas
# prints it and then holds its state: nothing changes while we read);
# where each lives (namespaces, cgroup) is in the text and the JSON, the
# cgroup's name quoted.  Then the errors, one line each, the others
# still reported, exit 1: a process gone before, one killed while it is
# read, a static binary, a libc without debug symbols, processes that
# are not ours to read (as nobody); and one -p still writes today's
# single-process JSON.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
V2=/sys/fs/cgroup/unified
[ -w "$V2/cgroup.procs" ] || skip "no writable cgroup v2 at $V2"
CG=$V2/mw-t-multi-$$
ESC=$(printf '\033')
CHILD="$CG/sub${ESC}[31mred"
V1=
for h in pids memory cpu; do
	[ -w "/sys/fs/cgroup/$h/cgroup.procs" ] && V1=/sys/fs/cgroup/$h/mw-t-multi-$$ && break
done
PIDS=
cleanup() {
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	# a cgroup goes once its processes are gone (the kernel may need a moment)
	for d in "$CHILD" "$CG" ${V1:+"$V1"}; do
		i=0
		while [ -d "$d" ] && ! rmdir "$d" 2>/dev/null && [ $i -lt 50 ]; do
			i=$((i + 1)); sleep 0.1
		done
	done
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$CG" "$CHILD" || fail "cannot make $CG"
[ -z "$V1" ] || mkdir "$V1" || fail "cannot make $V1"

# start NAME FD N [EXTRA [system]]: lib.sh hold_fd
start() { hold_fd "$@"; }
start a 3 4; A=$pid
start b 4 2 0 system; B=$pid
start c 5 0; C=$pid
echo $A >"$CG/cgroup.procs" && echo $B >"$CG/cgroup.procs" && echo $C >"$CHILD/cgroup.procs" ||
	fail "cannot move the processes into $CG"
[ -z "$V1" ] || for p in $A $B $C; do echo $p >"$V1/cgroup.procs" || fail "v1 $V1"; done

# split JSON PREFIX: each processes[] element as {"snapshot": ...} in
# PREFIX-PID.json; prints the pids in the report's order
split() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["processes"]:
    json.dump({"snapshot": p}, open("%s-%d.json" % (sys.argv[2], p["pid"]), "w"))
    print(p["pid"])
PY
}
# compare NAME PID XML: the process's snapshot in $OUT/NAME-PID.json
# against its malloc_info
compare() { expect_snapshot "$3" "$OUT/$1-$2.json" "$OUT/$1-$2"; }
check_all() {	# NAME: the three, each equal to its malloc_info
	compare $1 $A "$OUT/a.xml"; compare $1 $B "$OUT/b.xml"; compare $1 $C "$OUT/c.xml"
	echo "ok: $1: 3 processes, each equal to its malloc_info"
}

# --cgroup (v2), child cgroups included
"$MW" snapshot --cgroup "$CG" --json "$OUT/cg.json" -o "$OUT/cg.txt" 2>"$OUT/cg.err" ||
	{ _rc=$?; cat "$OUT/cg.err"; fail "--cgroup exited $_rc"; }
[ "$(split "$OUT/cg.json" "$OUT/cg" | sort -n | tr '\n' ' ')" = "$(printf '%s\n' $A $B $C | sort -n | tr '\n' ' ')" ] ||
	fail "--cgroup did not report exactly $A $B $C: $(split "$OUT/cg.json" "$OUT/cg")"
check_all cg
python3 - "$OUT/cg.json" "$CG" "$CHILD" $C <<'PY' || fail "--cgroup JSON"
import json, sys
d = json.load(open(sys.argv[1]))
root, child, c = sys.argv[2], sys.argv[3], int(sys.argv[4])
rel = lambda p: p[len("/sys/fs/cgroup/unified"):]
assert d["version"] == 1 and d["schema_version"] == 2 and d["mode"] == "cgroup" and d["cgroup"] == root, d["cgroup"]
for p in d["processes"]:
    w = p["where"]
    assert p["error"] is None and p["consistent"], p["pid"]
    assert w["pid_namespace"]["ours"] is True and w["mount_namespace"]["ours"] is True, w
    assert w["nspid"] == [p["pid"]] and w["pid_in_namespace"] == p["pid"], w
    assert w["cgroup_from"] == "v2", w
    # the escape byte comes back exactly, as \u001b in the JSON
    assert w["cgroup"] == rel(child if p["pid"] == c else root), (w["cgroup"], rel(child))
t = d["totals"]
assert t["processes_read"] == 3 and t["processes_not_read"] == 0, t
assert t["system_bytes"] == sum(p["totals"]["system_bytes"] for p in d["processes"]), t
assert t["arenas"] == 5 + 3 + 1, t
print("--cgroup: where and totals right")
PY
[ "$(grep -c '^mallocwatch: snapshot of process' "$OUT/cg.txt")" = 3 ] || fail "not three reports"
grep -q "^Total over 3 processes: 9 arenas, " "$OUT/cg.txt" || fail "no total: $(tail -n 1 "$OUT/cg.txt")"
grep -q "; cgroup /mw-t-multi-$$/sub\\\\x1b\[31mred (v2)\$" "$OUT/cg.txt" ||
	fail "the child cgroup is not shown quoted: $(grep cgroup "$OUT/cg.txt")"
grep -q "$ESC" "$OUT/cg.txt" "$OUT/cg.err" && fail "a raw escape byte reached the text"
grep -q '"cgroup": "/mw-t-multi-'$$'/sub\\u001[bB]\[31mred"' "$OUT/cg.json" || fail "the JSON's cgroup"
echo "ok: --cgroup: text and JSON say where each lives, the cgroup name quoted"

# the child cgroup alone; the same processes in a v1 hierarchy
"$MW" snapshot --cgroup "$CHILD" --json "$OUT/child.json" -o /dev/null || fail "--cgroup child exited $?"
[ "$(split "$OUT/child.json" "$OUT/child")" = $C ] || fail "the child cgroup is not $C alone"
if [ -n "$V1" ]; then
	"$MW" snapshot --cgroup "$V1" --json "$OUT/v1.json" -o /dev/null || fail "--cgroup v1 exited $?"
	split "$OUT/v1.json" "$OUT/v1" >/dev/null
	check_all v1
fi

# -p A,B,C, in that order
"$MW" snapshot -p $C,$A,$B,$A --json "$OUT/p.json" -o "$OUT/p.txt" || fail "-p A,B,C exited $?"
[ "$(split "$OUT/p.json" "$OUT/p" | tr '\n' ' ')" = "$C $A $B " ] || fail "-p order or repeats"
check_all p
grep -q '"mode": "processes"' "$OUT/p.json" || fail "-p mode"

# one -p: today's shape, {"version": 1, "snapshot": {...}}, plus "where"
"$MW" snapshot -p $A --json "$OUT/one.json" -o "$OUT/one.txt" || fail "-p A exited $?"
python3 - "$OUT/one.json" <<'PY' || fail "one -p: not the single-process shape"
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(d) == ["snapshot", "version"] and d["version"] == 1, sorted(d)
assert d["snapshot"]["where"]["cgroup_from"] == "v2", d["snapshot"]["where"]
print("one -p: the single-process shape, with where")
PY
sed -n 2p "$OUT/one.txt" | grep -q "^  pid namespace [0-9]* (ours), mount namespace [0-9]* (ours); cgroup /mw-t-multi-$$ (v2)\$" ||
	fail "one -p: where line: $(sed -n 2p "$OUT/one.txt")"

# errors: one line each on stderr, the others reported, exit 1
true & gone=$!
wait $gone
mkdir -p "$OUT/nodwarf"
cp "$GLIBC_PREFIX/lib/libc.so.6" "$OUT/nodwarf/" && strip --strip-debug "$OUT/nodwarf/libc.so.6"
"$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$OUT/nodwarf:/lib/x86_64-linux-gnu" /bin/sleep 600 &
nd=$!; PIDS="$PIDS $nd"
printf '#include <unistd.h>\nint main(void) { pause(); return 0; }\n' >"$OUT/static.c"
cc -static -o "$OUT/static" "$OUT/static.c" || fail "cannot build a static binary"
"$OUT/static" & st=$!; PIDS="$PIDS $st"
until grep -q "$OUT/nodwarf/libc.so.6" /proc/$nd/maps 2>/dev/null &&
	[ "$(readlink /proc/$st/exe)" = "$OUT/static" ]; do sleep 0.05; done
"$MW" snapshot -p $A,$gone,$nd,$st,$B --json "$OUT/err.json" -o "$OUT/err.txt" 2>"$OUT/err.err"
rc=$?
[ $rc = 1 ] || fail "-p with three bad processes exited $rc"
cat "$OUT/err.err"
[ "$(wc -l <"$OUT/err.err")" = 3 ] || fail "not one line per bad process"
grep -q "^mallocwatch: no process $gone\$" "$OUT/err.err" || fail "gone"
grep -q "^mallocwatch: no DWARF for '$OUT/nodwarf/libc.so.6' (glibc's struct layouts): install its debug symbols (Debian: libc6-dbg" \
	"$OUT/err.err" || fail "no DWARF"
grep -q "^mallocwatch: process $st maps no glibc (a static binary, or another libc)\$" "$OUT/err.err" ||
	fail "static"
grep -q "^Total over 2 processes (3 not read): " "$OUT/err.txt" || fail "total with errors"
python3 - "$OUT/err.json" $A $gone $nd $st $B <<'PY' || fail "errors in JSON"
import json, sys
d = json.load(open(sys.argv[1]))
kinds = {p["pid"]: p["error"] and p["error"]["kind"] for p in d["processes"]}
a, gone, nd, st, b = map(int, sys.argv[2:])
assert kinds == {a: None, gone: "exited", nd: "no_symbols", st: "no_glibc", b: None}, kinds
for p in d["processes"]:
    if p["error"]:
        assert sorted(p) == ["comm", "error", "pid", "where"], sorted(p)
        assert (p["where"] is None) == (p["pid"] == gone), p
print("errors: kinds", sorted(kinds.values(), key=str))
PY
split "$OUT/err.json" "$OUT/err" >/dev/null
compare err $A "$OUT/a.xml"
compare err $B "$OUT/b.xml"
echo "ok: gone, no DWARF, static: one line each, exit 1, the others reported"

# not ours to read: as nobody, every process here is root's
if command -v setpriv >/dev/null; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$MW" snapshot -p $A,$B --json - \
		>"$OUT/nobody.json" 2>"$OUT/nobody.err"
	rc=$?
	[ $rc = 1 ] || fail "as nobody: exit $rc"
	[ "$(wc -l <"$OUT/nobody.err")" = 2 ] &&
		grep -q "^mallocwatch: cannot read process $A's maps: Permission denied\$" "$OUT/nobody.err" ||
		fail "as nobody: $(cat "$OUT/nobody.err")"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert [p["error"]["kind"] for p in d["processes"]] == ["unreadable"] * 2, d' \
		"$OUT/nobody.json" || fail "as nobody: JSON"
	echo "ok: not ours to read: $(head -n 1 "$OUT/nobody.err")"
fi

# killed while it is read, or before: its 3 million free chunks took
# 0.33-0.43 s to follow at load 7 here, and 2 million take 0.12-0.2 s
# on a quiet machine (bench/walk.sh), after the libc's layouts are read;
# killed 0.1 s after the start, it is gone before its read could end,
# with some 0.1 s to spare when quiet (a kill at 0.3 s once came after a
# read that had ended: exit 0).  Each of the three reasons is true: gone
# before it was listed, a zombie when read, gone during the read.
start busy 6 0 3000000; busy=$pid
"$MW" snapshot -p $A,$busy,$B --json "$OUT/killed.json" -o /dev/null 2>"$OUT/killed.err" &
mw=$!
sleep 0.1
kill -KILL $busy
wait $mw
rc=$?
exec 6>&-
[ $rc = 1 ] || fail "a process killed meanwhile: exit $rc: $(cat "$OUT/killed.err")"
[ "$(wc -l <"$OUT/killed.err")" = 1 ] && grep -q "^mallocwatch: \(process $busy exited while it was read\|no process $busy\|process $busy has exited\)\$" \
	"$OUT/killed.err" || fail "killed meanwhile: $(cat "$OUT/killed.err")"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); k = [p["error"] and p["error"]["kind"] for p in d["processes"]]; assert k == [None, "exited", None], k' \
	"$OUT/killed.json" || fail "killed meanwhile: JSON"
echo "ok: killed meanwhile: $(cat "$OUT/killed.err")"

# usage: every option in snapshot --help and the man page
"$MW" snapshot --help >"$OUT/help" || fail "snapshot --help exited $?"
for opt in -p --cgroup --all --interval --count -o --json --read-timeout --quiet "Exit status" EXAMPLES; do
	grep -q -- "$opt" "$OUT/help" || fail "snapshot --help does not mention $opt"
	grep -q -- "$(echo "$opt" | sed 's/-/\\\\-/g')" docs/mallocwatch-snapshot.1 || [ "$opt" = "Exit status" ] ||
		fail "mallocwatch-snapshot.1 does not mention $opt"
done
for bad in "-p 1,x" "-p 1 --all" "--cgroup $CG -p 1" "-p 1,2 --interval 1" "--all --count 0" ""; do
	"$MW" snapshot $bad >/dev/null 2>"$OUT/usage.err"
	rc=$?
	[ $rc = 2 ] || fail "snapshot $bad: exit $rc"
done
"$MW" snapshot --cgroup "$OUT" >/dev/null 2>"$OUT/notcg.err"
[ $? = 1 ] && grep -q "^mallocwatch: '$OUT' is not a cgroup directory (no cgroup.procs)\$" "$OUT/notcg.err" ||
	fail "not a cgroup: $(cat "$OUT/notcg.err")"
mkdir "$CG/empty"
"$MW" snapshot --cgroup "$CG/empty" >/dev/null 2>"$OUT/empty.err"
rc=$?
rmdir "$CG/empty"
[ $rc = 1 ] && grep -q "^mallocwatch: no process in cgroup '$CG/empty'\$" "$OUT/empty.err" ||
	fail "empty cgroup: exit $rc: $(cat "$OUT/empty.err")"
echo "ok: usage errors exit 2; not a cgroup, an empty one: exit 1"
exec 3>&- 4>&- 5>&-
