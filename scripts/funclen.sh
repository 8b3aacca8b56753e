#!/bin/sh
# funclen.sh [MAX] [FILE...] - the functions of the C files (default: every
# src/*/*.c) longer than MAX lines (default 80), one "FILE:LINE NAME LINES"
# a line, longest first; exit 1 when there is one, else 0.
#
# A function is counted from the line of its name to its closing brace,
# both included, as the house style writes it: the definition's opening
# and closing braces alone on a line at column 0 (the kernel's style,
# which every file under src/ follows), so a brace counter needs no
# parser.  A "{" at column 0 that no line ending in ")" precedes is not
# a function (an initializer) and is skipped.
max=${1:-80}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- src/*/*.c
awk -v max="$max" '
	FNR == 1 { infn = 0; prev = ""; prevprev = "" }
	!infn && /^\{/ && (prev ~ /\)[ \t]*$/ || prev ~ /\)[ \t]*(__attribute__.*)?$/) {
		infn = 1; start = start_of; name = fname; next
	}
	infn && /^\}/ {
		n = FNR - start + 1
		if (n > max) printf "%s:%d %s %d\n", FILENAME, start, name, n
		infn = 0; next
	}
	!infn {
		# the name of a definition: an identifier followed by "(" on a
		# line that starts at column 0 (the name line) or a line that
		# continues it
		line = $0
		gsub(/__attribute__\(\([^)]*\)\)/, "", line)
		if (line ~ /^[A-Za-z_]/ && match(line, /[A-Za-z_][A-Za-z_0-9]*\(/)) {
			fname = substr(line, RSTART, RLENGTH - 1); start_of = FNR
		}
		prev = $0
	}
' "$@" | sort -k3,3nr | awk '{ print } END { exit NR > 0 }'
