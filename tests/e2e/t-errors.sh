#!/bin/sh
# Bad input and bad luck: each gives one 'mallocwatch: ...' line and the
# documented exit status (0 ok, 1 runtime error, 2 usage, the program's
# own status in -c mode, 128+N when signal N killed it).
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
# expect RC PATTERN CMD...: exit status RC and a stderr line matching PATTERN
expect() {
	want=$1 pat=$2
	shift 2
	"$@" >"$OUT/out" 2>"$OUT/err"
	rc=$?
	[ $rc = "$want" ] || { cat "$OUT/err"; fail "'$*' exited $rc, expected $want"; }
	grep -q -- "$pat" "$OUT/err" || { cat "$OUT/err"; fail "'$*': no '$pat' on stderr"; }
	echo "ok: exit $rc: $*"
}
expect 2 "^Try 'mallocwatch --help'" "$MW"
expect 2 "unknown runtime 'gpu'" "$MW" --runtime=gpu -c true
expect 2 "-c needs a command" "$MW" -c
expect 2 "cannot be used together" "$MW" -p 1 -c true
expect 2 "unknown command 'frobnicate'" "$MW" frobnicate
# an unknown option, or one missing its argument: one line of ours (and
# the hint), not getopt's own line before it
expect 2 "^mallocwatch: unknown option '--bogus'" "$MW" --bogus
[ "$(wc -l <"$OUT/err")" = 2 ] || fail "--bogus: $(cat "$OUT/err")"
expect 2 "^mallocwatch: unknown option '--bogus'" "$MW" snapshot --bogus
[ "$(wc -l <"$OUT/err")" = 2 ] || fail "snapshot --bogus: $(cat "$OUT/err")"
expect 2 "^mallocwatch: option '-p' needs an argument" "$MW" snapshot -p
expect 2 "^mallocwatch: unknown option '-Z'" "$MW" -Z -c true
expect 2 "^mallocwatch: this command does not take -f (--follow-forks)" "$MW" probes -f
expect 1 "^mallocwatch: cannot run 'no-such-program-here': command not found" \
	"$MW" -c no-such-program-here
# what execve would refuse: before anything is armed where it can be
# told (a directory, a "#!" interpreter not there), else once the exec
# failed (no "#!" and not ELF: ENOEXEC); never a report of exit 127
expect 1 "^mallocwatch: cannot run '$OUT': Is a directory" "$MW" -c "$OUT"
printf '#!/nonexistent/interp\necho hi\n' >"$OUT/badint.sh"
chmod +x "$OUT/badint.sh"
expect 1 "^mallocwatch: cannot run '$OUT/badint.sh': its interpreter '/nonexistent/interp' (its '#!' line): No such file or directory" \
	"$MW" -c "$OUT/badint.sh"
printf 'garbage\n' >"$OUT/noexec"
chmod +x "$OUT/noexec"
expect 1 "^mallocwatch: cannot run '$OUT/noexec': Exec format error" "$MW" -c "$OUT/noexec"
grep -q 'exit status 127' "$OUT/out" "$OUT/err" && fail "a failed exec was reported as exit status 127"
expect 1 "^mallocwatch: cannot open '/nonexistent/libc.so.6'" \
	"$MW" --libc /nonexistent/libc.so.6 -c true
# the program's own status, and its stdout left alone
expect 7 "exit status 7" "$MW" -c sh -c 'echo hello; exit 7'
[ "$(cat "$OUT/out")" = hello ] || fail "the program's stdout was changed: '$(cat "$OUT/out")'"
expect 139 "'sh' killed by signal 11 (Segmentation fault)" "$MW" -c sh -c 'kill -SEGV $$'
# a shell script through the probe-enabled glibc's loader (--libc) is refused, naming
# the shell; in its mount namespace (src/runtime/glibc_ns.h) it runs like any program
printf '#!/bin/sh\necho hi\n' >"$OUT/script.sh"
chmod +x "$OUT/script.sh"
expect 1 "is a script for the shell ./bin/sh.: under the probe-enabled glibc.s loader only the shell would be traced" "$MW" --libc "$GLIBC_PREFIX/lib/libc.so.6" -c "$OUT/script.sh"
expect 0 "exit status 0" "$MW" -c "$OUT/script.sh"
[ "$(cat "$OUT/out")" = hi ] || fail "the script's stdout: '$(cat "$OUT/out")'"
# no stap on PATH (nor stapbpf): a script compiled before is taken from
# the compile cache (MW_CACHE_DIR/modules) and only stapbpf is missing;
# else stap is: either is said in one line, exit 1
mkdir -p "$OUT/bin"
ln -sf /usr/bin/true "$OUT/bin/true"
expect 1 "stap could not compile the script: .*cannot run 'stap'\|stapbpf failed before tracing started: .*cannot run 'stapbpf'" \
	env PATH="$OUT/bin" "$MW" -c true
# the tracer dies while the program runs: the program finishes, the
# report says it is incomplete, exit 1
# (earlier runs' tracers may still be removing their uprobes: wait for them;
# the program starts only once it is traced: kill the tracer then)
UE=/sys/kernel/debug/tracing/uprobe_events
"$MW" --cleanup 2>/dev/null || fail "--cleanup exited $?"
rm -f "$OUT/started"
# (this run's stapbpf: the one working in its TMPDIR, not any other's)
mkdir -p "$OUT/tmp"
( until [ -e "$OUT/started" ]; do sleep 0.05; done
  for p in $(pgrep -x stapbpf); do
	case "$(readlink /proc/$p/cwd)" in "$OUT/tmp"/*) echo $p >"$OUT/killed"; kill -KILL $p ;; esac
  done ) &
expect 1 "the tracer ended early: stapbpf was killed by signal 9" \
	env TMPDIR="$OUT/tmp" "$MW" -c sh -c "touch '$OUT/started'; sleep 3"
wait
killed=$(cat "$OUT/killed" 2>/dev/null) || fail "no stapbpf of the run was killed"
grep -q "stapprobe_${killed}_" $UE && fail "the dead tracer's uprobes are still defined in $UE"
grep -q "MISSING" "$OUT/err" || fail "the summary does not say the totals are missing"
# under sudo the program runs as the invoking user
expect 0 "exit status 0" env SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$MW" -c id -u
[ "$(cat "$OUT/out")" = 65534 ] || fail "program ran as uid $(cat "$OUT/out"), not 65534"
# a partial or bad sudo environment is refused, never silently root
expect 1 "SUDO_UID='65534' and SUDO_GID='' do not name a user" \
	env -u SUDO_GID SUDO_UID=65534 "$MW" -c id -u
expect 1 "SUDO_UID='abc' and SUDO_GID='1' do not name a user" \
	env SUDO_UID=abc SUDO_GID=1 "$MW" -c id -u
[ -s "$OUT/out" ] && fail "the program ran under a bad sudo environment: $(cat "$OUT/out")"
# process ids are range-checked, for -p and for 'probes -p'
expect 2 "-p needs process ids separated by commas, not '4294967297'" "$MW" -p 4294967297
expect 2 "-p needs a process id, not 'abc'" "$MW" probes -p abc
expect 2 "-p needs process ids separated by commas, not '-5'" "$MW" -p -5
expect 1 "^mallocwatch: no process 4194304\$" "$MW" -p 4194304
# outputs are opened before anything runs: an unwritable path costs no run
rm -f "$OUT/ran"
expect 1 "^mallocwatch: cannot create '/nonexistent/dir/x': No such file or directory" \
	"$MW" -o /nonexistent/dir/x -c touch "$OUT/ran"
expect 1 "^mallocwatch: cannot create '/nonexistent/x.json'" \
	"$MW" --json /nonexistent/x.json -c touch "$OUT/ran"
expect 1 "^mallocwatch: cannot create '/nonexistent/x.mw'" \
	"$MW" --save-stream /nonexistent/x.mw -c touch "$OUT/ran"
[ -e "$OUT/ran" ] && fail "the program ran although an output could not be created"
# a full disk: the write error names the path
[ -w /dev/full ] && expect 1 "^mallocwatch: cannot write '/dev/full'" "$MW" -o /dev/full -c true
# --libc that is not a usable file
expect 1 "^mallocwatch: '/tmp' is not a regular file" "$MW" --libc /tmp -c true
expect 1 "^mallocwatch: '/tmp' is not a regular file" "$MW" probes --libc /tmp
head -c 200000 "$GLIBC_PREFIX/lib/libc.so.6" >"$OUT/truncated.so"
expect 1 "is corrupt or truncated: program header" "$MW" probes --libc "$OUT/truncated.so"
# a normal -c run's stderr: what a user needs, not how the tracer detaches
# (that is for -v)
expect 0 "exit status 0" "$MW" -c /bin/true
grep -q "goes on removing the uprobes" "$OUT/err" && fail "the detach detail without -v: $(cat "$OUT/err")"
# no probe saw main_arena's address (one probe hit), but the exit snapshot
# did: the trace tables name it, not "?"
grep -q "^  ?  *main " "$OUT/err" && fail "main_arena shown as '?': $(cat "$OUT/err")"
grep -q "^  0x[0-9a-f]*  *main  *- " "$OUT/err" || fail "no main_arena row: $(cat "$OUT/err")"
expect 0 "goes on removing the uprobes" "$MW" -v -c /bin/true
