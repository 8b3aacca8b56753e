# bench/idleprocs.sh - sourced by bench/snapall.sh and bench/servebudget.sh
# (from the tree's top, with P set to the probe-enabled glibc's lib/):
# idle_procs N starts N idle glibc processes, half /bin/sleep on Debian's
# libc and half on the probe-enabled glibc (its loader and
# --library-path), adds their pids to $pids and returns once each has
# mapped its libc.  The caller kills $pids at its exit.
idle_procs() {
	_ip_new=
	for _ip_i in $(seq "$1"); do
		if [ $((_ip_i % 2)) = 0 ]; then
			/bin/sleep 3600 &
		else
			"$P/ld-linux-x86-64.so.2" --library-path "$P:/lib/x86_64-linux-gnu" /bin/sleep 3600 &
		fi
		_ip_new="$_ip_new $!"
	done
	pids="$pids$_ip_new"
	for _ip_p in $_ip_new; do	# each has mapped its libc
		until grep -q 'libc\.so\.6' /proc/$_ip_p/maps 2>/dev/null; do sleep 0.01; done
	done
}
