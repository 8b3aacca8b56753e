#!/bin/sh
# stapbpf's uprobe sites armed as one uprobe_multi link per file
# (shim/umulti-shim.c; Linux 6.6 and later), instead of a tracefs event
# and a perf event each:
#  1. a run's tracer holds one uprobe_multi link on the probe-enabled
#     libc with every site of its script and defines nothing in
#     uprobe_events; a process on that libc has an int3 at each of those
#     sites while the tracer runs, and once it ended, at none that no
#     other tracer on the machine holds (other runs' tracers, another
#     make check's, arm the same sites of the same libc: an int3 there
#     is theirs, as the load run of the last session found);
#  2. the same program traced through the link, through it with the
#     handlers as stapbpf made them (MW_UMULTI_NO_INPLACE: no update made
#     in place) and through stapbpf's own tracefs events
#     (MALLOCWATCH_ATTACH=tracefs): the same hits, probe by probe, and on
#     the program's jmp_buf exactly what it did; a heap grown and shrunk
#     through the link with and without the updates in place: the same
#     heap records, exact; the shim's log (MW_UMULTI_INPLACE_LOG) shows
#     the setjmp handlers' counts added in place and the heap handlers'
#     values stored in place, every changed program loaded;
#  3. a tracer killed with SIGKILL, its mallocwatch with it, leaves no
#     site armed that no other tracer holds (the link goes with its
#     descriptors) and no uprobe definition;
#  4. the shim alone, driven as stapbpf drives it (tests/lib/umulti_shim.py):
#     lines stapbpf never writes are refused, other files are untouched,
#     a site on a missing file fails the arming with ENOENT, a real one
#     is armed and disarmed; with MW_UMULTI_SITES naming that site, its
#     link is made before stapbpf's arming and used; naming another
#     offset, or a file that is not there, garbled or a FIFO, the early
#     link is closed and the site armed as without it.
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
LIBC=$GLIBC_PREFIX/lib/libc.so.6
SHIM=$PWD/build/umulti-shim.so
[ -f "$SHIM" ] || fail "no $SHIM (make all)"
"$MW" -v -o /dev/null -c /bin/true 2>"$OUT/probe.err" || fail "mallocwatch -c /bin/true: $(cat "$OUT/probe.err")"
grep -q 'uprobes attached as one uprobe_multi link' "$OUT/probe.err" ||
	skip "this kernel has no uprobe_multi links (Linux 6.6): stapbpf attaches through tracefs"
UE=/sys/kernel/debug/tracing/uprobe_events
# no other tracer of ours holds these sites from here on: that run's
# stapbpf may still be exiting (--cleanup waits for it)
"$MW" --cleanup 2>/dev/null

# armed PID SITES: how many of SITES ("PATH OFFSET" lines) hold an int3
# (0xcc) in process PID's memory; the file's mapping from /proc/PID/maps
armed() { python3 tests/lib/int3_sites.py armed "$1" "$2"; }
# unheld PID SITES: how many of SITES hold an int3 in process PID's
# memory although no tracer on the machine holds them: no process's
# uprobe_multi link (its fdinfo) and no tracefs definition names them;
# then, on stderr, the holders of uprobe perf events (--stacks: their
# sites cannot be told), which may hold them
unheld() { python3 tests/lib/int3_sites.py unheld "$1" "$2" "$UE"; }
# none_unheld WHEN: wait (60 s at most: a tracer of another run, its
# --stacks perf events, may take that long to go) until no site of
# $OUT/sites holds an int3 that no other tracer holds
none_unheld() {
	_i=0
	until [ "$(unheld $sleeper "$OUT/sites" 2>"$OUT/unheld.err")" = 0 ]; do
		_i=$((_i + 1))
		[ $_i -lt 600 ] || fail "$(unheld $sleeper "$OUT/sites" 2>&1 | tail -n 1) sites armed $1 with no tracer holding them; $(holders); $(cat "$OUT/unheld.err")"
		sleep 0.1
	done
}
# holders: who else holds uprobe sites, for a failure's message: every
# process with a uprobe_multi link (pid, comm, sites) and the tracefs
# definitions
holders() {
	for f in /proc/[0-9]*/fdinfo/*; do
		grep -q '^link_type:	uprobe_multi' "$f" 2>/dev/null || continue
		_p=${f#/proc/}; _p=${_p%%/*}
		echo "pid $_p ($(cat /proc/$_p/comm 2>/dev/null)): $(grep -c '^[0-9]*	' "$f") sites;"
	done
	echo "tracefs definitions: $(grep -c . $UE)"
}
# ended PID WHEN: wait (30 s at most) until the tracer PID has exited (a
# zombie with no thread left, or gone: its descriptors are closed; a
# leader that is a zombie while another thread still closes the shared
# descriptors, a link's taking 30 ms, has not); i: the 10 ms steps taken
ended() {
	i=0
	while [ -e /proc/$1 ] && { [ "$(cut -d' ' -f3 /proc/$1/stat 2>/dev/null)" != Z ] ||
		[ "$(ls /proc/$1/task 2>/dev/null | wc -l)" -gt 1 ]; }; do
		i=$((i + 1)); [ $i -lt 3000 ] || fail "tracer $1 still there 30 s $2"; sleep 0.01
	done
}
# a process on the probe-enabled libc that outlives the runs below
"$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$GLIBC_PREFIX/lib" /bin/sleep 3600 &
sleeper=$!
mw=
# a failure while the held run below waits: let it end (its program waits
# for go), so that no tracer of this test outlives it
trap 'kill $sleeper 2>/dev/null; [ -z "$mw" ] || { touch "$OUT/go"; kill $mw 2>/dev/null; }' EXIT
i=0
until grep -q "$LIBC" /proc/$sleeper/maps 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 500 ] || fail "the sleeper never mapped $LIBC"; sleep 0.01
done

# 1. the link, its sites, and the int3s.  First no site may be armed by
# anyone: an earlier --stacks run's closer (a detached process) may still
# be closing its uprobe perf events on this libc, 0.1 s or more each
# every traced site of the libc, as "PATH OFFSET" (bench/sites.py: the
# file offsets uprobes take)
"$MW" probes --libc "$LIBC" --json 2>/dev/null | python3 bench/sites.py "$LIBC" |
	sed "s|^|$LIBC |" >"$OUT/all-sites"
[ -s "$OUT/all-sites" ] || exit 99
cp "$OUT/all-sites" "$OUT/sites"
none_unheld "before the test began"
rm -f "$OUT/held.log"
MW_UMULTI_LOG=$OUT/held.log "$MW" -q -o /dev/null --json "$OUT/held.json" -c sh -c "touch '$OUT/started'; \
	until [ -e '$OUT/go' ]; do sleep 0.05; done" 2>"$OUT/held.err" &
mw=$!
i=0
until [ -e "$OUT/started" ]; do
	i=$((i + 1)); [ $i -lt 3000 ] || fail "the program never started: $(cat "$OUT/held.err")"; sleep 0.01
done
sb=$(pgrep -P $mw -x stapbpf) || fail "no stapbpf child of mallocwatch"
tracer_sites $sb >"$OUT/sites"
n=$(wc -l <"$OUT/sites")
links=$(grep -l '^link_type:	uprobe_multi' /proc/$sb/fdinfo/* 2>/dev/null | wc -l)
want=$(wc -l <"$OUT/all-sites")
echo "tracer $sb: $links uprobe_multi link(s), $n sites (the script's: $want)"
[ "$links" = 1 ] || fail "tracer $sb holds $links uprobe_multi links, not 1"
[ "$n" = "$want" ] || fail "the link has $n sites, the script $want"
[ "$(cut -d' ' -f1 "$OUT/sites" | sort -u)" = "$LIBC" ] || fail "sites outside $LIBC: $(cut -d' ' -f1 "$OUT/sites" | sort -u)"
grep -q "stapprobe_${sb}_" $UE && fail "tracer $sb defined uprobes in tracefs: $(grep -c "stapprobe_${sb}_" $UE)"
# its hash maps of more than 8192 entries made without preallocation (the
# shim's BPF_F_NO_PREALLOC, bit 0 of map_flags), the smaller ones (the
# lock waits', protocol.h MW_MAP_WAITS) preallocated, its arrays as they were
for f in $(grep -l '^map_type:	1$' /proc/$sb/fdinfo/* 2>/dev/null); do
	awk '/^max_entries:/ { n = $2 } /^map_flags:/ { f = $2 }
	END { print n, (index("13579bdf", substr(f, length(f))) ? "noprealloc" : "prealloc") }' "$f"
done >"$OUT/hashmaps"
big=$(awk '$1 > 8192' "$OUT/hashmaps" | wc -l)
small=$(awk '$1 <= 8192' "$OUT/hashmaps" | wc -l)
[ "$big" -gt 0 ] || fail "tracer $sb holds no hash map of more than 8192 entries: $(cat "$OUT/hashmaps")"
[ "$small" -gt 0 ] || fail "tracer $sb holds no hash map of 8192 entries or fewer: $(cat "$OUT/hashmaps")"
awk '$1 > 8192 && $2 != "noprealloc"' "$OUT/hashmaps" | grep -q . &&
	fail "tracer $sb's hash maps of more than 8192 entries preallocated: $(cat "$OUT/hashmaps")"
awk '$1 <= 8192 && $2 != "prealloc"' "$OUT/hashmaps" | grep -q . &&
	fail "tracer $sb's hash maps of 8192 entries or fewer not preallocated: $(cat "$OUT/hashmaps")"
echo "ok: $big hash maps made on demand, $small preallocated"
# identical site programs loaded once (the shim's sharing): the tracer
# holds as many programs (kprobe type, distinct prog_id) as its object
# has distinct site programs (section and relocations), and the
# dispatcher; a descriptor for each site's still
bo=$(tr '\0' '\n' </proc/$sb/cmdline | grep '\.bo$') || fail "no object in tracer $sb's command line"
want_progs=$(python3 - "$bo" <<'PY'
import subprocess, sys, hashlib
f = sys.argv[1]
data = open(f, "rb").read()
secs = {}
for line in subprocess.run(["readelf", "-SW", f], capture_output=True, text=True).stdout.splitlines():
    p = line.replace("[ ", "[").split()
    if len(p) > 6 and (p[1].startswith("uprobe/") or p[1].startswith(".reluprobe/") or p[1].startswith(".rel.uprobe/")):
        off, size = int(p[4], 16), int(p[5], 16)
        secs[p[1]] = data[off:off + size]
progs = {n: secs[n] + secs.get(".rel" + n, b"") for n in secs if n.startswith("uprobe/")}
print(len(set(progs.values())) + 1)
PY
) || exit 99
got_progs=$(grep -l '^prog_type:	2$' /proc/$sb/fdinfo/* 2>/dev/null | xargs -r grep -h '^prog_id:' | sort -u | wc -l)
echo "tracer $sb: $got_progs programs, its object $((want_progs - 1)) distinct site programs and the dispatcher"
[ "$got_progs" = "$want_progs" ] || fail "tracer $sb holds $got_progs programs, its object's distinct ones are $want_progs"
a=$(armed $sleeper "$OUT/sites") || fail "reading the sleeper's memory: $a"
[ "$a" = "$n" ] || fail "$a of $n sites hold an int3 in a process on the libc while traced"
touch "$OUT/go"
wait $mw || fail "the held run exited $?: $(cat "$OUT/held.err")"
mw=
ended $sb "after its run"
gone=$i
none_unheld "after the tracer ended"
echo "ok: one link of $n sites, an int3 at each while traced, none after but other tracers' (tracer gone in $((gone * 10)) ms)"
# that link was the one the shim made while stapbpf loaded its programs,
# from the sites mallocwatch wrote beside the script
[ "$(cat "$OUT/held.log")" = "prearmed $n sites: used" ] ||
	fail "the sites were not armed early: $(cat "$OUT/held.log" 2>&1)"
echo "ok: $(cat "$OUT/held.log")"

# 2. the same hits through the link (its handlers' counts added in place,
# and as stapbpf made them: MW_UMULTI_NO_INPLACE) and through tracefs events
for how in link plain tracefs; do
	case $how in
	link) export MW_UMULTI_INPLACE_LOG=$OUT/link.inplace ;;
	plain) export MW_UMULTI_NO_INPLACE=1 ;;
	tracefs) export MALLOCWATCH_ATTACH=tracefs ;;
	esac
	"$MW" -q --json "$OUT/$how.json" -o /dev/null -c ./examples/setjmp-loop 20000 \
		>"$OUT/$how.prog" 2>"$OUT/$how.err" || fail "$how: mallocwatch exited $?: $(cat "$OUT/$how.err")"
	unset MALLOCWATCH_ATTACH MW_UMULTI_NO_INPLACE MW_UMULTI_INPLACE_LOG
done
# the setjmp family alone, of one process and of a tree (-f: keys that
# begin with the process): every handler's count made in place
export MW_UMULTI_INPLACE_LOG=$OUT/sjone.inplace
"$MW" -q -e setjmp --json "$OUT/sjone.json" -o /dev/null -c ./examples/setjmp-loop 20000 \
	>"$OUT/sjone.prog" 2>"$OUT/sjone.err" || fail "setjmp alone: mallocwatch exited $?: $(cat "$OUT/sjone.err")"
export MW_UMULTI_INPLACE_LOG=$OUT/sjtree.inplace
"$MW" -q -f -e setjmp --json "$OUT/sjtree.json" -o /dev/null -c sh -c './examples/setjmp-loop 20000; true' \
	>"$OUT/sjtree.prog" 2>"$OUT/sjtree.err" || fail "setjmp, -f: mallocwatch exited $?: $(cat "$OUT/sjtree.err")"
unset MW_UMULTI_INPLACE_LOG
for how in link plain; do
	case $how in
	link) export MW_UMULTI_INPLACE_LOG=$OUT/heap.inplace ;;
	plain) export MW_UMULTI_NO_INPLACE=1 ;;
	esac
	"$MW" -q -e heap --json "$OUT/heap-$how.json" -o /dev/null -c ./examples/heap-churn 5000 thread \
		>/dev/null 2>"$OUT/heap-$how.err" || fail "heap, $how: mallocwatch exited $?: $(cat "$OUT/heap-$how.err")"
	unset MW_UMULTI_NO_INPLACE MW_UMULTI_INPLACE_LOG
done
python3 - "$OUT" <<'PY' || fail "the three ways disagree"
import json, re, sys
link, plain, tfs = (json.load(open("%s/%s.json" % (sys.argv[1], n)))
                    for n in ("link", "plain", "tracefs"))
sjone, sjtree = (json.load(open("%s/%s.json" % (sys.argv[1], n))) for n in ("sjone", "sjtree"))
sjtree = sjtree["processes"][-1]	# sh's child, the loop
for name, r in (("link", link), ("plain", plain), ("tracefs", tfs), ("sjone", sjone),
                ("sjtree", sjtree)):
    # the program's own jmp_buf (its address differs run to run: PIE)
    buf = re.search(r"^jmp_buf (0x[0-9a-f]+)", open("%s/%s.prog" % (sys.argv[1], name)).read(),
                    re.M).group(1)
    assert r["events"]["lost"] == 0 and r["events"]["complete"], (name, r["events"])
    got = {b["probe"]: b["count"] for b in r["setjmp"]["jmp_bufs"] if b["address"] == buf}
    assert got == {"setjmp": 20000, "longjmp": 20000, "longjmp_target": 20000}, (name, got)
lp, pp, tp = (r["events"]["by_probe"] for r in (link, plain, tfs))
assert lp == tp and pp == tp, ("by probe", lp, pp, tp)
print("ok: link (in place and not) and tracefs events: the same hits by probe", lp)
# the heap: counts, peak and size per heap, packed in one value each
link, plain = (json.load(open("%s/heap-%s.json" % (sys.argv[1], n))) for n in ("link", "plain"))
keep = lambda r: sorted((h["grew"], h["shrank"], h["peak_size"], h["size"]) for h in r["heaps"])
assert keep(link) == keep(plain) and keep(link) and keep(link)[0][:2] == (5000, 5000), \
    ("heaps", keep(link), keep(plain))
print("ok: heap records, updates in place and not:", keep(link))
def log(name):
    lines = [l.split() for l in open("%s/%s.inplace" % (sys.argv[1], name)) if l.startswith("inplace ")]
    assert lines and all(l[6] == "loaded" for l in lines), (name, lines)
    return sum(int(l[3]) for l in lines), sum(int(l[5]) for l in lines)
stores, arrays = log("link")
assert stores > 0, ("no count stored in place in the setjmp run", stores, arrays)
hstores, harrays = log("heap")
assert hstores >= 2, ("the heap handlers' values were not stored in place", hstores, harrays)
print("ok: in place: setjmp run %d stores, %d array stores; heap run %d stores, %d array stores; all loaded"
      % (stores, arrays, hstores, harrays))
# -e setjmp: the handlers' programs are all the shim sees, each one count
for name in ("sjone", "sjtree"):
    lines = [l.split() for l in open("%s/%s.inplace" % (sys.argv[1], name)) if l.startswith("inplace ")]
    assert len(lines) >= 3 and all(l[3] == "1" for l in lines), \
        ("%s: a setjmp handler's count not made in place" % name, lines)
    print("ok: %s: %d setjmp handlers, each its count in place" % (name, len(lines)))
PY

# 3. SIGKILL: the link goes with the tracer's descriptors
"$MW" --cleanup 2>/dev/null	# part 2's tracers gone
none_unheld "with no tracer of ours left"
rm -f "$OUT/started" "$OUT/go"
MW_UMULTI_NO_INPLACE=1 "$MW" -q -o /dev/null -c sh -c "touch '$OUT/started'; sleep 30" 2>/dev/null &
mw=$!
i=0
until [ -e "$OUT/started" ]; do
	i=$((i + 1)); [ $i -lt 3000 ] || fail "the third program never started"; sleep 0.01
done
sb=$(pgrep -P $mw -x stapbpf) || fail "no stapbpf child of mallocwatch"
a=$(armed $sleeper "$OUT/sites")
[ "$a" = "$n" ] || fail "before the kill: $a of $n sites armed"
kill -KILL $sb $mw
wait $mw 2>/dev/null
mw=
ended $sb "after SIGKILL"
none_unheld "after the tracer was killed"
pkill -f "sh -c touch '$OUT/started'; sleep 30" 2>/dev/null
grep -q "stapprobe_${sb}_" $UE && fail "the killed tracer left uprobe definitions: $(grep -c "stapprobe_${sb}_" $UE)"
"$MW" -o /dev/null -c true 2>"$OUT/next.err" || fail "the next run failed: $(cat "$OUT/next.err")"
echo "ok: a tracer killed with SIGKILL left no site armed but other tracers' and no definition"

# 4. the shim alone
"$MW" --cleanup 2>/dev/null	# the next run's tracer gone
LD_PRELOAD=$SHIM python3 tests/lib/umulti_shim.py lines || fail "the shim's lines"
off=$(head -1 "$OUT/sites" | cut -d' ' -f2)
LD_PRELOAD=$SHIM python3 tests/lib/umulti_shim.py arm "$OUT/no-such-file" "$off" ENOENT || fail "a missing file"
LD_PRELOAD=$SHIM python3 tests/lib/umulti_shim.py arm "$LIBC" "$off" ok || fail "a real site"
# armed early from MW_UMULTI_SITES: used when it names stapbpf's sites,
# else closed (another offset; a file that is not there, or garbled)
off2=$(sed -n 2p "$OUT/sites" | cut -d' ' -f2)
printf '%s %s\n' "$off" "$LIBC" >"$OUT/pre-same"
printf '%s %s\n' "$off2" "$LIBC" >"$OUT/pre-other"
printf '%s %s' "$off" "$LIBC" >"$OUT/pre-broken"
rm -f "$OUT/pre-fifo"; mkfifo "$OUT/pre-fifo"	# not waited on
for c in "same $off used" "other $off2 not used: site 0 ($LIBC:$off) is not in the file" \
	 "missing none not used: cannot open the sites: No such file or directory" \
	 "broken none not used: the sites end in a broken line" \
	 "fifo none not used: the sites are not a regular file"; do
	set -- $c
	name=$1 early=$2
	shift 2
	rm -f "$OUT/pre-$name.log"
	MW_UMULTI_SITES=$OUT/pre-$name MW_UMULTI_LOG=$OUT/pre-$name.log LD_PRELOAD=$SHIM \
		python3 tests/lib/umulti_shim.py prearm "$LIBC" "$off" "$early" || fail "early arming, $name"
	case $name in same) want="prearmed 1 sites: $*" ;; *) want="prearmed: $*" ;; esac
	[ "$(cat "$OUT/pre-$name.log")" = "$want" ] ||
		fail "early arming, $name: the shim said '$(cat "$OUT/pre-$name.log" 2>&1)', not '$want'"
	echo "ok: early arming, $name: $want"
done
printf '%s %s\n%s %s\n' "$off2" "$LIBC" "$off" "$LIBC" >"$OUT/pre-two"
rm -f "$OUT/pre-two.log"
MW_UMULTI_SITES=$OUT/pre-two MW_UMULTI_LOG=$OUT/pre-two.log LD_PRELOAD=$SHIM \
	python3 tests/lib/umulti_shim.py prearm2 "$LIBC" "$off" "$off2" || fail "early arming, another order"
[ "$(cat "$OUT/pre-two.log")" = "prearmed 2 sites: used" ] ||
	fail "early arming, another order: $(cat "$OUT/pre-two.log" 2>&1)"
none_unheld "after the shim's own test"
echo PASS
