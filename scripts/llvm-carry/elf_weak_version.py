#!/usr/bin/env python3
"""Marks a version that a shared library needs (e.g. GLIBC_2.36) weak
(VER_FLG_WEAK in its .gnu.version_r entry), in place: the dynamic loader then
loads the library where that version is missing, and only a call to one of
its symbols fails, unless another loaded object defines it (see
arc4random.c). Usage: elf_weak_version.py LIBRARY VERSION. Prints how many
entries it marked; 64-bit little-endian ELF only."""
import struct
import sys

VER_FLG_WEAK = 0x2
SHT_GNU_VERNEED = 0x6FFFFFFE


def mark_weak(data, version):
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not ELF64 LE"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    marked = 0
    for _, sh_type, _, _, offset, _, link, info, _, _ in sections:
        if sh_type != SHT_GNU_VERNEED:
            continue
        strtab = sections[link][4]
        vn = offset
        for _ in range(info):
            _, cnt, _, aux, nxt = struct.unpack_from("<HHIII", data, vn)
            va = vn + aux
            for _ in range(cnt):
                _, flags, _, name, va_next = struct.unpack_from("<IHHII", data, va)
                end = data.index(b"\0", strtab + name)
                if data[strtab + name:end].decode() == version:
                    struct.pack_into("<H", data, va + 4, flags | VER_FLG_WEAK)
                    marked += 1
                va += va_next
            vn += nxt
    return marked


if __name__ == "__main__":
    path, version = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        data = bytearray(f.read())
    n = mark_weak(data, version)
    with open(path, "wb") as f:
        f.write(data)
    print(f"{path}: {version} marked weak in {n} entries")
