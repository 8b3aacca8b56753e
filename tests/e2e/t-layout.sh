#!/bin/sh
# The layout of src/ against docs/architecture.md's Layout section, which lists one
# folder a line ("- `src/NAME/` ..."), from the ground up.
# 1. Every file under src/ is in a folder, every folder is listed, and
#    every file of a folder is named on its line (`stem` for NAME.c and
#    NAME.h, else `file`).
# 2. A file includes headers of its own folder and of the folders listed
#    before it, never after: the folders read as the pipeline, and no
#    include runs back up it.
# 3. No two files under src/ share a name (the include path holds every
#    folder, and build/ holds the objects side by side).
# 4. model/ and report/ include nothing of the tracing stages (runtime/,
#    script/, cleanup/, tracer/): they read the stream, live or saved,
#    through protocol/ and stacks/ alone.
# 5. No .c file under src/ is over 800 lines, and no function over 80
#    (scripts/funclen.sh counts them).
# 6. The renderers of a run's view (view.h: the text summary, the JSON,
#    the HTML page, serve's metrics) include the model (state.h) neither themselves nor
#    through a header they include: they render the view, made once a
#    run, and read no figure of their own.
# needs: cpu
. tests/lib/lib.sh
awk '/^## Layout/ { on = 1; next } /^## / { on = 0 } on' docs/architecture.md >"$OUT/layout" ||
	exit 99
sed -n 's/^- `src\/\([a-z]*\)\/`.*/\1/p' "$OUT/layout" >"$OUT/order"
[ -s "$OUT/order" ] || fail "docs/architecture.md's Layout lists no src/ folder"
loose=$(ls -p src | grep -v '/$')
[ -z "$loose" ] || fail "files directly under src/, in no folder: $loose"
for d in src/*/; do
	d=${d#src/}; d=${d%/}
	grep -qx "$d" "$OUT/order" || fail "docs/architecture.md's Layout does not list src/$d/"
done
while read -r d; do
	[ -d "src/$d" ] || fail "docs/architecture.md's Layout lists src/$d/, which is not there"
	# the folder's entry: its line and the lines that continue it
	awk -v d="$d" '/^- `src\// { on = index($0, "- `src/" d "/`") == 1 }
		/^$/ { on = 0 } on' "$OUT/layout" >"$OUT/entry-$d"
	for f in src/"$d"/*; do
		f=${f##*/}
		stem=${f%.[ch]}
		grep -qF "\`$stem\`" "$OUT/entry-$d" || grep -qF "\`$f\`" "$OUT/entry-$d" ||
			fail "docs/architecture.md's Layout does not name $f under src/$d/"
	done
done <"$OUT/order"
dups=$(ls src/*/ | grep -v -e '^src/' -e '^$' | sort | uniq -d)
[ -z "$dups" ] || fail "files under src/ share a name: $dups"
# rank of each file: the place of its folder in the order
n=0
while read -r d; do
	n=$((n + 1))
	for f in src/"$d"/*; do echo "${f##*/} $n $d"; done
done <"$OUT/order" >"$OUT/rank"
for f in src/*/*; do
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r h; do
		# made by the build into build/ (the Makefile's rule), no stage's
		[ "$h" = version.h ] && grep -q '^build/version.h:' Makefile && continue
		echo "$f $h"
	done
done >"$OUT/includes"
awk 'NR == FNR { rank[$1] = $2; dir[$1] = $3; next }
	{ split($1, p, "/"); from = p[3]
	  if (!($2 in rank)) { print $1 " includes \"" $2 "\", no file under src/"; bad = 1; next }
	  if (rank[$2] > rank[from]) {
		print $1 " (src/" dir[from] "/) includes " $2 " of src/" dir[$2] "/, listed after it"
		bad = 1
	  } }
	END { exit bad }' "$OUT/rank" "$OUT/includes" ||
	fail "an include runs back up the folders' order"
awk 'NR == FNR { dir[$1] = $3; next }
	{ split($1, p, "/") }
	(p[2] == "model" || p[2] == "report") && dir[$2] ~ /^(runtime|script|cleanup|tracer)$/ {
		print $1 " includes " $2 " of src/" dir[$2] "/, a tracing stage"; bad = 1 }
	END { exit bad }' "$OUT/rank" "$OUT/includes" ||
	fail "model/ or report/ includes a header of the tracer's stages"
# 6: what each renderer includes, through every header it includes
renderers="report.c report_head.c report_events.c report_json.c report_metrics.c
	report_html.c report_html_lanes.c report_html_events.c"
awk -v list="$renderers" '{ n = split($1, p, "/"); inc[p[n]] = inc[p[n]] " " $2 }
	END { split(list, r, " ")
	      for (i in r) {
		delete seen; todo = r[i]; path[r[i]] = r[i]
		while (todo != "") {
			split(todo, t, " "); todo = ""
			for (j in t) {
				if (t[j] in seen) continue
				seen[t[j]] = 1
				if (t[j] == "state.h") {
					print r[i] " includes state.h (" path[t[j]] ")"; bad = 1
				}
				k = split(inc[t[j]], h, " ")
				for (m = 1; m <= k; m++) {
					if (!(h[m] in seen)) { path[h[m]] = path[t[j]] " > " h[m] }
					todo = todo " " h[m]
				}
			}
		}
	      }
	      exit bad }' "$OUT/includes" ||
	fail "a renderer of the view includes the model (state.h)"
big=$(wc -l src/*/*.c | awk '$2 != "total" && $1 > 800 { printf " %s (%d lines)", $2, $1 }')
[ -z "$big" ] || fail ".c files over 800 lines:$big"
long=$(sh scripts/funclen.sh 80) || fail "functions over 80 lines: $long"
exit 0
