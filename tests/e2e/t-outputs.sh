#!/bin/sh
# Output files (-o, --json, --html, --save-stream, --save-script,
# --folded) are
# opened by root, often in a directory another user can write:
#  1. a symbolic link planted by nobody in a sticky directory, pointing
#     at root's 0600 file, is refused for each of them ("cannot write
#     'PATH': it is a symbolic link", exit 1), the file unchanged, and
#     before anything ran (the program's marker is not made);
#  2. a FIFO planted there is refused at once, not waited on; a file with
#     a second hard link is refused; /dev/null is written;
#  3. under sudo (SUDO_UID=SUDO_GID=65534) the files are opened as that
#     user: a root-only 0700 directory, and a root-group 0770 one (root's
#     groups are not kept), are refused naming the uid; in a directory
#     nobody can write, each file is made and owned by 65534:65534.
# Replay covers -o, --json and --html without tracing; --save-stream and
# --save-script need a traced run of /bin/true (root, probe-enabled glibc).
# needs: root glibc
. tests/lib/lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (the outputs are root's)"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
S=tests/streams/trim.mw
chmod 755 "$OUT"
mkdir -m 700 "$OUT/root" && echo secret >"$OUT/root/victim" && chmod 600 "$OUT/root/victim" ||
	exit 99
T=$OUT/sticky
mkdir -m 1777 "$T" || exit 99
$NOBODY ln -s "$OUT/root/victim" "$T/link" || exit 99

# refused WHY CMD...: CMD exits 1 with "cannot write 'T/link': WHY" and
# root's file is as it was
refused() {
	_why=$1; shift
	"$@" >"$OUT/cmd.out" 2>"$OUT/cmd.err"
	_rc=$?
	[ "$(cat "$OUT/root/victim")" = secret ] ||
		fail "'$*' wrote through the link: $(head -c 60 "$OUT/root/victim")"
	[ $_rc = 1 ] || fail "'$*' exited $_rc: $(cat "$OUT/cmd.err")"
	grep -qx "mallocwatch: cannot write '$T/link': $_why" "$OUT/cmd.err" ||
		fail "'$*': no refusal naming the path: $(cat "$OUT/cmd.err")"
}

# 1. the link, for each output replay writes
for opt in -o --json --html; do
	refused "it is a symbolic link" "$MW" replay -q $opt "$T/link" $S
done
echo "ok: replay -o, --json, --html refuse a planted link"

# 2. a FIFO nobody planted: no reader, so open() would wait for one
$NOBODY mkfifo "$T/fifo" || exit 99
timeout 10 "$MW" replay -q --json "$T/fifo" $S 2>"$OUT/fifo.err"
rc=$?
[ $rc = 1 ] || fail "a FIFO output: exit $rc (124: it waited): $(cat "$OUT/fifo.err")"
grep -qx "mallocwatch: cannot write '$T/fifo': it is a FIFO" "$OUT/fifo.err" ||
	fail "FIFO: $(cat "$OUT/fifo.err")"
echo ok >"$OUT/root/linked" && ln "$OUT/root/linked" "$OUT/root/second" || exit 99
"$MW" replay -q --json "$OUT/root/linked" $S 2>"$OUT/hard.err" && fail "a hard-linked file was written"
grep -qx "mallocwatch: cannot write '$OUT/root/linked': it has other hard links" "$OUT/hard.err" ||
	fail "hard link: $(cat "$OUT/hard.err")"
[ "$(cat "$OUT/root/second")" = ok ] || fail "a hard-linked file was truncated"
"$MW" replay -q -o /dev/null --json /dev/null $S || fail "writing /dev/null exited $?"
echo "ok: a FIFO and a hard-linked file are refused, /dev/null is written"

# 3. under sudo: as the invoking user
SUDO="env SUDO_UID=65534 SUDO_GID=65534"
mkdir -m 770 "$OUT/rootgroup" && mkdir -m 755 "$OUT/mine" && chown 65534:65534 "$OUT/mine" ||
	exit 99
for d in root rootgroup; do
	$SUDO "$MW" replay -q -o /dev/null --json "$OUT/$d/r.json" $S 2>"$OUT/sudo.err" &&
		fail "under sudo, a file in $d's directory was written"
	grep -qx "mallocwatch: cannot create '$OUT/$d/r.json': Permission denied (as the sudo user, uid 65534)" \
		"$OUT/sudo.err" || fail "under sudo, $d: $(cat "$OUT/sudo.err")"
	[ -e "$OUT/$d/r.json" ] && fail "under sudo, $OUT/$d/r.json was made"
done
$SUDO SUDO_USER=nobody "$MW" replay -q -o "$OUT/mine/r.txt" --json "$OUT/mine/r.json" \
	--html "$OUT/mine/r.html" $S || fail "under sudo, replay into nobody's directory exited $?"
for f in r.txt r.json r.html; do
	[ "$(stat -c %u:%g "$OUT/mine/$f")" = 65534:65534 ] ||
		fail "under sudo, $f is owned by $(stat -c %u:%g "$OUT/mine/$f")"
	[ -s "$OUT/mine/$f" ] || fail "under sudo, $f is empty"
done
echo "ok: under sudo, outputs are opened as the invoking user"

# 4. the outputs of a traced run: refused before the program runs
# (--folded, written after the run, was once opened then with fopen(),
# through the link)
need_libc
for opt in --save-stream --save-script -o --json --html "--stacks --folded"; do
	refused "it is a symbolic link" timeout 120 "$MW" -q $opt "$T/link" \
		-c sh -c "touch '$OUT/ran'"
	[ -e "$OUT/ran" ] && fail "$opt: the program ran before the output was refused"
done
echo "ok: a traced run's outputs refuse a planted link before the program runs"
$SUDO SUDO_USER=nobody timeout 120 "$MW" -q -o /dev/null --save-stream "$OUT/mine/s.mw" \
	--save-script "$OUT/mine/s.stp" -c /bin/true || fail "under sudo, a traced run exited $?"
for f in s.mw s.stp; do
	[ "$(stat -c %u:%g "$OUT/mine/$f")" = 65534:65534 ] ||
		fail "under sudo, $f is owned by $(stat -c %u:%g "$OUT/mine/$f")"
done
grep -q '^MW 1 end' "$OUT/mine/s.mw" || fail "the saved stream is incomplete"
grep -q 'probe process(' "$OUT/mine/s.stp" || fail "the saved script has no probes"
echo "ok: under sudo, --save-stream and --save-script are the invoking user's"
