#!/bin/sh
# The kernel runtime killed at any moment leaves no module loaded once
# the next run has swept.  SIGKILL to mallocwatch while it traces: its
# stapio gets SIGTERM (PR_SET_PDEATHSIG) and removes the module itself.
# SIGKILL to the stapio holding the module: mallocwatch says the tracer
# died and unloads the module (`staprun -d`).  SIGKILL to both: the
# module stays loaded, and the next run's sweep unloads it and says so.  Needs loadable
# modules and the kernel's build tree (make check-vm runs it in the
# guest; it skips on this host).
# needs: root glibc kernel serial
. tests/lib/lib.sh
need_root
need_libc
need_kernel_runtime
MWBIN=${MW_BIN:-$PWD/build/mallocwatch}
ours() { grep -o '^mallocwatch_k[0-9a-f]*_[0-9]*' /proc/modules; }
# wait_module ERRFILE: until one of our modules is loaded and held by
# stapio (staprun inserts it, then execs stapio: a staprun killed before
# that leaves its module to the next run's sweep, as case 3 does)
wait_module() {
	i=0
	until [ -n "$(ours)" ] && [ "$(cat "/proc/$(ours | sed 's/.*_//')/comm" 2>/dev/null)" = stapio ]; do
		i=$((i + 1))
		[ $i -lt 18000 ] || fail "no module loaded in 1800 s: $(cat "$1")"
		kill -0 $mwpid 2>/dev/null || fail "mallocwatch exited early: $(cat "$1")"
		sleep 0.1
	done
	sleep 1	# its signal handlers set
}
[ -z "$(ours)" ] || "$MWBIN" --cleanup >/dev/null 2>&1
[ -z "$(ours)" ] || fail "modules of ours loaded before the test: $(ours)"

# 1. mallocwatch killed: stapio unloads its module
"$MWBIN" -v --runtime=kernel -c sleep 8 >/dev/null 2>"$OUT/1.err" &
mwpid=$!
wait_module "$OUT/1.err"
kill -KILL $mwpid
wait $mwpid 2>/dev/null
i=0
while [ -n "$(ours)" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "module still loaded 30 s after mallocwatch was killed: $(ours)"
	sleep 0.1
done
echo "mallocwatch killed: its module went in $((i / 10)).$((i % 10)) s"

# 2. stapio killed: mallocwatch says the tracer died and unloads the
# module it could not
"$MWBIN" -v --runtime=kernel -c sleep 8 >/dev/null 2>"$OUT/2.err" &
mwpid=$!
wait_module "$OUT/2.err"
mod=$(ours)
kill -KILL "${mod##*_}"
wait $mwpid
st=$?
[ $st = 1 ] || fail "mallocwatch exited $st when its tracer was killed, not 1: $(cat "$OUT/2.err")"
grep -q '^mallocwatch: .*killed by signal 9' "$OUT/2.err" || fail "no word of the tracer's death: $(cat "$OUT/2.err")"
grep -q "^mallocwatch: removed the kernel module $mod the dead tracer left" "$OUT/2.err" ||
	fail "no word of $mod removed: $(cat "$OUT/2.err")"
[ -z "$(ours)" ] || fail "module left loaded: $(ours)"
echo "stapio killed: mallocwatch removed $mod"

# 3. both killed at once: the module stays until the next run sweeps it
"$MWBIN" -v --runtime=kernel -c sleep 8 >/dev/null 2>"$OUT/3.err" &
mwpid=$!
wait_module "$OUT/3.err"
mod=$(ours)
kill -KILL $mwpid "${mod##*_}"
wait $mwpid 2>/dev/null
sleep 1
[ "$(ours)" = "$mod" ] || fail "module $mod is not left loaded: '$(ours)' (a test that cannot fail)"
"$MWBIN" --runtime=kernel -c true >/dev/null 2>"$OUT/4.err" || fail "the next run exited $?: $(cat "$OUT/4.err")"
grep -q ' 1 kernel module, ' "$OUT/4.err" || fail "the next run did not say it removed $mod: $(cat "$OUT/4.err")"
! ours | grep -qx "$mod" || fail "module $mod left loaded after the sweep"
i=0	# the last run's own module: its stapio removes it in the background
while [ -n "$(ours)" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "the last run's module still loaded after 30 s: $(ours)"
	sleep 0.1
done
echo "mallocwatch and stapio killed: $mod left loaded, removed by the next run's sweep"
