#!/bin/sh
# A traced process that replaced its image (exec) is reported as its last
# image only when the tracer emptied the old image's totals at the exec
# (t-e2e-exec).  When it did not, or the program exec'd was not traced
# at all, its figures from the tracer would mix two programs (or be the
# old one's) and are refused: the text report says REFUSED with why, the
# JSON has "unknown": {"reason", "figures", "at_s"} and nulls, the HTML
# says it and draws no chart of them, every --check rule on them fails
# (exit 3, as for -p's refused attach snapshot), and the snapshot at exit
# (of the last program) is judged as ever.  Each path forced:
# 1. the tracer does not answer: stapbpf's open of the exec FIFO, the
#    first time a reader is there once the file $OUT/stall exists, waits
#    4 s and fails (an LD_PRELOADed shim given to stapbpf by a wrapper
#    first in PATH, as t-linger-fifos does): the run waits 3 s, then lets
#    the process go.  The saved stream replays to the same refusal.
# 2. the exec wait list (64, src/tracer/tracer.h MW_EXEC_WAIT_MAX) full:
#    under -f, 80 processes each exec a second program at once, the
#    first of those execs not answered (the stall made then): 64 wait,
#    and are refused when it is not answered; the others find the list
#    full (so may some of the 80 first execs, of sh, when the 80 are
#    started: under -f each is emptied too, and at load 20 80 sh in 0.3
#    s filled the list).
# 3. the program exec'd is static: nothing of it is traced.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
FIX=build/tests/fixtures/exec-after
[ -x $FIX ] || exit 99

# check NAME REASON: NAME's JSON refuses the traced figures with REASON
# (a grep pattern), keeps the exit snapshot's, and its rules failed
check() {
	python3 - "$OUT/$1.json" "$2" <<'PY' || fail "$1: JSON: $(head -c 2000 "$OUT/$1.json")"
import json, re, sys
r = json.load(open(sys.argv[1]))
u = r["unknown"]
assert re.search(sys.argv[2], u["reason"]), u
for m in ("arenas", "heaps", "threads", "sbrk_net", "reuse_waits", "mmap_threshold"):
    assert m in u["figures"], (m, u)
for k in ("arenas", "heaps", "sbrk", "thresholds", "threads"):
    assert r[k] is None, (k, r[k])
assert r["events"]["total"] is None and r["events"]["by_probe"] is None, r["events"]
print(sys.argv[1], "refused:", u["reason"], "at", u["at_s"], "s")
PY
}

if [ "${MW_TEST_RUNTIME:-}" != kernel ] && command -v cc >/dev/null &&
	STAPBPF=$(command -v stapbpf); then
	cat >"$OUT/slow.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
/* stapbpf's procfs thread opens a FIFO for writing once a reader is
 * there; the first time for the exec FIFO once STALL exists: wait 4 s
 * and say no reader */
int open(const char *path, int flags, ...)
{
	static int (*next)(const char *, int, ...);
	static int done;
	size_t n = strlen(path);
	mode_t mode = 0;
	int fd;

	if (flags & O_CREAT) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!next)
		next = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	fd = next(path, flags, mode);
	if (fd >= 0 && !done && (flags & O_ACCMODE) == O_WRONLY && n >= 5 &&
	    strcmp(path + n - 5, "/exec") == 0 && access(STALL, F_OK) == 0) {
		done = 1;
		close(fd);
		sleep(4);
		errno = ENXIO;
		return -1;
	}
	return fd;
}
C
	cc -shared -fPIC -DSTALL="\"$OUT/stall\"" -o "$OUT/slow.so" "$OUT/slow.c" -ldl || exit 99
	mkdir -p "$OUT/bin" || exit 99
	printf '#!/bin/sh\nLD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD }%s" exec %s "$@"\n' "$OUT/slow.so" \
		"$STAPBPF" >"$OUT/bin/stapbpf" && chmod +x "$OUT/bin/stapbpf" || exit 99

	# 1. -c: the tracer does not answer the exec
	: >"$OUT/stall" || exit 99
	PATH="$OUT/bin:$PATH" "$MW" --json "$OUT/late.json" -o "$OUT/late.txt" --html "$OUT/late.html" \
		--save-stream "$OUT/late.mw" --check 'arenas<=1' --check 'sbrk_net<=4M' \
		--check 'system_bytes>0' -c $FIX ./examples/sbrk-trim 8 >"$OUT/late.xml" 2>"$OUT/late.err"
	rc=$?
	[ $rc = 3 ] || fail "no answer: exit $rc, expected 3: $(cat "$OUT/late.err")"
	grep -q "^mallocwatch: warning: process [0-9]*: it replaced its image (exec) and the tracer's totals of the old one were not emptied for the new one (the tracer did not answer in 3000 ms)" \
		"$OUT/late.err" || fail "no answer: no warning: $(cat "$OUT/late.err")"
	for rule in 'arenas<=1' 'sbrk_net<=4M'; do
		grep -q "^FAIL ${rule%%[<>=!]*}: unknown: it replaced its image (exec) and the tracer's totals of the old one were not emptied for the new one (the tracer did not answer in 3000 ms) (rule '$rule')$" \
			"$OUT/late.err" || fail "no answer: '$rule': $(grep "FAIL\|PASS" "$OUT/late.err")"
	done
	grep -q "^PASS system_bytes" "$OUT/late.err" || fail "no answer: the exit snapshot: $(cat "$OUT/late.err")"
	grep -q "^  its figures from the tracer are REFUSED (found at [0-9.]* s): it replaced its image (exec) and the tracer's totals of the old one were not emptied for the new one (the tracer did not answer in 3000 ms); " \
		"$OUT/late.txt" || fail "no answer: the text report: $(head -12 "$OUT/late.txt")"
	grep -q '^  events: ? probe hits' "$OUT/late.txt" || fail "no answer: events: $(grep events: "$OUT/late.txt")"
	if grep -q '^Arenas: \|^Threads: \|^Heaps\|^Main arena sbrk\|^Nothing else' "$OUT/late.txt"; then
		fail "no answer: mixed figures printed: $(grep '^Arenas: \|^Threads: \|^Heaps\|^Main arena sbrk\|^Nothing else' "$OUT/late.txt")"
	fi
	grep -q '^Total: system ' "$OUT/late.txt" || fail "no answer: no exit snapshot in the text"
	grep -q 'Its figures from the tracer are REFUSED</strong>: it replaced its image' "$OUT/late.html" ||
		fail "no answer: the HTML does not say it"
	grep -q 'Arena lock waits per interval' "$OUT/late.html" && fail "no answer: the HTML charts mixed figures"
	check late 'the tracer did not answer in 3000 ms'
	# the exit snapshot is sbrk-trim's own: exact against its malloc_info
	python3 - "$OUT/late.xml" "$OUT/late.json" <<'PY' || fail "no answer: the exit snapshot"
import json, re, sys
xml = open(sys.argv[1]).read()
sysm = sum(int(x) for x in re.findall(r'<system type="current" size="(\d+)"/>', xml.split("</heap>")[-1]))
t = json.load(open(sys.argv[2]))["snapshots"]["exit"]["totals"]
print("exit snapshot:", t["system_bytes"], "malloc_info:", sysm)
assert t["system_bytes"] == sysm, (t, sysm)
PY
	# the saved stream replays to the same refusal
	grep -q '^# images_mixed [0-9]* it replaced its image' "$OUT/late.mw" ||
		fail "no answer: the saved stream does not say it"
	"$MW" replay --json "$OUT/replay.json" -o "$OUT/replay.txt" "$OUT/late.mw" 2>"$OUT/replay.err" ||
		fail "replay exited $?: $(cat "$OUT/replay.err")"
	check replay 'the tracer did not answer in 3000 ms'
	"$MW" check --check 'heaps==0' "$OUT/replay.json" >"$OUT/out" 2>&1
	[ $? = 3 ] || fail "check on the replay: $(cat "$OUT/out")"
	echo "ok: the tracer did not answer: refused, rules failed (exit 3), the exit snapshot exact"

	# 2. -f: 80 processes exec at once while the first waits: 64 wait,
	# the others find the list full (each waits at a gate, a FIFO whose
	# lines come once all are there, so that they exec within ms of each
	# other on any load; counted without a process a look; the stall
	# made just before, with no exec between: each one's first exec, of
	# sh, was emptied at once before; a look a second: each sleep is a
	# process of the tree, which must stay under 256 for any to drain)
	rm -f "$OUT/stall" || exit 99
	mkfifo "$OUT/gate" || exit 99
	: >"$OUT/ready"
	# shellcheck disable=SC2016
	PATH="$OUT/bin:$PATH" "$MW" -f --json "$OUT/full.json" -o "$OUT/full.txt" --check 'arenas<=1' \
		-c /bin/sh -c 'cd "$1" && exec 3<>gate && i=0 && while [ $i -lt 80 ]; do
			sh -c "echo >>ready; read x <gate; exec /bin/true" &
			i=$((i + 1))
		done
		cnt() { n=0; while read -r l; do n=$((n + 1)); done <ready; }
		until cnt; [ $n -ge 80 ]; do sleep 1; done
		: >stall
		i=0; while [ $i -lt 80 ]; do echo; i=$((i + 1)); done >&3
		wait' sh "$OUT" >/dev/null 2>"$OUT/full.err"
	rc=$?
	[ $rc = 3 ] || fail "full: exit $rc, expected 3: $(grep -v '^PASS' "$OUT/full.err")"
	python3 - "$OUT/full.json" <<'PY' || fail "full: $(grep -v '^PASS' "$OUT/full.err")"
import json, sys
r = json.load(open(sys.argv[1]))
why, n, others, owhy = {}, 0, 0, {}
for p in r["processes"]:
    u = p.get("unknown")
    if p["target"]["argv"] != ["/bin/true"]:	# the program, a sleep: refused or not
        others += bool(u)
        if u:
            owhy.setdefault(u["reason"].split("(")[-1], []).append(p["target"]["pid"])
    elif u:
        assert p["arenas"] is None and "arenas" in u["figures"], p
        why.setdefault(u["reason"].split("(")[-1], []).append(p["target"]["pid"])
    else:	# drained: its last image
        # sh's copy, sh, /bin/true: both execs emptied (2), or the first
        # refused (the list full at spawn) and this one emptied, known
        # again from it (1)
        assert p["events"]["execs"]["images_replaced"] in (1, 2), p["events"]
        n += 1
print({k: len(v) for k, v in why.items()}, "drained:", n, "others refused:", others, owhy)
assert n + sum(map(len, why.values())) == 80, (n, why)
# the exec the stall caught ("did not answer in 3000 ms") and those
# behind it ("... the exec it waited behind ..."): which process gets
# which is the load's to say (a stress round once had the program's last
# sleep, its exec's answer still due, among the refused, and no
# /bin/true with the first reason), so the two are counted together,
# over every process
stalled = [p for w in (why, owhy) for k, v in w.items()
           if k in ("the tracer did not answer in 3000 ms)",
                    "the tracer did not answer the exec it waited behind in 3000 ms)") for p in v]
assert len(stalled) >= 1, (why, owhy)
assert len(why.get("64 other processes that exec'd waited for the tracer, as many as can)", [])) >= 1, why
t = r["totals"]
assert t["arenas"] is None and t["events"] is None and t["refused_processes"] == sum(map(len, why.values())) + others, t
PY
	grep -q "^FAIL process [0-9]* (/bin/true): arenas: unknown: it replaced its image (exec) and the tracer's totals of the old one were not emptied for the new one (64 other processes that exec'd waited for the tracer, as many as can) (rule 'arenas<=1')" \
		"$OUT/full.err" || fail "full: $(grep FAIL "$OUT/full.err")"
	grep -q "processes in all: ? arenas, ? heaps, ? threads, sbrk net ?, ? retries; ? events ([0-9]* processes' figures from the tracer REFUSED)" \
		"$OUT/full.txt" || fail "full: the totals: $(grep 'in all' "$OUT/full.txt")"
	grep -q '^ *[0-9]* *[0-9]* *0 *? .*/bin/true$' "$OUT/full.txt" || fail "full: the tree's table: $(head -25 "$OUT/full.txt")"
	echo "ok: the exec wait list full: those refused, the others drained"
else
	echo "no stapbpf shim (kernel runtime, or no cc or stapbpf): parts 1 and 2 left out"
fi

# 3. a static program exec'd: nothing of it traced, the wrapper's
# figures are not its own
command -v cc >/dev/null || skip "no cc for a static program"
printf '#include <stdlib.h>\nint main(void) { return malloc(100) == NULL; }\n' >"$OUT/static.c"
cc -static -o "$OUT/static" "$OUT/static.c" 2>"$OUT/cc.err" || skip "no static libc: $(cat "$OUT/cc.err")"
"$MW" --json "$OUT/static.json" -o "$OUT/static.txt" --check 'arenas<=1' \
	-c $FIX "$OUT/static" >/dev/null 2>"$OUT/static.err"
rc=$?
[ $rc = 3 ] || fail "static: exit $rc, expected 3: $(cat "$OUT/static.err")"
grep -q "^FAIL arenas: unknown: it replaced its image (exec) with a program that maps no libc (a static program): none of that program was traced (rule 'arenas<=1')" \
	"$OUT/static.err" || fail "static: $(cat "$OUT/static.err")"
check static 'maps no libc'
echo "ok: a static program exec'd: refused"
