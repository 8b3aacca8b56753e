#!/bin/sh
# Notes of other architectures, end to end through `mallocwatch probes`
# and `mallocwatch script`: the parser is chosen by the ELF's e_machine.
# aarch64 and ppc64le: an assembled ELF64 little-endian note object whose
# e_machine is set to EM_AARCH64 (183) / EM_PPC64 (21) - libelf reads
# notes the same for any machine of that class and byte order; i386: a
# real ELF32 object from `as --32`.  Each lists its specs as readable, the
# kernel-runtime script uses $argN for them, and the bpf runtime (x86_64
# register reads only) refuses with a clear message.
# needs: cpu
. tests/lib/lib.sh
note() {	# FILE ARGS: a .note.stapsdt source with one memory_arena_new site
	cat >"$1" <<EON
	.section .note.stapsdt, "", @note
	.balign 4
	.4byte 8, 2f-1f, 3
	.asciz "stapsdt"
	.balign 4
1:	.$3 0x1000, 0, 0
	.asciz "libc"
	.asciz "memory_arena_new"
	.asciz "$2"
2:	.balign 4
EON
}
note "$OUT/a64.S" "8@x20 -4@[sp, 96]" 8byte
note "$OUT/ppc.S" "8@%r3 -4@16(6)" 8byte
note "$OUT/i386.S" "4@%ebx -4@8(%ebp)" 4byte
as --64 -o "$OUT/a64.o" "$OUT/a64.S" || exit 99
as --64 -o "$OUT/ppc.o" "$OUT/ppc.S" || exit 99
printf '\267\000' | dd of="$OUT/a64.o" bs=1 seek=18 conv=notrunc 2>/dev/null || exit 99
printf '\025\000' | dd of="$OUT/ppc.o" bs=1 seek=18 conv=notrunc 2>/dev/null || exit 99
as --32 -o "$OUT/i386.o" "$OUT/i386.S" 2>/dev/null || skip "no as --32"
for a in a64:AArch64 ppc:PowerPC i386:80386; do
	f=$OUT/${a%%:*}.o
	readelf -h "$f" | grep -q "Machine: *.*${a#*:}" || exit 99
	ok "$MW" probes --libc "$f" >"$OUT/${a%%:*}.probes"
	grep -q 'memory_arena_new .*(yes)$' "$OUT/${a%%:*}.probes" ||
		fail "$a: $(tail -n 1 "$OUT/${a%%:*}.probes")"
	ok "$MW" script --runtime=kernel --libc "$f" >"$OUT/${a%%:*}.stp"
	grep -q 'a2 = \$arg2' "$OUT/${a%%:*}.stp" || fail "$a: kernel script without \$arg2"
	"$MW" script --runtime=bpf --libc "$f" >/dev/null 2>"$OUT/${a%%:*}.err" &&
		fail "$a: bpf script generated for a non-x86_64 file"
	grep -q "implemented for x86_64 only; use --runtime=kernel" "$OUT/${a%%:*}.err" ||
		fail "$a: $(cat "$OUT/${a%%:*}.err")"
	echo "$a: $(tail -n 1 "$OUT/${a%%:*}.probes" | sed 's/  */ /g')"
done
