#!/bin/sh
# The kernel runtime's changing set of processes: -f and --cgroup write
# each pid that joins into the module's procfs file (src/tracer/pidset.c,
# "PID\n"; the script's procfs("pids").write adds it to mw_pids).
#
# -f -c tests/fixtures/fork-arenas 4: 4 threads released at a barrier
# make 4 arenas; a fork()ed child starts with their copy, allocates and
# writes its malloc_info(), exits 7; a vfork()ed child execs /bin/true.
# Under this runtime the program runs through the probe-enabled glibc's
# loader and what it execs runs on the system libc, untraced (docs/tracing.md,
# "The kernel runtime"), so: parent and forked child exact against their
# own malloc_info(), the child's parent and exit status 7 reported, the
# exec'd true in the tree with its argv and exit status 0 and its figures
# from the tracer refused (it maps another libc than the one traced).
# (-p PID,PID and --cgroup with a joiner: t-attach-multi under
# MW_TEST_RUNTIME=kernel.)  Needs loadable modules and the kernel's build
# tree (make check-vm runs it in the guest; it skips on this host).
# needs: root glibc kernel
. tests/lib/lib.sh
need_root
need_libc
need_kernel_runtime
FA=build/tests/fixtures/fork-arenas
[ -x $FA ] || skip "no $FA (make check builds it)"
MWBIN=${MW_BIN:-$PWD/build/mallocwatch}

"$MWBIN" --runtime=kernel -f --json "$OUT/fa.json" -o "$OUT/fa.txt" -c $FA 4 "$OUT" 2>"$OUT/fa.err" ||
	fail "-f on fork-arenas exited $?: $(cat "$OUT/fa.err")"
cat "$OUT/fa.err"
python3 - "$OUT/fa.json" "$OUT" <<'PY' || fail "the tree's JSON"
import json, sys
r = json.load(open(sys.argv[1]))
ps = r["processes"]
assert len(ps) == 3, [p["target"] for p in ps]
root, child, vf = ps
pid = root["target"]["pid"]
assert root["ppid"] == 0 and child["ppid"] == pid and vf["ppid"] == pid, ps
assert root["target"]["exit_status"] == 0 and child["target"]["exit_status"] == 7, (root["target"], child["target"])
assert vf["target"]["argv"] == ["true"] and vf["target"]["exit_status"] == 0, vf["target"]
# the exec'd true maps the system libc, not the traced one: none of it was
# traced, so its figures from the tracer are refused, never shown as 0
u = vf["unknown"]
assert "another libc" in u["reason"] and "arenas" in u["figures"], u
assert vf["events"]["total"] is None and vf["arenas"] is None, vf["events"]
assert root["events"]["by_probe"]["memory_arena_new"] == 4, root["events"]["by_probe"]
for p in ps:
    assert p["events"]["complete"] and p["events"]["lost"] == 0, p["events"]
assert all(a["at_attach"] for a in child["arenas"]), child["arenas"]
json.dump(root, open(sys.argv[2] + "/fa-parent.json", "w"))
json.dump(child, open(sys.argv[2] + "/fa-child.json", "w"))
PY
for n in parent child; do
	expect_malloc_info "$OUT/$n.xml" "$OUT/fa-$n.json" "$OUT/$n" "$n"
done
grep -q "^mallocwatch: 3 processes in the tree (-f)" "$OUT/fa.txt" || fail "no tree in the summary"
echo "-f under the kernel runtime: parent and forked child exact, the exec'd true listed, its figures refused"
