# safe-dirs.sh - sourced by build-glibc.sh and glibc-root.sh (scripts/,
# or the package's /usr/libexec/mallocwatch, beside them): safe_dirs DIR.
# The caller defines say().
# A directory root may work in: root's, and not writable by others
# (sticky directories such as /var/tmp aside: no one else can rename
# what root made in them).  Every directory on the way is checked.
safe_dirs() {
	d=$1
	while :; do
		[ -d "$d" ] && [ ! -L "$d" ] || { say "'$d' is not a directory"; return 1; }
		set -- $(stat -c '%u %a' "$d")
		[ "$1" = 0 ] || { say "'$d' belongs to uid $1, not root: refused"; return 1; }
		m=$2
		case $m in
		????) sticky=$(( ${m%???} & 1 )); m=${m#?} ;;
		*) sticky=0 ;;
		esac
		if [ $(( 0$m & 022 )) -ne 0 ] && [ "$sticky" != 1 ]; then
			say "'$d' is writable by others (mode $2): refused"
			return 1
		fi
		[ "$d" = / ] && return 0
		d=$(dirname "$d")
	done
}
