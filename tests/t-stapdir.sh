#!/bin/sh
# stapbpf makes its procfs FIFOs in /var/tmp/systemtap-USER/MODULE/ and
# reopens them by path, following links.  A directory another user made
# there first would let that user replace root's FIFOs with links to any
# file, which root's stapbpf then writes into.  mallocwatch must check
# the chain before stapbpf starts: create it 0700 when missing, refuse
# (one line, no tracer started) when it is not root's own.
#
# Each case runs in a private mount namespace with a tmpfs on /var/tmp:
# the machine's /var/tmp is never touched.
. tests/lib.sh
need_root
need_libc
command -v unshare >/dev/null && command -v setpriv >/dev/null || skip "no unshare/setpriv"

# in_ns SCRIPT: run sh -c SCRIPT in a private /var/tmp; $1 there is $OUT
in_ns() {
	unshare -m sh -c "mount --make-rprivate / && mount -t tmpfs -o mode=1777 tmpfs /var/tmp && $1" \
		sh "$OUT" "$MW"
}
export NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"

# 1. No directory yet: it is made root's 0700 and the run works.
in_ns '"$2" -q -o "$1/fresh.txt" -c /bin/true 2>"$1/fresh.err"; echo $? >"$1/fresh.rc"
	stat -c "%u %a" /var/tmp/systemtap-root >"$1/fresh.stat"' || fail "namespace"
[ "$(cat "$OUT/fresh.rc")" = 0 ] || fail "a run with no systemtap-root exited $(cat "$OUT/fresh.rc"): $(cat "$OUT/fresh.err")"
[ "$(cat "$OUT/fresh.stat")" = "0 700" ] || fail "systemtap-root made as $(cat "$OUT/fresh.stat"), not root's 0700"
echo "ok: made root's 0700"

# 2. The attack: nobody makes the directory first and races to replace
# each FIFO stapbpf makes there with a link to a root-owned 0644 file.
# The run must be refused before stapbpf starts; nothing of root's may
# appear in nobody's directory; the file must stay as it was.
printf 'precious\n' >"$OUT/victim"
chmod 0644 "$OUT/victim"
cat >"$OUT/racer.sh" <<'RACER'
#!/bin/sh
# replace every module directory root makes with one of links
while :; do
	for d in /var/tmp/systemtap-root/mallocwatch_*; do
		case $d in *.x*) continue ;; esac
		[ -d "$d" ] && [ "$(stat -c %u "$d")" = 0 ] || continue
		mv "$d" "$d.x$$" 2>/dev/null || continue
		mkdir "$d" && for f in flush sample; do ln -s "$1" "$d/$f"; done
		: >"/var/tmp/systemtap-root/seen"
	done
done
RACER
chmod 755 "$OUT/racer.sh"
in_ns '$NOBODY mkdir -m 0755 /var/tmp/systemtap-root || exit 99
	$NOBODY "$1/racer.sh" "$1/victim" & racer=$!
	"$2" -q -o "$1/attack.txt" -c ./examples/arena-storm 2 2 >/dev/null 2>"$1/attack.err"
	echo $? >"$1/attack.rc"
	kill $racer
	ls -la /var/tmp/systemtap-root >"$1/attack.ls"' || fail "namespace"
cat "$OUT/attack.err"
[ "$(cat "$OUT/victim")" = precious ] || fail "root's file was written through a planted link: $(od -c "$OUT/victim" | head -2)"
[ "$(cat "$OUT/attack.rc")" = 1 ] || fail "a systemtap-root of uid 65534 was used (exit $(cat "$OUT/attack.rc"))"
grep -q "^mallocwatch: '/var/tmp/systemtap-root' belongs to uid 65534" "$OUT/attack.err" ||
	fail "no one-line reason: $(cat "$OUT/attack.err")"
[ "$(wc -l <"$OUT/attack.err")" = 1 ] || fail "more than one line for the refusal"
grep -q mallocwatch_ "$OUT/attack.ls" && fail "stapbpf made its directory in nobody's: $(cat "$OUT/attack.ls")"
echo "ok: nobody's systemtap-root refused, nothing written"

# 3. A link where the directory should be, and a root directory others
# can write: refused too.
in_ns '$NOBODY ln -s /tmp /var/tmp/systemtap-root
	"$2" -q -c /bin/true 2>"$1/link.err"; echo $? >"$1/link.rc"
	rm /var/tmp/systemtap-root; mkdir -m 0777 /var/tmp/systemtap-root
	"$2" -q -c /bin/true 2>"$1/open.err"; echo $? >"$1/open.rc"' || fail "namespace"
[ "$(cat "$OUT/link.rc")" = 1 ] || fail "a link as systemtap-root was followed: $(cat "$OUT/link.err")"
grep -q "^mallocwatch: cannot open '/var/tmp/systemtap-root'" "$OUT/link.err" || fail "link: $(cat "$OUT/link.err")"
[ "$(cat "$OUT/open.rc")" = 1 ] || fail "a 0777 systemtap-root was used: $(cat "$OUT/open.err")"
grep -q "writable by others" "$OUT/open.err" || fail "0777: $(cat "$OUT/open.err")"
echo "ok: link and 0777 directory refused"
