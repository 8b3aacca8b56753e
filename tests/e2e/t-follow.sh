#!/bin/sh
# -f: -c's whole tree of processes under one tracer session, each new
# process added to the tracer's set before its first instruction
# (src/tracer/ptrace_tree.c, pidset.c).  Each process's report must agree with
# that process's own malloc_info() exactly:
#
# 0. real programs: sh -c 'python3 threads.py && sort --parallel=4 ...',
#    each process writing its own malloc_info() at exit (sort: an
#    LD_PRELOADed destructor, tests/fixtures/mi-at-exit.c; python3: its
#    last act, then os._exit): python3's and sort's exact.
# 1. fork without exec (tests/fixtures/fork-arenas): the child starts with
#    a copy of its parent's 4 arenas and exits 7; a vfork'd child execs
#    /bin/true.  Parent and forked child exact; the child's parent, exit
#    status and command line (after exec for the vfork'd one) reported.
# 2. sh -c 'arena-storm 4 ...; arena-storm 2 ... & wait': both exact;
#    --check judges each process and names the one that fails.
# 3. make -C a project whose recipe runs a threaded program: exact.
# 4. a python3 multiprocessing pool of 4 workers: every worker traced,
#    each report complete.
# 5. 1000 short-lived children: each traced and reaped, nothing lost.
# 6. without -f: a note counts the processes not traced.
# 7. -p PID -f: a running process's forked child and vfork+exec, exact.
# 8. titles a tree's processes give themselves (setproctitle), quoted.
# 9. -p PID -f: the processes under PID before tracing started named.
# needs: root glibc slow
. tests/lib/lib.sh
need_root
need_libc
FA=build/tests/fixtures/fork-arenas
MI=$PWD/build/tests/fixtures/mi-at-exit.so
[ -x $FA ] && [ -f "$MI" ] && [ -x build/tests/fixtures/retitle ] ||
	skip "no $FA, $MI or build/tests/fixtures/retitle (make check builds them)"

# compare NAME XML JSON: the report in JSON against malloc_info in XML
compare() { expect_malloc_info "$2" "$3" "$OUT/$1" "$1"; }

# 0. python3 threads and sort --parallel=4 under a shell
mkdir -p "$OUT/mi"
# python3 writes its own malloc_info() last, its collector off, and
# leaves with os._exit: its interpreter's finalizers and libraries'
# destructors free (and trim heaps) after a preloaded destructor would
# have run
cat >"$OUT/threads.py" <<'PY'
import ctypes, os, sys, threading
b = threading.Barrier(6)
def work(i):
    b.wait()
    keep = [bytearray(3000 + i) for _ in range(20000)]
    del keep[::2]
ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
[t.start() for t in ts]
[t.join() for t in ts]
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
path = ("%s/mi.%d.xml" % (sys.argv[1], os.getpid())).encode()
# nothing made by a thread may be freed from here on: a free into a
# thread's arena can trim its heap (the collector once did, between
# malloc_info() and the exit)
import gc
gc.collect()
gc.disable()
f = ctypes.c_void_p(libc.fopen(path, b"w"))
libc.malloc_info(0, f)
libc.fclose(f)
os._exit(0)
PY
seq 1 300000 | sort -R >"$OUT/input"
LD_PRELOAD=$MI MW_MI_DIR=$OUT/mi "$MW" -f --json "$OUT/real.json" -o "$OUT/real.txt" -c sh -c \
	"/usr/bin/python3 '$OUT/threads.py' '$OUT/mi' && sort --parallel=4 -S 50M '$OUT/input' >/dev/null" \
	2>"$OUT/real.err" || fail "-f on python3 and sort exited $?: $(cat "$OUT/real.err")"
python3 - "$OUT/real.json" "$OUT" <<'PY' || fail "python3 and sort's tree"
import json, os, sys
r = json.load(open(sys.argv[1]))
names = []
for p in r["processes"]:
    argv = p["target"].get("argv") or [""]
    name = os.path.basename(argv[0])
    if name in ("python3", "sort"):
        names.append(name)
        json.dump(p, open("%s/real-%s.json" % (sys.argv[2], name), "w"))
        os.rename("%s/mi/mi.%d.xml" % (sys.argv[2], p["target"]["pid"]),
                  "%s/real-%s.xml" % (sys.argv[2], name))
assert sorted(names) == ["python3", "sort"], [p["target"] for p in r["processes"]]
PY
compare python3 "$OUT/real-python3.xml" "$OUT/real-python3.json"
compare sort "$OUT/real-sort.xml" "$OUT/real-sort.json"

# 1. fork without exec, vfork + exec
"$MW" -f --json "$OUT/fa.json" -o "$OUT/fa.txt" -c $FA 4 "$OUT" 2>"$OUT/fa.err" ||
	fail "-f on fork-arenas exited $?: $(cat "$OUT/fa.err")"
python3 - "$OUT/fa.json" "$OUT" <<'PY' || fail "the tree's JSON"
import json, sys
r = json.load(open(sys.argv[1]))
ps = r["processes"]
assert len(ps) == 3, [p["target"] for p in ps]
root, child, vf = ps
assert root["ppid"] == 0 and child["ppid"] == root["target"]["pid"] and vf["ppid"] == root["target"]["pid"], ps
assert root["target"]["exit_status"] == 0 and child["target"]["exit_status"] == 7, (root["target"], child["target"])
assert vf["target"]["argv"] == ["true"], vf["target"]
assert vf["target"]["exit_status"] == 0, vf["target"]
assert r["totals"]["processes"] == 3, r["totals"]
for p in ps:
    assert p["events"]["complete"] and p["events"]["lost"] == 0, p["events"]
# the forked child's arenas came with it: a snapshot at its creation
assert all(a["at_attach"] for a in child["arenas"]), child["arenas"]
json.dump(root, open(sys.argv[2] + "/fa-parent.json", "w"))
json.dump(child, open(sys.argv[2] + "/fa-child.json", "w"))
PY
compare fork-parent "$OUT/parent.xml" "$OUT/fa-parent.json"
compare fork-child "$OUT/child.xml" "$OUT/fa-child.json"
grep -q "^mallocwatch: 3 processes in the tree (-f)" "$OUT/fa.txt" || fail "no tree in the summary"
# the forked child was traced from its first instruction: its report says
# what it inherited at fork, not attach's words, and sets that copy
# beside its exit's; no "see the warnings" where there is no warning
# (issue 46, items 7 and 13)
awk '/^  exit status 7$/ { c = 1 } c && /^mallocwatch: / { c = 0 } c' "$OUT/fa.txt" >"$OUT/fa-child.txt"
[ -s "$OUT/fa-child.txt" ] || fail "no summary of the forked child: $(cat "$OUT/fa.txt")"
for want in "1 attached in its parent at fork" " arena (parent) " "as inherited at fork" \
	"Allocator state, read from the process (at fork: the copy of its parent's allocator it started with):" \
	" AT FORK      AT EXIT       CHANGE"; do
	grep -qF "$want" "$OUT/fa-child.txt" || fail "the forked child's report has no '$want': $(cat "$OUT/fa-child.txt")"
done
grep -q "attached before tracing\|as at attach\|(before)\|at attach only" "$OUT/fa-child.txt" &&
	fail "the forked child is described in attach wording: $(cat "$OUT/fa-child.txt")"
grep -q "see the warnings" "$OUT/fa.txt" && ! grep -q "warning" "$OUT/fa.err" &&
	fail "'see the warnings' with no warning: $(grep "see the warnings" "$OUT/fa.txt")"
grep -Eq "^ +[0-9]+ +[0-9]+ +7 +5 " "$OUT/fa.txt" || fail "the child's row: $(cat "$OUT/fa.txt" | head -6)"

# 2. a shell's children, and --check per process
"$MW" -f --json "$OUT/sh.json" -o "$OUT/sh.txt" -c sh -c \
	"./examples/arena-storm 4 >'$OUT/a.xml'; ./examples/arena-storm 2 >'$OUT/b.xml' & wait" \
	2>"$OUT/sh.err" || fail "-f sh -c exited $?: $(cat "$OUT/sh.err")"
python3 - "$OUT/sh.json" "$OUT" <<'PY' || fail "the shell tree's JSON"
import json, sys
r = json.load(open(sys.argv[1]))
ps = r["processes"]
assert len(ps) == 3, [p["target"] for p in ps]
sh = ps[0]["target"]["pid"]
for name, p in zip("ab", ps[1:]):
    assert p["ppid"] == sh, p["ppid"]
    assert p["target"]["argv"][0] == "./examples/arena-storm", p["target"]
    json.dump(p, open("%s/sh-%s.json" % (sys.argv[2], name), "w"))
PY
compare sh-a "$OUT/a.xml" "$OUT/sh-a.json"
compare sh-b "$OUT/b.xml" "$OUT/sh-b.json"
"$MW" -f --check 'arenas<=3' -o /dev/null -c sh -c './examples/arena-storm 4 >/dev/null; ./examples/arena-storm 2 >/dev/null' \
	2>"$OUT/check.err"
rc=$?
[ $rc = 3 ] || fail "--check over the tree exited $rc, expected 3: $(cat "$OUT/check.err")"
[ "$(grep -Ec '^(PASS|FAIL) process [0-9]+ ' "$OUT/check.err")" = 3 ] ||
	fail "not one check per process: $(cat "$OUT/check.err")"
grep -q "^FAIL process [0-9]* ('./examples/arena-storm'\|./examples/arena-storm): arenas 5, limit <= 3" "$OUT/check.err" ||
	fail "the 5-arena process did not fail, named: $(cat "$OUT/check.err")"
grep -q "^2 passed, 1 failed" "$OUT/check.err" || fail "no total: $(cat "$OUT/check.err")"
# a selector by command name, junit with a testcase per process and rule
"$MW" -f --check 'comm=arena-storm:arenas<=3' --check 'comm=sh:arenas==1' --format junit \
	--format-output "$OUT/check.xml" -o /dev/null -c sh -c \
	'./examples/arena-storm 4 >/dev/null; ./examples/arena-storm 2 >/dev/null' 2>"$OUT/sel.err"
rc=$?
[ $rc = 3 ] || fail "comm= rules exited $rc, expected 3: $(cat "$OUT/sel.err")"
python3 tests/lib/junit_check.py "$OUT/check.xml" || fail "the junit of a tree: $(cat "$OUT/check.xml")"
python3 - "$OUT/check.xml" <<'PY' || fail "the junit of a tree: $(cat "$OUT/check.xml")"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
cases = s.findall("testcase")
assert s.get("tests") == "3" and s.get("failures") == "1" and s.get("errors") == "0", s.attrib
names = sorted(c.get("name") for c in cases)
assert names == ["comm=arena-storm:arenas<=3"] * 2 + ["comm=sh:arenas==1"], names
failed = [c for c in cases if c.find("failure") is not None]
assert len(failed) == 1 and "arenas 5" in failed[0].find("failure").get("message"), failed
assert len(set(c.get("classname") for c in cases)) == 3, [c.get("classname") for c in cases]
PY
# the classnames name the process by command and order, not pid: a CI's
# test history follows them from one run to the next
"$MW" -f --check 'comm=arena-storm:arenas<=3' --check 'comm=sh:arenas==1' --format junit \
	--format-output "$OUT/check2.xml" -o /dev/null -c sh -c \
	'./examples/arena-storm 4 >/dev/null; ./examples/arena-storm 2 >/dev/null' 2>/dev/null
python3 - "$OUT/check.xml" "$OUT/check2.xml" <<'PY' || fail "junit testcases differ between two runs of the same tree"
import sys, xml.etree.ElementTree as ET
a, b = ([(c.get("classname"), c.get("name"))
         for c in ET.parse(f).getroot().findall(".//testcase")] for f in sys.argv[1:3])
assert sorted(a) == sorted(b), (a, b)
assert all(c.startswith("mallocwatch.process.") and not c.split(".")[2].isdigit() for c, _ in a), a
print("junit classnames, the same in two runs:", sorted(set(c for c, _ in a)))
PY

# --repeat and a baseline over trees: processes matched by command line
# and order across runs and in the baseline (made with arena_max=2: 2
# arenas each; glibc makes no more)
TREE='./examples/arena-storm 2 >/dev/null; ./examples/arena-storm 3 >/dev/null'
GLIBC_TUNABLES=glibc.malloc.arena_max=2 "$MW" -q -f --json "$OUT/base.json" -o /dev/null \
	-c sh -c "$TREE" || fail "the baseline run failed"
# diff of two trees: each process against the baseline's same one, the
# arena-storms' arena counts changed (2 -> 3 and 2 -> 4)
"$MW" -q -f --json "$OUT/new.json" -o /dev/null -c sh -c "$TREE" || fail "the new run failed"
"$MW" diff "$OUT/base.json" "$OUT/new.json" >"$OUT/diff.txt" 2>"$OUT/diff.err" || fail "diff exited $?"
grep -q "^Processes, matched by command line and order (as check --baseline matches them): 3 in both ([23] changed), 0 appeared, 0 vanished" \
	"$OUT/diff.txt" && grep -q "^~ './examples/arena-storm 3' (pid [0-9]* -> [0-9]*): " "$OUT/diff.txt" &&
	[ "$(grep -c '^arenas  *2  *[34]  *+[12] ' "$OUT/diff.txt")" = 2 ] ||
	fail "diff of two trees: $(cat "$OUT/diff.txt" "$OUT/diff.err")"
"$MW" -q -f --repeat 2 --baseline "$OUT/base.json" --check 'arenas<=+0' --format json \
	--format-output "$OUT/rep.json" -o /dev/null -c sh -c "$TREE" 2>"$OUT/rep.err"
rc=$?
[ $rc = 3 ] || fail "--repeat --baseline over a tree exited $rc, expected 3: $(cat "$OUT/rep.err")"
python3 - "$OUT/rep.json" <<'PY' || fail "--repeat over a tree: $(cat "$OUT/rep.json")"
import json, sys
r = json.load(open(sys.argv[1]))
res = r["rules"]
assert len(res) == 3 and all(x["process"] for x in res), res
# the shell, then each arena-storm against the baseline's same one
got = [(x["ok"], x["value"], x["baseline"]) for x in res]
assert got == [(True, 1, 1), (False, 3, 2), (False, 4, 2)], got
# each result: every run's pid and value, and the run judged (the first
# with the largest value), whose pid is the result's: where the values tie,
# the first run's, not the last's
for x in res:
    runs = x["runs"]
    assert [r["run"] for r in runs] == [1, 2] and len(set(r["pid"] for r in runs)) == 2, x
    worst = max(r["value"] for r in runs)
    assert x["run"] == 1 + [r["value"] for r in runs].index(worst), x
    assert x["process"] == runs[x["run"] - 1]["pid"] and x["value"] == worst, x
PY
grep -Eq "^mallocwatch: process './examples/arena-storm 3': arenas per run: 1: [0-9]+ \(pid [0-9]+\), 2: [0-9]+ \(pid [0-9]+\); max [0-9]+, run [12]$" \
	"$OUT/rep.err" || fail "--repeat -f: no per-run values: $(cat "$OUT/rep.err")"

# 3. make -C a project whose recipe runs a threaded program
mkdir -p "$OUT/proj"
printf 'all:\n\t%s 3 >storm.xml\n' "$PWD/examples/arena-storm" >"$OUT/proj/Makefile"
"$MW" -f --json "$OUT/make.json" -o "$OUT/make.txt" -c make -s -C "$OUT/proj" 2>"$OUT/make.err" ||
	fail "-f make exited $?: $(cat "$OUT/make.err")"
python3 - "$OUT/make.json" "$OUT" <<'PY' || fail "make's tree"
import json, sys
r = json.load(open(sys.argv[1]))
st = [p for p in r["processes"] if (p["target"].get("argv") or [""])[0].endswith("arena-storm")]
assert len(st) == 1, [p["target"] for p in r["processes"]]
json.dump(st[0], open(sys.argv[2] + "/make-storm.json", "w"))
PY
compare make "$OUT/proj/storm.xml" "$OUT/make-storm.json"

# 4. python3 multiprocessing: a pool of 4 workers (forked)
"$MW" -f --json "$OUT/py.json" -o "$OUT/py.txt" -c /usr/bin/python3 -c '
import multiprocessing as mp
mp.set_start_method("fork")
with mp.Pool(4) as p:
    assert sum(p.map(abs, range(-100, 100))) == 10000
' 2>"$OUT/py.err" || fail "-f python3 pool exited $?: $(cat "$OUT/py.err")"
python3 - "$OUT/py.json" <<'PY' || fail "the pool's tree: $(cat "$OUT/py.err")"
import json, sys
r = json.load(open(sys.argv[1]))
ps = r["processes"]
root = ps[0]["target"]["pid"]
workers = [p for p in ps if p["ppid"] == root]
assert len(workers) >= 4, [(p["target"], p["ppid"]) for p in ps]
for p in ps:
    assert p["events"]["complete"] and p["events"]["lost"] == 0, p["events"]
print("python3 pool: %d processes, %d created by the program" % (len(ps), len(workers)))
PY

# 5. 1000 short-lived children
/usr/bin/time -f %M -o "$OUT/k.rss" "$MW" -f --json "$OUT/k.json" -o "$OUT/k.txt" -c sh -c \
	'i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i + 1)); done' 2>"$OUT/k.err" ||
	fail "-f with 1000 children exited $?: $(cat "$OUT/k.err")"
python3 - "$OUT/k.json" <<'PY' || fail "1000 children"
import json, sys
r = json.load(open(sys.argv[1]))
ps = r["processes"]
assert len(ps) == 1001, len(ps)
assert len(set(p["target"]["pid"] for p in ps)) == 1001
assert all(p["target"]["exit_status"] == 0 for p in ps), [p["target"] for p in ps if p["target"]["exit_status"]]
assert r["totals"]["lost"] == 0, r["totals"]
assert all(p["events"]["complete"] for p in ps)
PY
grep -q "and 951 more" "$OUT/k.txt" || fail "the tree table is not cut at 50 rows"
grep -q "^  summaries below: the program and the 9 of the other 1000 processes that held the most at exit" \
	"$OUT/k.txt" || fail "the summary does not say which processes it summarizes: $(head -60 "$OUT/k.txt" | tail -8)"
echo "1000 children: each traced and reaped, 0 lost; mallocwatch's peak RSS $(cat "$OUT/k.rss") KiB"

# 8. titles (issue 46): a prefork server's children retitle themselves
#    over their arguments (setproctitle); each row and summary shows the
#    title at exit beside the command line, another process's bytes
#    quoted (an escape sequence and a bidirectional override in one)
RT=build/tests/fixtures/retitle
PAD=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
"$MW" -f --json "$OUT/rt.json" -o "$OUT/rt.txt" --html "$OUT/rt.html" -c $RT 3 $PAD 2>"$OUT/rt.err" ||
	fail "-f retitle exited $?: $(cat "$OUT/rt.err")"
python3 - "$OUT/rt.json" <<'PY' || fail "titles in the JSON"
import json, sys
ps = json.load(open(sys.argv[1]))["processes"]
assert "title" not in ps[0]["target"], ps[0]["target"]
got = [(p["target"].get("title"), p["target"].get("title_read")) for p in ps[1:]]
assert got == [("retitle: worker 1", "exit"), ("retitle: worker 2", "exit"),
               ("retitle: \x1b[2Jworker\u202e 3", "exit")], got
PY
for i in 1 2; do
	grep -Eq "^ +[0-9]+ +[0-9]+ +0 .*  $RT 3 $PAD  \(title 'retitle: worker $i'\)$" "$OUT/rt.txt" ||
		fail "no title in the tree's row $i: $(head -8 "$OUT/rt.txt")"
	grep -qx "  title at exit: retitle: worker $i" "$OUT/rt.txt" || fail "no title in summary $i"
done
grep -qF "(title 'retitle: \x1b[2Jworker\xe2\x80\xae 3')" "$OUT/rt.txt" &&
	grep -qxF '  title at exit: retitle: \x1b[2Jworker\xe2\x80\xae 3' "$OUT/rt.txt" ||
	fail "the hostile title is not quoted: $(grep -a title "$OUT/rt.txt")"
LC_ALL=C grep -q "$(printf '\033')" "$OUT/rt.txt" "$OUT/rt.html" && fail "an escape byte reached the summary or the page"
grep -q "&mdash; retitle: worker 2</h1>" "$OUT/rt.html" || fail "no title in the page's headings"
echo "titles: beside the command line in the tree, the summaries, the JSON and the page"

# 7. -p PID -f: a running process (held on a FIFO) followed from when
#    tracing starts: its forked child and its vfork+exec'd /bin/true
L=$GLIBC_PREFIX/lib
mkdir -p "$OUT/p"
rm -f "$OUT/p/in"
mkfifo "$OUT/p/in"
(exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
 exec "$L/ld-linux-x86-64.so.2" --library-path "$L:/lib/x86_64-linux-gnu" $FA 4 "$OUT/p" -) \
	<"$OUT/p/in" >/dev/null &
held=$!
exec 4>"$OUT/p/in"
wait_held $held 30
"$MW" -p $held -f --json "$OUT/p.json" -o "$OUT/p.txt" 2>"$OUT/p.err" 4>&- &
mw=$!
wait_for "$OUT/p.err" "tracing process $held and the processes it creates (-f)" 120 $mw
echo go >&4
exec 4>&-
wait $mw || fail "-p -f exited $?: $(cat "$OUT/p.err")"
wait $held || fail "the held program failed"
python3 - "$OUT/p.json" "$OUT" "$held" <<'PY' || fail "-p -f's JSON"
import json, sys
r = json.load(open(sys.argv[1]))
ps = r["processes"]
assert len(ps) == 3 and ps[0]["target"]["pid"] == int(sys.argv[3]), [p["target"] for p in ps]
assert ps[1]["ppid"] == ps[2]["ppid"] == int(sys.argv[3]), [p["ppid"] for p in ps]
assert ps[2]["target"]["argv"] == ["true"], ps[2]["target"]
# each process's real end, as ptrace gave it: the held program 0, its
# forked child 7, the vfork'd true 0 (issue 46: null for all)
assert [p["target"]["exit_status"] for p in ps] == [0, 7, 0], [p["target"] for p in ps]
json.dump(ps[0], open(sys.argv[2] + "/p-parent.json", "w"))
json.dump(ps[1], open(sys.argv[2] + "/p-child.json", "w"))
PY
compare p-parent "$OUT/p/parent.xml" "$OUT/p-parent.json"
compare p-child "$OUT/p/child.xml" "$OUT/p-child.json"
grep -Eq "^ +$held +- +0 +5 " "$OUT/p.txt" || fail "the attached process's row: $(head -5 "$OUT/p.txt")"
[ "$(grep -c "^  exit status 7$" "$OUT/p.txt")" = 1 ] || fail "-p -f: the child's exit status is not in its summary"

# 9. -p PID -f on a process that had children before tracing started
#    (a prefork server's workers): they are named, not followed, and the
#    ways to trace them too offered (issue 46)
mkfifo "$OUT/p/in9"
("$L/ld-linux-x86-64.so.2" --library-path "$L:/lib/x86_64-linux-gnu" /bin/sh -c \
	'sleep 61 & sleep 62 & read x; kill $(jobs -p) 2>/dev/null; wait' <"$OUT/p/in9" >/dev/null 2>&1) &
exec 4>"$OUT/p/in9"
sh9=
i=0
until [ -n "$sh9" ] && [ "$(pgrep -c -P "$sh9" sleep)" = 2 ]; do
	sh9=$(pgrep -f -n "^$L/ld-linux-x86-64.so.2 --library-path $L:/lib/x86_64-linux-gnu /bin/sh -c sleep 61")
	i=$((i + 1)); [ $i -lt 1200 ] || fail "the shell of section 9 did not start its children"; sleep 0.05
done
kids=$(pgrep -P "$sh9" sleep | sort -n | tr '\n' ',' | sed 's/,$//')
"$MW" -p $sh9 -f --duration 1 -o "$OUT/p9.txt" 2>"$OUT/p9.err" 4>&- || fail "-p -f (9) exited $?: $(cat "$OUT/p9.err")"
echo go >&4
exec 4>&-
wait
grep -q "^mallocwatch: process $sh9 had 2 processes under it when tracing started, not traced (-f follows those created from now): [0-9]* 'sleep 6[12]', [0-9]* 'sleep 6[12]'; to trace them too: -p $sh9,$kids (their new processes not followed)" \
	"$OUT/p9.err" || fail "-p -f does not name the processes there before it: $(cat "$OUT/p9.err")"
grep -q "^  process $sh9 had 2 processes under it when tracing started" "$OUT/p9.txt" ||
	fail "the summary does not name them: $(head -8 "$OUT/p9.txt")"
echo "-p -f: the 2 processes there before tracing named, -p $sh9,$kids offered"

# 6. without -f
"$MW" -o /dev/null -c sh -c './examples/arena-storm 2 >/dev/null; true' 2>"$OUT/nof.err" ||
	fail "-c sh exited $?"
grep -q "the program created 1 process, not traced: -f follows them" "$OUT/nof.err" ||
	fail "no note about the untraced child: $(cat "$OUT/nof.err")"
echo "-f: fork, vfork+exec, a shell's children, make, a python pool and 1000 children traced"
