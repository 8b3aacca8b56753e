# bench/privlibc.sh - sourced: private_glibc DIR copies the probe-enabled
# glibc's shared objects and etc/ to DIR/lib and DIR/etc and sets PREFIX,
# P, LIBC and LOADER to the copy.  Uprobes are attached to a file (its
# inode): other tracers on the machine, attached to the cached glibc, do
# not make this bench's programs trap, and ours do not make theirs; the
# untraced baseline is untraced.  The copy's notes and code are the same
# bytes.  Needs PREFIX (the cached glibc) set.
private_glibc() {
	mkdir -p "$1/lib" "$1/etc"
	cp "$PREFIX"/lib/*.so* "$1/lib/"
	cp "$PREFIX"/etc/ld.so.cache "$1/etc/"
	PREFIX=$1
	P=$PREFIX/lib
	LIBC=$P/libc.so.6
	LOADER="$P/ld-linux-x86-64.so.2 --library-path $P:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu"
}
