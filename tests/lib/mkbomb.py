#!/usr/bin/python3
"""mkbomb.py IN OUT MIB [SECTION]: OUT is the ELF file IN with one more
section, SECTION (default .debug_info), SHF_COMPRESSED: an Elf64_Chdr
(ELFCOMPRESS_ZLIB, ch_size MIB MiB) and a zlib stream of that many zero
bytes, which deflate packs about 1000 to 1 (512 MiB in about 0.5 MiB).
A reader that believes the header and inflates the section allocates
and fills MIB MiB.  objcopy adds the section; its flags are set here
(objcopy has no flag for SHF_COMPRESSED).  tests/e2e/t-hostile-elf.sh."""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

SHF_COMPRESSED = 0x800
ELFCOMPRESS_ZLIB = 1


def blob(mib):
    size = mib << 20
    z = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    parts = [struct.pack("<IIQQ", ELFCOMPRESS_ZLIB, 0, size, 1)]
    for _ in range(mib):
        parts.append(z.compress(chunk))
    parts.append(z.flush())
    return b"".join(parts)


def set_compressed(path, name):
    with open(path, "r+b") as f:
        d = f.read()
        assert d[:4] == b"\x7fELF" and d[4] == 2, "a 64-bit ELF file"
        shoff, = struct.unpack_from("<Q", d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
        stroff, = struct.unpack_from("<Q", d, shoff + shstrndx * shentsize + 0x18)
        for i in range(shnum):
            at = shoff + i * shentsize
            nm, = struct.unpack_from("<I", d, at)
            end = d.index(b"\0", stroff + nm)
            if d[stroff + nm:end] == name.encode():
                flags, = struct.unpack_from("<Q", d, at + 8)
                f.seek(at + 8)
                f.write(struct.pack("<Q", flags | SHF_COMPRESSED))
                return
    sys.exit("mkbomb.py: no section %s in %s" % (name, path))


def main():
    src, out, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
    name = sys.argv[4] if len(sys.argv) > 4 else ".debug_info"
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as t:
        t.write(blob(mib))
    try:
        subprocess.run(["objcopy", "--add-section", "%s=%s" % (name, t.name),
                        "--set-section-flags", "%s=readonly,debug" % name, src, out],
                       check=True)
    finally:
        os.unlink(t.name)
    set_compressed(out, name)


main()
