#!/bin/sh
# Where the system libc has no probes, the whole tree of -c runs on the
# probe-enabled glibc (src/runtime/glibc_ns.h: a mount namespace of the program's
# own in which that glibc stands at the system's paths), execs included:
#
# 1. sh -c 'exec ./examples/arena-storm 7 10': the program the shell
#    execs is traced; its arenas, heaps and heap bytes equal its own
#    malloc_info() exactly (as t-e2e-arena-storm; main's sbrk aside, which
#    also counts the shell's before the exec).
# 2. under sh -c, forked children: one maps the probe-enabled libc (same
#    device and inode), and a forked arena-storm hits this run's
#    memory_arena_new uprobe exactly once per arena its malloc_info()
#    shows besides main (the script keeps only the target pid's events,
#    so the hits are counted in the kernel: uprobe_profile, bpf runtime);
#    the shell is the program itself (/proc/PID/exe, argv: no loader);
#    the environment the children see has no LD_* variable but ours;
#    meanwhile, outside, /lib/x86_64-linux-gnu/libc.so.6 is still the
#    system's file, and a process started there maps it.
# 3. --libc, and a glibc whose files others could change: the program is
#    started through the loader as before, with a note saying why.
# 4. a glibc whose loader reads the system's /etc/ld.so.cache (one built
#    for the system's paths, as make glibc-root's, which the trixie guest
#    traces with): the namespace is made all the same, no cache mounted.
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
SYS=/lib/x86_64-linux-gnu/libc.so.6
PE=$GLIBC_PREFIX/lib/libc.so.6
T=/sys/kernel/debug/tracing
command -v readelf >/dev/null || skip "no readelf (binutils)"
readelf -n "$SYS" | grep -q memory_arena_new &&
	skip "the system libc has probes: no namespace is made, nothing to test"
[ -r $T/uprobe_profile ] || skip "no $T/uprobe_profile to count hits in"
sys_id=$(stat -L -c '%d %i' "$SYS")
pe_id=$(stat -L -c '%d %i' "$PE")
[ "$sys_id" != "$pe_id" ] || exit 99

# 1. the exec'd program
d=$OUT/exec
mkdir -p "$d"
"$MW" -q --json "$d/report.json" -o "$d/summary.txt" -c sh -c 'exec ./examples/arena-storm 7 10' \
	>"$d/malloc_info.xml" 2>"$d/stderr" || { _rc=$?; cat "$d/stderr"; fail "mallocwatch exited $_rc"; }
canon_lines malloc_info_compare.py "$d/malloc_info.xml" "$d/report.json" "$d"
# the main arena's sbrk also counts the shell's, before the exec: the
# report does not yet tell one program of a pid from the next
grep -v '^main ' "$d/expected.txt" >"$d/expected.arenas"
grep -v '^main ' "$d/actual.txt" >"$d/actual.arenas"
expect_same "$d/expected.arenas" "$d/actual.arenas"
echo "ok: sh -c 'exec arena-storm': $(tr '\n' ' ' <"$d/actual.arenas")"

# 2. forked children.  The tree writes what it sees into $O, then waits
# for the test to look at the host from outside.
cat >"$OUT/tree.sh" <<'EOF'
O=$1 T=/sys/kernel/debug/tracing
readlink /proc/$$/exe >"$O/sh.exe"
tr '\0' '\n' </proc/$$/cmdline >"$O/sh.cmdline"
env | grep '^LD_' | sort >"$O/child.env"
cat /proc/self/maps >"$O/child.maps"
# this run's tracer: mallocwatch's (our parent's) stapbpf
for s in /proc/[0-9]*/status; do
	grep -q "^PPid:	$PPID\$" "$s" 2>/dev/null && grep -q '^Name:	stapbpf$' "$s" &&
		basename "$(dirname "$s")" >>"$O/tracer"
done
cat $T/uprobe_events >"$O/events"
cat $T/uprobe_profile >"$O/before"
./examples/arena-storm 7 10 >"$O/child.xml"
cat $T/uprobe_profile >"$O/after"
: >"$O/ready"
i=0
until [ -e "$O/go" ] || [ $i -ge 600 ]; do i=$((i + 1)); sleep 0.05; done
EOF
# memory_arena_new's file offsets in the probe-enabled libc, as uprobe_events gives them
python3 - "$PE" >"$OUT/offsets" <<'PY' || exit 99
import re, subprocess, sys
lib = sys.argv[1]
notes = subprocess.run(["readelf", "-nW", lib], capture_output=True, text=True).stdout
addrs = [int(a, 16) for a in
         re.findall(r"Name: memory_arena_new\s+Location: (0x[0-9a-f]+)", notes)]
loads = [l.split() for l in subprocess.run(["readelf", "-lW", lib], capture_output=True,
                                           text=True).stdout.splitlines()
         if l.split()[:1] == ["LOAD"]]
assert addrs, "no memory_arena_new in " + lib
for a in addrs:
    for _, off, va, _, fsz, *_ in loads:
        off, va, fsz = int(off, 16), int(va, 16), int(fsz, 16)
        if va <= a < va + fsz:
            print("0x%016x" % (a - va + off))
PY
# the hits are counted by the kernel, in uprobe_profile: stapbpf's own
# tracefs events (a uprobe_multi link has no such count)
export MALLOCWATCH_ATTACH=tracefs
env | grep '^LD_' | sort >"$OUT/ours.env"
# hits of another process on the same libc in the same moment would add
# to ours: a count above the expected one is tried again, twice at most
for try in 1 2 3; do
	d=$OUT/fork$try
	mkdir -p "$d"
	( i=0
	  until [ -e "$d/ready" ] || [ $i -ge 1200 ]; do i=$((i + 1)); sleep 0.05; done
	  stat -L -c '%d %i' "$SYS" >"$d/host.during"
	  cat /proc/self/maps >"$d/outside.maps"
	  : >"$d/go" ) &
	watcher=$!
	"$MW" -q --runtime=bpf --json "$d/report.json" -o "$d/summary.txt" \
		-c sh -c '. "$0"' "$OUT/tree.sh" "$d" 2>"$d/stderr" ||
		{ _rc=$?; cat "$d/stderr"; fail "mallocwatch exited $_rc"; }
	wait $watcher
	python3 - "$d" "$sys_id" "$pe_id" "$OUT/offsets" "$OUT/ours.env" <<'PY'
import os, re, sys
d, sys_id, pe_id, offs_file, ours_env = sys.argv[1:]
rd = lambda n: open(os.path.join(d, n)).read()
bad = []

def libc_id(maps):
    for l in maps.splitlines():
        f = l.split()
        if len(f) >= 6 and re.search(r"/libc\.so", f[5]):
            ma, mi = (int(x, 16) for x in f[3].split(":"))
            return "%d %s" % (os.makedev(ma, mi), f[4])
    return None

if libc_id(rd("child.maps")) != pe_id:
    bad.append("a forked child maps libc %s, not the probe-enabled one (%s)"
               % (libc_id(rd("child.maps")), pe_id))
if rd("host.during").strip() != sys_id:
    bad.append("outside, %s became %s during the run (was %s)"
               % ("/lib/x86_64-linux-gnu/libc.so.6", rd("host.during").strip(), sys_id))
if libc_id(rd("outside.maps")) != sys_id:
    bad.append("a process outside maps libc %s, not the system's %s"
               % (libc_id(rd("outside.maps")), sys_id))
if "ld-linux" in rd("sh.exe") or rd("sh.cmdline").split("\n")[:2] != ["sh", "-c"]:
    bad.append("the program is not exec'd as itself: exe %s, argv %r"
               % (rd("sh.exe").strip(), rd("sh.cmdline").split("\n")[:3]))
if rd("child.env") != open(ours_env).read():
    bad.append("LD_* in the tree: %r, ours: %r" % (rd("child.env"), open(ours_env).read()))
offs = set(open(offs_file).read().split())
tracer = set(rd("tracer").split())
events = {m.group(1) for m in re.finditer(r"^p:uprobes/(stapprobe_(\d+)_\d+) \S+:(0x[0-9a-f]+)$",
                                          rd("events"), re.M)
          if m.group(2) in tracer and m.group(3) in offs}

def hits(name):
    return sum(int(l.split()[-1]) for l in rd(name).splitlines()
               if len(l.split()) == 3 and l.split()[1] in events)

got = hits("after") - hits("before")
want = len(re.findall(r'<heap nr="\d+">', rd("child.xml"))) - 1
print("forked arena-storm: %d memory_arena_new hits on %d uprobe(s) of stapbpf %s, "
      "malloc_info says %d arenas besides main" % (got, len(events), " ".join(tracer), want))
if not events:
    bad.append("no memory_arena_new uprobe of this run's tracer in uprobe_events")
elif got != want:
    bad.append("hits %d != arenas %d" % (got, want))
for b in bad:
    print("FAIL:", b)
sys.exit(0 if not bad else 2 if got > want and len(bad) == 1 else 1)
PY
	rc=$?
	[ $rc = 0 ] && break
	[ $rc = 2 ] && [ $try -lt 3 ] && continue
	fail "forked children (try $try)"
done
echo "ok: forked children on the probe-enabled libc, the host's untouched"

# 3. not done for --libc, nor when the namespace cannot be made (here: a
# copy of the glibc whose libc.so.6 others could write): the loader, as
# before, and a note that says why
"$MW" -o /dev/null --libc "$PE" -c sh -c 'readlink /proc/$$/exe' >"$OUT/libc.out" 2>"$OUT/libc.err" ||
	{ _rc=$?; cat "$OUT/libc.err"; fail "--libc: mallocwatch exited $_rc"; }
[ "$(cat "$OUT/libc.out")" = "$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" ] ||
	fail "--libc: the program ran as '$(cat "$OUT/libc.out")', not through the loader"
P=$OUT/prefix
mkdir -p "$P/lib" "$P/etc"
cp "$GLIBC_PREFIX/lib/libc.so.6" "$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" "$GLIBC_PREFIX/lib/libm.so.6" \
	"$P/lib/" && cp "$GLIBC_PREFIX/etc/ld.so.cache" "$P/etc/" || exit 99
chmod 0775 "$P/lib/libc.so.6"
MW_GLIBC_PREFIX=$P "$MW" -o /dev/null -c sh -c 'readlink /proc/$$/exe' >"$OUT/fb.out" 2>"$OUT/fb.err" ||
	{ _rc=$?; cat "$OUT/fb.err"; fail "fallback: mallocwatch exited $_rc"; }
[ "$(cat "$OUT/fb.out")" = "$P/lib/ld-linux-x86-64.so.2" ] ||
	fail "fallback: the program ran as '$(cat "$OUT/fb.out")', not through the copy's loader"
grep -q "programs it starts run on the system libc, untraced: .*$P/lib" "$OUT/fb.err" ||
	{ cat "$OUT/fb.err"; fail "fallback: no note saying why"; }
echo "ok: --libc and a refused glibc run through the loader: $(grep untraced "$OUT/fb.err")"

# 4. the copy's loader made to read the system's /etc/ld.so.cache (its
# PREFIX/etc/ld.so.cache string cut to that): no loader start, no note,
# and what the shell runs maps the copy's libc at the system's path
S=$OUT/sysld
mkdir -p "$S/lib"
cp "$GLIBC_PREFIX/lib/libc.so.6" "$GLIBC_PREFIX/lib/libm.so.6" "$S/lib/" || exit 99
python3 - "$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" "$S/lib/ld-linux-x86-64.so.2" "$GLIBC_PREFIX" <<'PY' || exit 99
import os, sys
src, dst, prefix = sys.argv[1:4]
data = open(src, "rb").read()
old = (prefix + "/etc/ld.so.cache").encode() + b"\0"
new = b"/etc/ld.so.cache"
assert data.count(old) == 1, "no single %r" % old
open(dst, "wb").write(data.replace(old, new + b"\0" * (len(old) - len(new))))
os.chmod(dst, 0o755)
PY
MW_GLIBC_PREFIX=$S "$MW" -o /dev/null -c sh -c 'readlink /proc/$$/exe; stat -L -c %d:%i '"$SYS" \
	>"$OUT/sysld.out" 2>"$OUT/sysld.err" || { _rc=$?; cat "$OUT/sysld.err"; fail "system cache: mallocwatch exited $_rc"; }
grep -q "mounted over the system's in a mount namespace" "$OUT/sysld.err" ||
	{ cat "$OUT/sysld.err"; fail "system cache: no namespace"; }
[ "$(sed -n 2p "$OUT/sysld.out")" = "$(stat -L -c %d:%i "$S/lib/libc.so.6")" ] ||
	fail "system cache: the shell maps $(sed -n 2p "$OUT/sysld.out") at the system's path, not the copy's libc"
case $(sed -n 1p "$OUT/sysld.out") in *ld-linux*) fail "system cache: started through the loader" ;; esac
echo "ok: a loader that reads the system's ld.so.cache: the namespace, the copy's libc at the system's path"
