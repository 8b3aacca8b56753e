#!/bin/sh
# completions/mallocwatch.bash: bash is given COMP_WORDS and COMP_CWORD as
# it would be at a <TAB>, and the completion function's COMPREPLY is
# compared with what the binary says: its commands (and main.c's dispatch
# table), each command's options (from its --help, and every option of
# the commands' getopt tables but the few named below), option values,
# probe names (the list form of `mallocwatch probes`), families, pids,
# files, and the program after -c.  Run with each awk there is (Debian's
# minimal systems have mawk alone).
# needs: -
. tests/lib/lib.sh
command -v bash >/dev/null || skip "no bash"
[ -x "$MW" ] || exit 99

# comp OUTFILE WORD...: COMPREPLY, one per line, sorted, of completing
# the last WORD of the command line WORD...
cat >"$OUT/comp.bash" <<'EOS'
. completions/mallocwatch.bash || exit 99
out=$1; shift
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMPREPLY=()
_mallocwatch
printf '%s\n' "${COMPREPLY[@]}" | sort >"$out"
EOS

for awk in gawk mawk; do
command -v $awk >/dev/null || { echo "no $awk"; continue; }
mkdir -p "$OUT/bin-$awk" && ln -sf "$(command -v $awk)" "$OUT/bin-$awk/awk" || exit 99
echo "== with $awk"
comp() { _o=$1; shift; PATH="$OUT/bin-$awk:$PATH" bash "$OUT/comp.bash" "$_o" "$@" || exit 99; }
# has FILE WORD...: FILE holds each WORD as a line
has() { _f=$1; shift; for _w; do grep -qxF -- "$_w" "$_f" || fail "$awk: '$_w' not offered: $(tr '\n' ' ' <"$_f")"; done; }
hasnt() { _f=$1; shift; for _w; do grep -qxF -- "$_w" "$_f" && fail "$awk: '$_w' offered: $(tr '\n' ' ' <"$_f")"; done; return 0; }
is() { printf '%s\n' "$2" | sort >"$OUT/want"; diff -u "$OUT/want" "$1" || fail "$awk: $3"; }

# 1. The commands: those --help lists, and trace; the same as main.c's
# dispatch table.
comp "$OUT/cmds" "$MW" ""
sed -n 's/^[[:space:]]*{ "\([a-z]*\)", cmd_[a-z]* },$/\1/p' src/commands/main.c | sort >"$OUT/table"
[ -s "$OUT/table" ] || exit 99
diff -u "$OUT/table" "$OUT/cmds" || fail "$awk: the commands offered are not main.c's"
comp "$OUT/s" "$MW" sn
is "$OUT/s" snapshot "sn<TAB>"

# 2. Options, each command's own.
comp "$OUT/o" "$MW" --fo
is "$OUT/o" "$(printf '%s\n' --folded --follow-forks --format --format-output)" "--fo<TAB>"
comp "$OUT/o" "$MW" snapshot --
has "$OUT/o" --leave-stopped --all --count --read-timeout --help
hasnt "$OUT/o" --follow-forks --stacks
comp "$OUT/o" "$MW" flame -
is "$OUT/o" "$(printf '%s\n' --bytes --help --output --probe --width -o)" "flame -<TAB>"
comp "$OUT/o" "$MW" setup -
is "$OUT/o" --help "setup -<TAB>"
comp "$OUT/o" "$MW" setup ""
is "$OUT/o" glibc "setup <TAB>"
# release PID: the pids ($$, this shell's, among them)
comp "$OUT/o" "$MW" release "$$"
grep -qx "$$" "$OUT/o" || fail "release $$<TAB> does not offer $$"
comp "$OUT/o" "$MW" release -
has "$OUT/o" --help
# every long option of a command's getopt table is offered, but those
# its --help names only in prose or by their short form (named here, so
# a new option without its line in --help fails)
opts_of() {	# FILE [NTH table]: the long options of the NTH table in FILE
	awk -v nth="${2:-1}" '/struct option/ { t++ } t == nth && /^[[:space:]]*\{ "/ {
		match($0, /"[a-z.-]+"/); print "--" substr($0, RSTART + 1, RLENGTH - 2) }
		t == nth && /NULL, 0, NULL, 0/ { t++ }' "$1" | sort
}
for spec in "trace cmd_trace.c 1 --no-progress" "snapshot cmd_snapshot.c 1" \
	"explain cmd_explain.c 1" "trim cmd_trim.c 1" "tune cmd_tune.c 1" "serve cmd_serve.c 1" \
	"check cmd_check.c 1" "diff cmd_check.c 2 --json" "flame cmd_flame.c 1" "setup cmd_setup.c 1" \
	"release cmd_release.c 1" \
	"probes cmd_probes.c 1 --runtime --events --follow-forks --stacks"; do
	set -- $spec
	c=$1 f=src/commands/$2 n=$3; shift 3
	opts_of "$f" "$n" >"$OUT/table"
	[ -s "$OUT/table" ] || fail "no options table in $f"
	comp "$OUT/o" "$MW" "$c" --
	for o in $(cat "$OUT/table"); do
		case " $* " in *" $o "*) continue ;; esac
		grep -qxF -- "$o" "$OUT/o" || fail "$awk: $c: $o (in $f) is not offered: is it in $c --help?"
	done
done

# 3. Values: words, after "=" too (bash splits --runtime=k at the =).
comp "$OUT/v" "$MW" diff --format ""
is "$OUT/v" "$(printf '%s\n' json markdown text)" "diff --format <TAB>"
comp "$OUT/v" "$MW" --runtime = k
is "$OUT/v" kernel "--runtime=k<TAB>"
comp "$OUT/v" "$MW" --runtime=b
is "$OUT/v" --runtime=bpf "--runtime=b<TAB> (one word)"
comp "$OUT/v" "$MW" --aggregate m
is "$OUT/v" "$(printf '%s\n' max median min)" "--aggregate m<TAB>"
# a value is not an option: after --json, files
comp "$OUT/v" "$MW" --json -
hasnt "$OUT/v" --follow-forks
# an option's value is skipped: -o -p is the file "-p", then options
comp "$OUT/v" "$MW" -o -p --foll
is "$OUT/v" --follow-forks "-o -p --foll<TAB>"

# 4. --events families (the probes table's and unknown, memory, all),
# a comma list, '!'.
"$MW" probes --table | awk -F' \\| ' '/^\| `/ { print $3 }' | sort -u >"$OUT/fam"
has "$OUT/fam" heap sbrk setjmp arena
comp "$OUT/e" "$MW" -e ""
has "$OUT/e" $(cat "$OUT/fam") unknown memory all
comp "$OUT/e" "$MW" --events = heap,s
is "$OUT/e" "$(printf '%s\n' heap,sbrk heap,setjmp)" "--events=heap,s<TAB>"
comp "$OUT/e" "$MW" -e '!se'
is "$OUT/e" '!setjmp' "-e !se<TAB>"

# 5. Probe names: `mallocwatch probes`' NAME column when it lists a libc's
# sites (a stand-in binary lists a probe no table has), else the table's.
comp "$OUT/p" "$MW" flame --probe memory_sb
is "$OUT/p" "$(printf '%s\n' memory_sbrk_less memory_sbrk_more)" "--probe memory_sb<TAB>"
cat >"$OUT/mallocwatch" <<STUB
#!/bin/sh
if [ "\$*" = probes ]; then
	printf '%s\n' 'PROVIDER NAME                                   FAMILY     TRACED  ADDRESS      ARGUMENTS (readable)' \
		'libc     memory_sbrk_zz_standin                 sbrk       yes     0x9a3c5      8@%rax ok'
	exit 0
fi
exec '$MW' "\$@"
STUB
chmod 755 "$OUT/mallocwatch"
comp "$OUT/p" "$OUT/mallocwatch" flame --probe memory_sb
is "$OUT/p" memory_sbrk_zz_standin "--probe memory_sb<TAB> with a probes list"

# 6. Pids, in a comma list too.
sleep 60 &
spid=$!
trap 'kill $spid 2>/dev/null' EXIT
comp "$OUT/pid" "$MW" -p "$spid"
has "$OUT/pid" "$spid"
comp "$OUT/pid" "$MW" snapshot -p "1,$spid"
has "$OUT/pid" "1,$spid"
hasnt "$OUT/pid" "$spid"
kill $spid

# 7. Files and directories.
mkdir -p "$OUT/dir.d" && : >"$OUT/file.txt" || exit 99
comp "$OUT/f" "$MW" -o "$OUT/fi"
is "$OUT/f" "$OUT/file.txt" "-o FILE<TAB>"
comp "$OUT/f" "$MW" --cgroup "$OUT/"
has "$OUT/f" "$OUT/dir.d"
hasnt "$OUT/f" "$OUT/file.txt"
comp "$OUT/f" "$MW" diff "$OUT/fi"
is "$OUT/f" "$OUT/file.txt" "diff FILE<TAB>"

# 8. After -c CMD, the program's words: the command, then not ours.
comp "$OUT/c" "$MW" -p 1 -c bas
has "$OUT/c" bash
comp "$OUT/c" "$MW" -c ls --fol
hasnt "$OUT/c" --follow-forks
comp "$OUT/c" "$MW" tune --try glibc.malloc.arena_max=1,2 -c bas
has "$OUT/c" bash
done
echo ok
