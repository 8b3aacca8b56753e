#!/bin/sh
# stapbpf makes its procfs FIFOs in /var/tmp/systemtap-USER/MODULE/ (a
# path it hard-codes) and reopens them by path, following links.  /var/tmp
# is every user's: nobody could make systemtap-root there first, and
# root's runs had either to use it (and write through nobody's links) or
# refuse (every run, until root removed it).  mallocwatch gives stapbpf a
# /var/tmp of its own instead: in stapbpf's mount namespace
# /run/mallocwatch/vartmp (root's, 0700) is mounted on /var/tmp.  Whatever
# another user puts at /var/tmp/systemtap-root, a root run works, and
# nothing of root's is written there.
#
# Each case runs in a private mount namespace with tmpfs on /var/tmp and
# /run/mallocwatch: the machine's are never touched.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
command -v unshare >/dev/null && command -v setpriv >/dev/null || skip "no unshare/setpriv"
[ -d /run/mallocwatch ] || mkdir -m 0700 -p /run/mallocwatch || exit 99

# in_ns SCRIPT: run sh -c SCRIPT in a private /var/tmp and /run/mallocwatch;
# $1 there is $OUT, $2 mallocwatch
in_ns() {
	unshare -m sh -c "mount --make-rprivate / && mount -t tmpfs -o mode=1777 tmpfs /var/tmp &&
		mount -t tmpfs -o mode=0700 tmpfs /run/mallocwatch && $1" sh "$OUT" "$MW"
}
export NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
chmod 755 "$OUT"

# 1. Nothing there yet: the run works; stapbpf's directory is made root's
# 0700 under /run/mallocwatch/vartmp, and nothing at all in /var/tmp.
in_ns '"$2" -q -o "$1/fresh.txt" -c /bin/true 2>"$1/fresh.err"; echo $? >"$1/fresh.rc"
	stat -c "%u %a" /run/mallocwatch/vartmp /run/mallocwatch/vartmp/systemtap-root >"$1/fresh.stat"
	ls -A /var/tmp >"$1/fresh.ls"' || fail "namespace"
[ "$(cat "$OUT/fresh.rc")" = 0 ] || fail "a run exited $(cat "$OUT/fresh.rc"): $(cat "$OUT/fresh.err")"
[ "$(cat "$OUT/fresh.stat")" = "0 700
0 700" ] || fail "stapbpf's directories made as $(cat "$OUT/fresh.stat"), not root's 0700"
[ -s "$OUT/fresh.ls" ] && fail "the run wrote in /var/tmp: $(cat "$OUT/fresh.ls")"
echo "ok: stapbpf's FIFOs under /run/mallocwatch/vartmp (root's 0700), /var/tmp untouched"

# 2. The attack: nobody makes /var/tmp/systemtap-root first and races to
# replace each module directory root makes there with one of links to a
# root-owned 0644 file.  The run works, root makes nothing in nobody's
# directory, and the file stays as it was.
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
[ "$(cat "$OUT/attack.rc")" = 0 ] || fail "nobody's /var/tmp/systemtap-root stopped the run (exit $(cat "$OUT/attack.rc"))"
grep -q '^Arenas: 3$' "$OUT/attack.txt" ||
	fail "the run under attack has no report: $(head -n 5 "$OUT/attack.txt")"
grep -q mallocwatch_ "$OUT/attack.ls" && fail "stapbpf made its directory in nobody's: $(cat "$OUT/attack.ls")"
echo "ok: nobody's /var/tmp/systemtap-root, raced: the run works, nothing written there"

# 3. A link where the directory would be, and a file: the run works, and
# the link's target is untouched.
mkdir -m 0755 "$OUT/linked"
in_ns '$NOBODY ln -s "$1/linked" /var/tmp/systemtap-root
	"$2" -q -o /dev/null -c /bin/true 2>"$1/link.err"; echo $? >"$1/link.rc"
	rm /var/tmp/systemtap-root; $NOBODY touch /var/tmp/systemtap-root
	"$2" -q -o /dev/null -c /bin/true 2>"$1/file.err"; echo $? >"$1/file.rc"' || fail "namespace"
[ "$(cat "$OUT/link.rc")" = 0 ] || fail "a link as /var/tmp/systemtap-root stopped the run: $(cat "$OUT/link.err")"
[ -z "$(ls -A "$OUT/linked")" ] || fail "the run wrote through nobody's link: $(ls -A "$OUT/linked")"
[ "$(cat "$OUT/file.rc")" = 0 ] || fail "a file as /var/tmp/systemtap-root stopped the run: $(cat "$OUT/file.err")"
echo "ok: a link or a file at /var/tmp/systemtap-root: the run works"

# 4. stapbpf's own directory is still checked: one others may write, or a
# link, is refused with one line, before stapbpf starts.
in_ns 'mkdir -p -m 0700 /run/mallocwatch/vartmp && mkdir -m 0777 /run/mallocwatch/vartmp/systemtap-root
	"$2" -q -c /bin/true 2>"$1/open.err"; echo $? >"$1/open.rc"
	rmdir /run/mallocwatch/vartmp/systemtap-root && ln -s /tmp /run/mallocwatch/vartmp/systemtap-root
	"$2" -q -c /bin/true 2>"$1/rlink.err"; echo $? >"$1/rlink.rc"' || fail "namespace"
[ "$(cat "$OUT/open.rc")" = 1 ] || fail "a 0777 systemtap-root was used: $(cat "$OUT/open.err")"
grep -q "^mallocwatch: '/run/mallocwatch/vartmp/systemtap-root' is writable by others" "$OUT/open.err" ||
	fail "0777: $(cat "$OUT/open.err")"
[ "$(wc -l <"$OUT/open.err")" = 1 ] || fail "more than one line for the refusal"
[ "$(cat "$OUT/rlink.rc")" = 1 ] || fail "a link as stapbpf's directory was followed: $(cat "$OUT/rlink.err")"
grep -q "^mallocwatch: cannot open '/run/mallocwatch/vartmp/systemtap-root'" "$OUT/rlink.err" ||
	fail "link: $(cat "$OUT/rlink.err")"
echo "ok: a 0777 directory or a link as stapbpf's own directory refused"

# 5. systemtap 5.1's stapbpf makes the module's own directory 0777
# (create_dir(): umask(0), then mkdir 0777; 4.8's by its umask, so umask 0
# makes 4.8's do the same).  In systemtap-root, root's 0700, no one else
# can enter it: the run's FIFOs answer, the exec drain's among them, and
# the report of a program that execs is of its last image, exact against
# its malloc_info().  In a systemtap-root others may enter (0755) such a
# directory is refused, with why.
FIX=build/tests/fixtures/exec-after; export FIX
[ -x $FIX ] || exit 99
in_ns 'umask 0
	"$2" --json "$1/u0.json" -o "$1/u0.txt" -c "$FIX" ./examples/sbrk-trim 8 >"$1/u0.xml" 2>"$1/u0.err"
	echo $? >"$1/u0.rc"
	"$2" -q -o /dev/null -c sh -c "for i in \$(seq 600); do
		for f in /run/mallocwatch/vartmp/systemtap-root/mallocwatch_*/flush; do :; done
		[ -p \"\$f\" ] && break; sleep 0.1; done; stat -c %a \"\${f%/flush}\"" >"$1/u0.mode" 2>/dev/null
	chmod 0755 /run/mallocwatch/vartmp/systemtap-root
	"$2" -o /dev/null -c /bin/true 2>"$1/u0open.err"; echo $? >"$1/u0open.rc"' || fail "namespace"
[ "$(cat "$OUT/u0.mode")" = 777 ] || exit 99	# the tracer's directory not as 5.1 makes it
grep -i 'warning\|not permitted' "$OUT/u0.err" && fail "umask 0: the run warned"
[ "$(cat "$OUT/u0.rc")" = 0 ] || fail "umask 0: exit $(cat "$OUT/u0.rc"): $(cat "$OUT/u0.err")"
expect_malloc_info "$OUT/u0.xml" "$OUT/u0.json" "$OUT/u0"
grep -q "replaced its image (exec) 1 time" "$OUT/u0.txt" || fail "umask 0: $(grep -i image "$OUT/u0.txt")"
grep -q "^mallocwatch: warning: cannot flush the tracer (.*Operation not permitted (writable by others, in a directory others can enter))" \
	"$OUT/u0open.err" || fail "0777 in a 0755 systemtap-root: $(cat "$OUT/u0open.err")"
echo "ok: a 0777 module directory (stap 5.1's) used in root's 0700 systemtap-root, refused in a 0755 one"
