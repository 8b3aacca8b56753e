#!/bin/sh
# The remaining options: --help/-V, --save-script, -v, -q, --json -, and
# the probes command (columns and --json) on the probe-enabled libc.
# The man pages: one a command (docs/mallocwatch.1 for tracing,
# docs/mallocwatch-COMMAND.1 for each other command of main.c's table),
# each naming every option its command's --help defines (its option
# lines) or shows in its own usage lines.
# needs: root glibc
. tests/lib/lib.sh
ok "$MW" --help >"$OUT/help"
for opt in -c -p -e --events --libc --libm --runtime= -o --json --save-script --save-stream --cleanup --duration --interval --read-timeout snapshot check diff --baseline --metrics --format --repeat --linger --aggregate --strict-env -q -v -V EXAMPLES; do
	grep -q -- "$opt" "$OUT/help" || fail "--help does not mention $opt"
done
# help_opts CMD: the options CMD's --help defines or names in its usage
help_opts() {
	if [ "$1" = trace ]; then "$MW" --help; else "$MW" "$1" --help; fi |
	awk -v cmd="$1" '
		/^Usage:/ { u = 1 }
		u && /^$/ { u = 0 }
		u { sub(/^Usage:/, "")
		    if ($0 ~ /^ *mallocwatch /)	# trace: its own forms, not the others
			own = cmd == "trace" ? $0 !~ /^ *mallocwatch [a-z]/ : $0 ~ ("^ *mallocwatch " cmd "( |$)")
		    if (own) print
		    next }
		/^  -/' |
	grep -o -e '--[a-z][a-z-]*' -e '\(^\|[][ |,(]\)-[a-zA-Z]\b' | sed 's/^[][ |,(]//' | sort -u
}
cmds=$(sed -n 's/^\t{ "\([a-z]*\)", cmd_[a-z]* },$/\1/p' src/commands/main.c)
[ "$(echo "$cmds" | wc -l)" -ge 12 ] || fail "commands not found in src/commands/main.c: $cmds"
for cmd in $cmds; do
	page=docs/mallocwatch-$cmd.1
	[ "$cmd" = trace ] && page=docs/mallocwatch.1
	[ -f "$page" ] || fail "no man page $page for the $cmd command"
	grep -q "^\.SH EXIT STATUS" "$page" || fail "$page has no EXIT STATUS section"
	help_opts "$cmd" >"$OUT/opts-$cmd" || exit 99
	[ -s "$OUT/opts-$cmd" ] || fail "no option found in $cmd --help"
	while read -r opt; do
		# groff writes - as \-; the option must not run on into a longer one
		grep -q -- "$(echo "$opt" | sed 's/-/\\\\-/g')\([^a-zA-Z-]\|\$\)" "$page" ||
			fail "$page does not document $cmd's $opt"
	done <"$OUT/opts-$cmd"
	[ "$cmd" = trace ] || grep -qF "mallocwatch\\-$cmd" docs/mallocwatch.1 ||
		fail "docs/mallocwatch.1 does not point to mallocwatch-$cmd(1)"
done
echo "man pages: $(echo $cmds | wc -w) commands, $(cat "$OUT"/opts-* | wc -l) options, each in its page"
ok "$MW" -V | grep -q '^mallocwatch [0-9]' || fail "-V"
need_libc
LIBC=$GLIBC_PREFIX/lib/libc.so.6
ok "$MW" probes --libc "$LIBC" >"$OUT/probes.txt"
# every note (glibc 2.36 here: 78; "grep -c stapsdt" says 79 because it
# also counts readelf's ".note.stapsdt" section header line)
[ "$(readelf -n "$LIBC" | grep -c 'NT_STAPSDT')" = "$(($(wc -l <"$OUT/probes.txt") - 1))" ] ||
	fail "probes does not list every note"
awk 'NR > 1 && ($2 ~ /^memory_/ || $2 ~ /jmp/) && ($4 != "yes" || $NF != "(yes)")' \
	"$OUT/probes.txt" | grep . && fail "memory/setjmp probes not traced or not readable"
grep -q '^libc  *memory_arena_new  *arena  *yes .*8@%rbp 8@%r12 (yes)' "$OUT/probes.txt" ||
	fail "memory_arena_new row: $(grep memory_arena_new "$OUT/probes.txt")"
grep -q '^libc  *pthread_create .* no ' "$OUT/probes.txt" || fail "pthread_create should be listed as not traced"
ok "$MW" probes --libc "$LIBC" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
mem = [s for s in d["sites"] if s["name"].startswith("memory_")]
assert mem and all(s["traced"] and s["readable"] for s in mem), mem
print(len(d["sites"]), "sites,", len(mem), "memory sites, all traced and readable")'
need_root
"$MW" -q --save-script "$OUT/saved.stp" --json - -c true >"$OUT/stdout.json" 2>"$OUT/q.err" ||
	fail "mallocwatch exited $?"
[ -s "$OUT/saved.stp" ] && grep -q 'mark("memory_arena_new")' "$OUT/saved.stp" || fail "--save-script"
python3 -m json.tool "$OUT/stdout.json" >/dev/null || fail "--json - is not JSON on stdout"
grep -q 'runtime:' "$OUT/q.err" && fail "-q still printed notes"
"$MW" -v -o /dev/null -c true 2>"$OUT/v.err" || fail "mallocwatch -v exited $?"
grep -q '^mallocwatch: bpf runtime\|^mallocwatch: kernel runtime' "$OUT/v.err" || fail "no runtime note"
# without -v, a plain run's stderr carries no internal detail (issue 46):
# the runtime is in the summary's header
"$MW" -o "$OUT/plain.txt" -c true 2>"$OUT/plain.err" || fail "mallocwatch -c true exited $?"
grep -q 'runtime:\|kernel-config stub\|memlock shim\|uprobe_multi' "$OUT/plain.err" &&
	fail "a plain run's stderr has the runtime's detail: $(cat "$OUT/plain.err")"
grep -q "^  libc .*, \(bpf\|kernel\) runtime$" "$OUT/plain.txt" || fail "no runtime in the summary"

# docs/probes.md is the probe table as mallocwatch prints it
ok "$MW" probes --table >"$OUT/probes.md"
expect_same docs/probes.md "$OUT/probes.md"
echo "options ok"
