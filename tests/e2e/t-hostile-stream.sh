#!/bin/sh
# A saved stream is data, whoever wrote it: its L records (the module
# maps of --stacks) name files a replay opens to symbolize the stacks.
# Named by a stream of nobody's, a FIFO must not hang root's replay, and
# a device, a file only root may read (/etc/shadow), a file that is no ELF
# file must not be opened for reading at all: only a regular file every
# user may read, looked up without opening (O_PATH), is; and libdwfl
# reads it only after it was checked (mapped.h's mw_elf_vet): an ELF
# file, its compressed sections bounded.
# needs: root
. tests/lib/lib.sh
need_root
command -v setpriv >/dev/null || skip "no setpriv"
command -v strace >/dev/null || skip "no strace"
chmod 755 "$OUT"
D=$OUT/nobody
mkdir -m 0755 "$D" && chown 65534:65534 "$D" || exit 99

$NOBODY mkfifo "$D/lib.so" || exit 99
$NOBODY ln -s /etc/shadow "$D/shadow-link" || exit 99
$NOBODY sh -c 'echo "not an ELF file" >"$1/text.so"; chmod 644 "$1/text.so"' sh "$D" || exit 99
# one map per file, one stack through each; no build-ids recorded ("-"),
# so no check of the build-id keeps a file out
$NOBODY sh -c 'exec >"$1/evil.mw"
	printf "# mallocwatch-stream 1\n# libc /lib/x86_64-linux-gnu/libc.so.6\n# runtime bpf\n"
	printf "# main_arena 0\nP 1 memory_sbrk_more 2\nMW 1 ready\nE 1 100 100 4096\nMW 1 end\n"
	i=0
	for f in "$1/lib.so" /etc/shadow "$1/shadow-link" /dev/zero /dev/tty "$1/text.so"; do
		printf "L 100 $i 4096 8192 0 - %s\n" "$f"
		printf "X memory_sbrk_more 100 100 $i 1000 3 5242880 4096 0 5000 6000\n"
		i=$((i + 1))
	done
	printf "Z 1 1 6 6 0 0 0 1000 0\n"' sh "$D" || exit 99

start=$(date +%s)
timeout 20 strace -f -qq -y -o "$OUT/strace" -e trace=open,openat,openat2 \
	"$MW" replay -o "$OUT/text" --folded "$OUT/folded" "$D/evil.mw" </dev/null 2>"$OUT/err"
rc=$?
secs=$(( $(date +%s) - start ))
[ $rc = 124 ] && fail "replay hung on the stream's FIFO (killed after 20 s)"
[ $rc = 0 ] || fail "replay exited $rc: $(cat "$OUT/err")"
[ $secs -le 10 ] || fail "replay took $secs s"
grep -q '^Stacks (--stacks): 6 probe hits' "$OUT/text" || fail "no stacks section: $(cat "$OUT/text")"
# opened for reading (not O_PATH; strace -y names the file a descriptor
# is of): none of them but text.so, which is read and refused (no ELF)
for f in "$D/lib.so" /etc/shadow /dev/zero /dev/tty; do
	grep -F -e "\"$f\"" -e "<$f>" "$OUT/strace" | grep -v O_PATH >"$OUT/opened"
	[ -s "$OUT/opened" ] && fail "'$f', named by the stream, was opened: $(cat "$OUT/opened")"
done
grep -q "^mallocwatch: warning: '$D/text.so' is not an ELF file: not read$" "$OUT/err" ||
	fail "text.so: no one-line refusal: $(cat "$OUT/err")"
echo "ok: replay of nobody's stream in ${secs}s; no FIFO, device or root-only file opened, a non-ELF one refused"

# a regular ELF file every user may read is still used: the stacks are
# symbolized from it (here: /bin/true's own first mapping)
id=$(readelf -n /bin/true | sed -n 's/.*Build ID: //p')
{
	printf '# mallocwatch-stream 1\n# libc /lib/x86_64-linux-gnu/libc.so.6\n# runtime bpf\n'
	printf '# main_arena 0\nP 1 memory_sbrk_more 2\nMW 1 ready\nE 1 100 100 4096\nMW 1 end\n'
	printf 'L 100 0 4096 1052672 0 %s %s\n' "$id" "$(readlink -f /bin/true)"
	printf 'X memory_sbrk_more 100 100 0 1000 3 5242880 4096 0 5000 6000\n'
	printf 'Z 1 1 1 1 0 0 0 1000 0\n'
} >"$OUT/good.mw"
"$MW" replay -o "$OUT/good.txt" --json "$OUT/good.json" "$OUT/good.mw" 2>"$OUT/good.err" ||
	fail "replay of good.mw exited $?: $(cat "$OUT/good.err")"
python3 - "$OUT/good.json" "$id" <<'PY' || fail "the file a stream names was not used"
import json, sys
r = json.load(open(sys.argv[1]))
f = r["stacks"]["events"][0]["frames"]
assert f[0]["build_id"] == sys.argv[2] and f[0]["module"] == "true", f
PY
echo "ok: a readable ELF file named by a stream is still read"

# The input itself, named on the command line, is a file like those a
# stream names: a FIFO another user planted is refused at once, never
# waited on (replay, flame, diff and check each hung on it before).
FD=$(mktemp -d /tmp/mw-hostile-in.XXXXXX)
chmod 1777 "$FD"
$NOBODY mkfifo "$FD/in.fifo" || fail "nobody cannot make a FIFO"
for c in "replay $FD/in.fifo" "flame $FD/in.fifo" "diff $FD/in.fifo $FD/in.fifo" \
	"check --check arenas<=1 $FD/in.fifo"; do
	timeout 10 "$MW" $c >/dev/null 2>"$OUT/in.err"
	rc=$?
	[ $rc = 124 ] && { rm -rf "$FD"; fail "'mallocwatch $c' waited on a FIFO"; }
	[ $rc = 1 ] && grep -q "'$FD/in.fifo': not a regular file" "$OUT/in.err" ||
		{ rm -rf "$FD"; fail "'mallocwatch $c': exit $rc: $(cat "$OUT/in.err")"; }
done
rm -rf "$FD"
echo "ok: a FIFO given as replay's, flame's, diff's or check's input is refused at once"

# Its counts too: nobody's images of 2^62 streamed hits each, none
# received, summed past INT64_MAX (three) or past UINT64_MAX (five, which
# wrapped to 2^62, a figure that looked right): root's replay says lost
# "more than can be counted", the JSON null, and a rule on it fails (it
# was -4611686018427387904 in the JSON and 'events_lost<=0' passed).
for n in 3 5; do
	$NOBODY sh -c 'exec >"$1/lost$2.mw"
		printf "# mallocwatch-stream 1\n# libc /lib/libc.so.6\n# runtime bpf\n# arg ./prog\n"
		printf "P 0 memory_arena_new 2\nMW 1 ready\n"
		i=0
		while [ $i -lt $2 ]; do
			printf "N 0 7 4611686018427387904\nMW 1 end\nMW 1 exec\n"
			i=$((i + 1))
		done
		printf "MW 1 end\n# pid 7\n# wait_status 0\n# tracer_died 0\n# tracer_lost 0\n"' \
		sh "$D" "$n" || exit 99
	"$MW" replay -q -o "$OUT/lost$n.txt" --json "$OUT/lost$n.json" "$D/lost$n.mw" ||
		fail "replay of lost$n.mw exited $?"
	grep -q '^  events: 0 probe hits, more than can be counted lost$' "$OUT/lost$n.txt" ||
		fail "$n images: $(grep events: "$OUT/lost$n.txt")"
	python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["events"]
assert e["lost"] is None, e["lost"]' "$OUT/lost$n.json" || fail "$n images: lost not null"
	"$MW" check --check 'events_lost<=0' "$OUT/lost$n.json" >"$OUT/lost$n.check"
	rc=$?
	[ $rc = 3 ] && grep -q '^FAIL events_lost: unknown: more than can be counted' "$OUT/lost$n.check" ||
		fail "$n images: check exited $rc: $(cat "$OUT/lost$n.check")"
done
echo "ok: lost past 2^63 - 1 in nobody's stream: more than can be counted, null, a rule fails"

# Its lock waits too: an old stream's W records claim waits, whose hits
# came in N records before them (a wait is a memory_arena_reuse_wait
# hit).  A W past its thread's hits, a W of a thread with none, a second
# W past 2^62 hits, an A record of another probe (memory_arena_new): each
# refused, counted garbled, its waits not shown (thread 202 showed 9
# waits for 2 hits, 203 showed 4 for none, 204 five waits counted as
# arena creations, 205 2^63 waits for 2^62 hits).
$NOBODY sh -c 'exec >"$1/waits.mw"
	printf "# mallocwatch-stream 1\n# libc /lib/libc.so.6\n# runtime bpf\n# arg ./prog\n"
	printf "P 0 memory_arena_new 2\nP 3 memory_arena_reuse_wait 3\nMW 1 ready\n"
	printf "N 3 202 2\nN 3 205 4611686018427387904\n"
	printf "W 202 140000000000048 2\nW 202 140000000000048 7\nW 203 140000000000048 4\n"
	printf "A 0 204 140000000000048 5\n"
	printf "W 205 140000000100048 4611686018427387904\nW 205 140000000200048 4611686018427387904\n"
	printf "MW 1 end\n# pid 7\n# wait_status 0\n# tracer_died 0\n# tracer_lost 0\n"' \
	sh "$D" || exit 99
"$MW" replay -o "$OUT/waits.txt" --json "$OUT/waits.json" "$D/waits.mw" 2>"$OUT/waits.err" ||
	fail "replay of waits.mw exited $?: $(cat "$OUT/waits.err")"
grep -qx "mallocwatch: warning: garbled tracer line ignored and counted: 'W 202 140000000000048 7':.*hits" \
	"$OUT/waits.err" || fail "no one-line reason for the W past its hits: $(cat "$OUT/waits.err")"
python3 - "$OUT/waits.json" <<'PY' || fail "waits.mw: $(grep -A7 '^Threads' "$OUT/waits.txt")"
import json, sys
r = json.load(open(sys.argv[1]))
w = {t["tid"]: t["waits"] for t in r["threads"]}
assert w == {202: 2, 203: 0, 204: 0, 205: 2**62} or w == {202: 2, 205: 2**62}, w
e = r["events"]
assert e["garbled"] == 4, e
assert e["by_probe"].get("memory_arena_new", 0) == 0, e["by_probe"]
assert sorted(a["waits"] for a in r["arenas"] if a["waits"]) == [2, 2**62], r["arenas"]
PY
echo "ok: W and A records claiming waits their hits do not cover: refused, counted garbled"
exit 0
