# bash completion for mallocwatch(1)
#
# Installed as /usr/share/bash-completion/completions/mallocwatch (make
# install, the Debian package), where bash-completion loads it on the first
# <TAB> after `mallocwatch`; or source it.  It completes:
#   - the commands, as `mallocwatch --help` lists them (mallocwatch probes,
#     ...), and `trace`;
#   - each command's options, read from its own --help (`mallocwatch CMD
#     --help`: the usage lines and the option lines, EXAMPLES left out), so
#     they follow the binary being completed; whether an option takes a
#     value, and what kind, comes from the word after it there (FILE, DIR,
#     PID, LIST, NAME, a|b|c);
#   - values: pids (-p PID[,PID...], after a comma too; release PID), files and
#     directories, --events families (comma lists, '!' to leave one out),
#     probe names (--probe: the NAME column of `mallocwatch probes`, else
#     of `mallocwatch probes --table`), --runtime/--format/--aggregate
#     words, and after -c CMD (--command CMD, or --) the program and its own
#     arguments.
# The help texts are read once per shell and binary (_mallocwatch_cache).

declare -gA _mallocwatch_cache 2>/dev/null || true

# _mallocwatch_run BIN ARGS...: BIN's output, stderr dropped, never a
# terminal's input
_mallocwatch_run()
{
	"$@" </dev/null 2>/dev/null
}

# _mallocwatch_options BIN CMD: one line per option of CMD ("" = trace),
# "OPTION<TAB>ARG" (ARG empty when it takes none), from CMD --help
_mallocwatch_options()
{
	local bin=$1 cmd=$2 key="opts:$1:$2"
	if [[ -z ${_mallocwatch_cache[$key]+set} ]]; then
		_mallocwatch_cache[$key]=$(_mallocwatch_run "$bin" ${cmd:+"$cmd"} --help |
			awk -v cmd="$cmd" '
			/^EXAMPLES/ { exit }
			# the usage lines (the first paragraph) and the option
			# lines ("  -o FILE     text": the part before the text)
			NR > 1 && /^$/ { usage = 0 }
			NR == 1 { usage = 1 }
			{
				line = $0
				if (!usage) {
					if (line !~ /^  -/)
						next
					line = substr(line, 3)
					if (match(line, /   *[^ -]/) && substr(line, 1, RSTART) !~ /[|]$/)
						line = substr(line, 1, RSTART - 1)
					line = "  " line
				}
				# another command named on this line: its synopsis or
				# "see mallocwatch snapshot --help" is not ours
				if (match(line, /mallocwatch [a-z]+/)) {
					w = substr(line, RSTART + 12, RLENGTH - 12)
					if (w != cmd)
						line = substr(line, 1, RSTART - 1)
				}
				alias = ""
				if (match(line, /^  -[a-zA-Z], --[a-z]/))
					alias = substr(line, 3, 2)
				while (match(line, /(^|[][ (|,\/])--?[a-zA-Z][a-zA-Z0-9-]*(\.[a-z][a-z-]*)*([= ][^ ;,)]+)?/)) {
					tok = substr(line, RSTART, RLENGTH)
					line = substr(line, RSTART + RLENGTH)
					sub(/^[][ (|,\/]/, "", tok)
					opt = tok; arg = ""
					if (match(tok, /[= ]/)) {
						opt = substr(tok, 1, RSTART - 1)
						arg = substr(tok, RSTART + 1)
						sub(/\]+$/, "", arg)
						# a value: FILE, [ADDR:]PORT, PID[,PID...], a|b|c
						if (arg !~ /^\[?[A-Z]/ && arg !~ /^[a-z]+(\|[a-z]+)+$/)
							arg = ""
						# the rest of tok is not an option: look again
						# after the option itself
						if (arg == "")
							line = substr(tok, length(opt) + 1) line
					}
					if (opt ~ /^-[^-]/ && length(opt) != 2)
						continue	# -T2: not one of ours
					if (!(opt in seen) || (seen[opt] == "" && arg != ""))
						seen[opt] = arg
					if (alias != "" && opt ~ /^--/) {
						if (!(alias in seen) || (seen[alias] == "" && arg != ""))
							seen[alias] = arg
						alias = ""
					}
				}
			}
			END {	# every command takes --help
				if (!("--help" in seen))
					seen["--help"] = ""
				for (o in seen)
					printf "%s\t%s\n", o, seen[o]
			}' | sort)
	fi
	[[ -n ${_mallocwatch_cache[$key]} ]] && printf '%s\n' "${_mallocwatch_cache[$key]}"
}

# _mallocwatch_commands BIN: the commands `mallocwatch --help` shows
# (lines "mallocwatch NAME ..."), and trace, the default one
_mallocwatch_commands()
{
	local key="cmds:$1"
	if [[ -z ${_mallocwatch_cache[$key]+set} ]]; then
		_mallocwatch_cache[$key]=$( { echo trace; _mallocwatch_run "$1" --help |
			sed -n '/^EXAMPLES/q; s/^\(Usage:\)\{0,1\} *mallocwatch \([a-z][a-z]*\).*/\2/p'; } |
			sort -u)
	fi
	printf '%s\n' "${_mallocwatch_cache[$key]}"
}

# _mallocwatch_probes BIN: the probe names of `mallocwatch probes` (its
# NAME column: the sites of the libc a program would load), else of
# `mallocwatch probes --table` (the probes mallocwatch knows)
_mallocwatch_probes()
{
	local key="probes:$1"
	if [[ -z ${_mallocwatch_cache[$key]+set} ]]; then
		_mallocwatch_cache[$key]=$(_mallocwatch_run "$1" probes |
			awk 'NR > 1 && $2 ~ /^[a-z_0-9]+$/ { print $2 }' | sort -u)
		[[ -n ${_mallocwatch_cache[$key]} ]] ||
			_mallocwatch_cache[$key]=$(_mallocwatch_run "$1" probes --table |
				sed -n 's/^| `\([a-z_0-9]*\)` |.*/\1/p' | sort -u)
	fi
	printf '%s\n' "${_mallocwatch_cache[$key]}"
}

# _mallocwatch_families BIN: the --events families: those of the probes
# mallocwatch knows (`probes --table`'s family column) and unknown,
# memory and all
_mallocwatch_families()
{
	local key="families:$1"
	if [[ -z ${_mallocwatch_cache[$key]+set} ]]; then
		_mallocwatch_cache[$key]=$( { printf '%s\n' unknown memory all
			_mallocwatch_run "$1" probes --table |
				awk -F' \\| ' '/^\| `/ { print $3 }'; } | sort -u)
	fi
	printf '%s\n' "${_mallocwatch_cache[$key]}"
}

# _mallocwatch_pids: the process ids now
_mallocwatch_pids()
{
	local d
	for d in /proc/[0-9]*; do
		printf '%s\n' "${d#/proc/}"
	done
}

# _mallocwatch_list CUR WORDS...: COMPREPLY for the last element of a
# comma-separated CUR ('!' kept in front of it)
_mallocwatch_list()
{
	local cur=$1 head="" bang=""
	shift
	if [[ $cur == *,* ]]; then
		head=${cur%,*},
		cur=${cur##*,}
	fi
	if [[ $cur == '!'* ]]; then
		bang='!'
		cur=${cur#!}
	fi
	local IFS=$'\n'
	COMPREPLY=($(compgen -P "$head$bang" -W "$*" -- "$cur"))
	[[ ${#COMPREPLY[@]} -eq 1 ]] && compopt -o nospace 2>/dev/null
	return 0
}

# _mallocwatch_files -f|-d CUR: COMPREPLY of the files (-f) or
# directories (-d) CUR starts
_mallocwatch_files()
{
	local IFS=$'\n'
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen "$1" -- "$2"))
}

# _mallocwatch_value BIN OPT ARG CUR: COMPREPLY for the value of OPT,
# whose help names it ARG
_mallocwatch_value()
{
	local bin=$1 opt=$2 arg=$3 cur=$4 IFS=$'\n'
	case $arg in
	*'|'*)
		COMPREPLY=($(compgen -W "${arg//|/$'\n'}" -- "$cur")) ;;
	PID*)
		_mallocwatch_list "$cur" $(_mallocwatch_pids) ;;
	LIST)
		_mallocwatch_list "$cur" $(_mallocwatch_families "$bin") ;;
	NAME)
		if [[ $opt == --probe ]]; then
			COMPREPLY=($(compgen -W "$(_mallocwatch_probes "$bin")" -- "$cur"))
		fi ;;
	DIR)
		_mallocwatch_files -d "$cur" ;;
	CMD)
		COMPREPLY=($(compgen -c -- "$cur")) ;;
	R)	# --runtime's, said in prose by trace's help
		COMPREPLY=($(compgen -W $'auto\nkernel\nbpf' -- "$cur")) ;;
	F)	# --format's words, said in prose by trace's help
		COMPREPLY=($(compgen -W $'text\njson\njunit\ngithub\nmarkdown' -- "$cur")) ;;
	A)	# --aggregate's
		COMPREPLY=($(compgen -W $'worst\nmax\nmedian\nmin' -- "$cur")) ;;
	*FILE*|*.json|PATH|STREAM|FOLDED)
		_mallocwatch_files -f "$cur" ;;
	*)	# a number, seconds, [ADDR:]PORT, RULE, NAME=V1,...: nothing to offer
		COMPREPLY=() ;;
	esac
	return 0
}

_mallocwatch()
{
	local cur=${COMP_WORDS[COMP_CWORD]} bin=${COMP_WORDS[0]} cmd="" first=1 i w
	local IFS=$'\n' opts arg
	COMPREPLY=()

	# the command: the first word, unless it is an option (then trace)
	if [[ $COMP_CWORD -eq 1 && $cur != -* ]]; then
		COMPREPLY=($(compgen -W "$(_mallocwatch_commands "$bin")" -- "$cur"))
		return 0
	fi
	if [[ ${COMP_WORDS[1]} != -* ]]; then
		cmd=${COMP_WORDS[1]}
		first=2
		[[ $cmd == trace ]] && cmd=""
	fi
	opts=$(_mallocwatch_options "$bin" "$cmd")

	# the words before this one: an option's value is skipped; -c CMD,
	# --command CMD or -- ends the options, and what follows is the program's
	for ((i = first; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == -c || $w == --command || $w == -- ]] && [[ -z $cmd || $cmd == tune ]]; then
			if ((i + 1 == COMP_CWORD)); then
				COMPREPLY=($(compgen -c -- "$cur"))
			elif declare -F _command_offset >/dev/null; then
				_command_offset $((i + 1))
			else
				_mallocwatch_files -f "$cur"
			fi
			return 0
		fi
		[[ $w == -* && $w != *=* ]] || continue
		arg=$(printf '%s\n' "$opts" | awk -F'\t' -v o="$w" '$1 == o { print $2 }')
		[[ -n $arg ]] || continue
		# --opt=value: bash splits it into "--opt" "=" "value" (= is in
		# COMP_WORDBREAKS)
		if [[ ${COMP_WORDS[i + 1]} == = ]]; then
			if ((i + 1 == COMP_CWORD)); then
				cur=""
			fi
			((i++))
		fi
		if ((i + 1 >= COMP_CWORD)); then
			_mallocwatch_value "$bin" "$w" "$arg" "$cur"
			return 0
		fi
		((i++))
	done
	# --opt=value as one word (COMP_WORDBREAKS without =)
	if [[ $cur == --*=* ]]; then
		w=${cur%%=*}
		arg=$(printf '%s\n' "$opts" | awk -F'\t' -v o="$w" '$1 == o { print $2 }')
		if [[ -n $arg ]]; then
			_mallocwatch_value "$bin" "$w" "$arg" "${cur#*=}"
			COMPREPLY=("${COMPREPLY[@]/#/$w=}")
		fi
		return 0
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(printf '%s\n' "$opts" | cut -f1)" -- "$cur"))
		return 0
	fi
	case $cmd in
	setup)
		COMPREPLY=($(compgen -W glibc -- "$cur")) ;;
	release)
		COMPREPLY=($(compgen -W "$(_mallocwatch_pids)" -- "$cur")) ;;
	replay|check|diff|flame)
		_mallocwatch_files -f "$cur" ;;
	esac
	return 0
}

complete -F _mallocwatch mallocwatch
