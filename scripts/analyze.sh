#!/bin/sh
# analyze.sh [gcc|cppcheck]... - the static analyzers over src/ (`make analyze`;
# both when none is named): gcc's -fanalyzer and cppcheck.  Prints what
# they find that is not known to be false, and exits 1 when there is
# any; 0 when clean.  Slow (gcc -fanalyzer: some 6 minutes of one core),
# so not part of `make check`.  Run `make all` first (build/version.h).
#
# A report that was looked at and found false is listed below with the
# reason, by file, function and kind (not by line, so that it survives
# edits around it); a new report of the same kind in the same function
# is hidden with it, so look again when such a function changes.
# cppcheck is told what its missing system headers would say: that
# <stdnoreturn.h>'s noreturn is __attribute__((noreturn)) (mw_die and
# mw_usage_error do not return), and jansson's iterator macros.

# gcc -fanalyzer's false reports: FILE FUNCTION KIND, then why, indented
known_gcc() {
	cat <<'EOF'
src/run/trace_repeat.c mw_run_trace_repeat -Wanalyzer-malloc-leak
  the FILE is kept in the xcalloc'ed sinks (s.k[i].save); rsink_free closes it
src/live/mapped.c mw_mapped_find -Wanalyzer-use-of-uninitialized-value
  off and exec are set whenever parse_line returns 1, the only case they are read
src/model/procs.c push -Wanalyzer-malloc-leak
  realloc's result is kept in p->pr before anything can fail
src/model/procs.c argv_of -Wanalyzer-malloc-leak
  each strdup is kept in argv, which is returned, or freed with them
src/model/procs.c keep_run_line -Wanalyzer-malloc-leak
  the copy is kept in p->run_lines, freed with the set
src/model/procs.c mw_procs_line -Wanalyzer-use-of-uninitialized-value
  st is read (!st) only when pid > 0, and then mw_procs_find set it
src/live/procmem.c more_buffer -Wanalyzer-malloc-leak
  the slab and its mark bits are kept in c->slabs[k] and c->bits[k], freed with the copy
src/report/report_flame.c add_node -Wanalyzer-malloc-leak
  strndup's result is kept in t->n[], freed with the tree
src/cleanup/linger.c mw_linger_send_msg -Wanalyzer-null-dereference
  CMSG_FIRSTHDR is not NULL: msg_controllen was just set to CMSG_SPACE(nfd ints) >= a cmsghdr
src/live/ptstop_settle.c run_slice -Wanalyzer-null-dereference
  run holds n indices: mw_ptstop_settle allocates it (st->n + 1) before busy_ones fills it
src/live/ptstop_settle.c busy_ones -Wanalyzer-null-dereference
  run is allocated with st->n + 1 entries before every call (mw_ptstop_settle)
src/live/quiet.c threads -Wanalyzer-null-argument
  *out is NULL only while *n is 0, and then it returns before the qsort
EOF
}

# cppcheck's false reports: FILE ID, then why, indented
known_cppcheck() {
	cat <<'EOF'
src/report/report_snap.c internalAstError
  its parser fails on a compound literal in a ternary (b ? &(uint64_t){ ... } : NULL)
src/report/report_tune.c invalidPointerCast
  median_dbl reads a double member at its offsetof() in the sample: a double is there
src/runtime/kmod_sources.c nullPointerArithmeticRedundantCheck
  read_all's loop runs only while buf is not NULL; a failed realloc leaves it with break
EOF
}

cd "$(dirname "$0")/.." || exit 99
[ -f build/version.h ] || { echo "analyze.sh: run make all first" >&2; exit 99; }
INC=$(for d in src/*/; do printf -- '-I%s ' "${d%/}"; done)
OUT=$(mktemp -d) || exit 99
trap 'rm -rf "$OUT"' EXIT
bad=0
[ $# -gt 0 ] || set -- gcc cppcheck

run_gcc() {
	for f in src/*/*.c; do
		LC_ALL=C ${CC:-gcc} -std=gnu11 -O2 -D_GNU_SOURCE $INC -Ibuild -DMW_LIBEXECDIR='"/x"' \
			-DMW_GLIBC_PREFIX='"/x"' -fanalyzer -c -o /dev/null "$f" 2>&1
	done >"$OUT/gcc.log"
	# FILE FUNCTION KIND LINE, one a report
	awk '/: In function / { fn = $0; sub(/.*In function [^A-Za-z_]*/, "", fn)
			sub(/[^A-Za-z_0-9]*:$/, "", fn) }
		/: warning: .*\[-Wanalyzer-/ { k = $0; sub(/.*\[-Wanalyzer-/, "-Wanalyzer-", k)
			sub(/\].*/, "", k); split($1, a, ":")
			print a[1], fn, k, $0 }' "$OUT/gcc.log" >"$OUT/gcc.found"
	known_gcc | awk '$1 ~ /^src\// { print $1, $2, $3 }' >"$OUT/gcc.known"
	awk 'NR == FNR { known[$1 " " $2 " " $3] = 1; next }
		!(($1 " " $2 " " $3) in known) { $1 = $2 = $3 = ""; sub(/^ +/, ""); print }' \
		"$OUT/gcc.known" "$OUT/gcc.found" >"$OUT/gcc.new"
	if [ -s "$OUT/gcc.new" ]; then
		echo "gcc -fanalyzer:"; cat "$OUT/gcc.new"; bad=1
	else
		echo "gcc -fanalyzer: clean ($(wc -l <"$OUT/gcc.found") reports known to be false)"
	fi
}

run_cppcheck() {
	# without the system headers (slow): what they say that matters here
	cat >"$OUT/cppcheck.h" <<'EOF'
#define noreturn __attribute__((noreturn))
#define json_array_foreach(a, i, v) \
	for (i = 0; i < json_array_size(a) && (v = json_array_get(a, i)); i++)
#define json_object_foreach(o, k, v) \
	for (k = json_object_iter_key(json_object_iter(o)); \
	     k && (v = json_object_iter_value(json_object_key_to_iter(k))); \
	     k = json_object_iter_key(json_object_iter_next(o, json_object_key_to_iter(k))))
EOF
	cppcheck --quiet --enable=warning,portability --inline-suppr --std=c11 -D_GNU_SOURCE \
		--include="$OUT/cppcheck.h" \
		$(known_cppcheck | awk '$1 ~ /^src\// { printf "--suppress=%s:%s ", $2, $1 }') \
		$INC -Ibuild \
		--suppress=missingIncludeSystem --template='{file}:{line}: {severity}: {message} [{id}]' \
		src/*/*.c >"$OUT/cppcheck.log" 2>&1
	if [ -s "$OUT/cppcheck.log" ]; then
		echo "cppcheck:"; cat "$OUT/cppcheck.log"; bad=1
	else
		echo "cppcheck: clean"
	fi
}

for a in "$@"; do
	case $a in
	gcc) run_gcc ;;
	cppcheck) run_cppcheck ;;
	*) echo "analyze.sh: gcc or cppcheck, not '$a'" >&2; exit 99 ;;
	esac
done
exit $bad
