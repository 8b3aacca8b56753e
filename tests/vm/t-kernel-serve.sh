#!/bin/sh
# mallocwatch serve --probes under the kernel runtime (serve picks it with
# --runtime=auto where modules load): its session gets no -x (gen.h,
# mw_gen_untargeted; with -x mallocwatch's own pid, stap's task finder
# placed no uprobe in any served process) and each process joins through
# the module's pids file.
#
# tests/fixtures/serve-counts storm 6 under the probe-enabled glibc (6
# threads released together, none leaves before all attached: exactly 6
# arenas and 6 heaps created), released only once serve says it is
# traced: its counters must say 6 and 6 (the live reading, every second).
# Then SIGTERM: serve exits 0 and no mallocwatch module stays loaded.
# The metrics are read with python3 (the guest has no curl).  Needs
# loadable modules and the kernel's build tree (make check-vm runs it in
# the guest; it skips on this host; MW_SERVE_ANY_RUNTIME=1 runs it under
# whatever serve picks, to check the test itself).
# needs: root glibc kernel
. tests/lib/lib.sh
need_root
need_libc
[ "${MW_SERVE_ANY_RUNTIME:-0}" = 1 ] || need_kernel_runtime
FIX=build/tests/fixtures/serve-counts
[ -x $FIX ] || skip "no $FIX (make check builds it)"
MWBIN=${MW_BIN:-$PWD/build/mallocwatch}
A= S=
kill_at_exit S A

rm -f "$OUT/storm.in"; mkfifo "$OUT/storm.in"
(exec "$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$GLIBC_PREFIX/lib:/lib/x86_64-linux-gnu" \
	$FIX storm 6) <"$OUT/storm.in" >"$OUT/storm.out" 2>/dev/null &
A=$!
exec 3>"$OUT/storm.in"
i=0
until grep -q "$GLIBC_PREFIX/lib/libc.so.6" /proc/$A/maps 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "serve-counts did not map the probe-enabled libc"
	sleep 0.05
done
serve_start "$MWBIN" "$OUT/serve.err" --probes -v -p "$A"
# value NAME: the sample of process A's series NAME{pid="A",...} (all
# of its labels but pid taken as they come), "" when none
value() {
	python3 - "$port" "$1" "$A" <<'PY'
import sys, urllib.request
port, name, pid = sys.argv[1:]
text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=10).read().decode()
for line in text.splitlines():
    if line.startswith('%s{pid="%s",' % (name, pid)) or line.startswith('%s{pid="%s"}' % (name, pid)):
        print(line.split()[-1])
        break
PY
}
# the module compiles (up to 20 minutes in the emulated guest while the
# host is busy) and A joins; deadlines in seconds (each look starts a
# python3, seconds under emulation)
now() { date +%s; }
until=$(( $(now) + 1800 ))
until [ "$(value mallocwatch_process_probes_traced 2>/dev/null)" = 1 ]; do
	[ "$(now)" -lt $until ] || fail "A never traced: $(cat "$OUT/serve.err")"
	kill -0 $S 2>/dev/null || fail "serve --probes exited: $(cat "$OUT/serve.err")"
	sleep 1
done
echo "A traced after $(( $(now) - until + 1800 )) s"
echo go >&3
i=0
until grep -q done "$OUT/storm.out"; do
	i=$((i + 1)); [ $i -lt 1200 ] || fail "the storm never finished"; sleep 0.05
done
until=$(( $(now) + 120 ))
until [ "$(value mallocwatch_process_arenas_created_total)" = 6 ] &&
	[ "$(value mallocwatch_process_heaps_created_total)" = 6 ]; do
	[ "$(now)" -lt $until ] || fail "A's counters: arenas $(value mallocwatch_process_arenas_created_total), heaps $(value mallocwatch_process_heaps_created_total), not 6 and 6: $(cat "$OUT/serve.err")"
	sleep 1
done
kill -TERM $S
wait $S
rc=$? S=
[ $rc = 0 ] || fail "serve exited $rc on SIGTERM: $(cat "$OUT/serve.err")"
i=0
while grep -q '^mallocwatch_k' /proc/modules 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "a mallocwatch module is still loaded 30 s after serve's exit: $(grep '^mallocwatch_k' /proc/modules)"
	sleep 0.1
done
echo "ok: serve --probes traced A: 6 arenas and 6 heaps created, counted; no module left"
