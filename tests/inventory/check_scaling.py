#!/usr/bin/env python3
"""Fails when what an inventory costs at load time grows with its entries.

Reads two executables that differ only in how many entries they submit (the
same main, the same number of translation units) and compares what the
loader and the start-up code do for them. ELF (READELF is readelf): the
dynamic relocations (`readelf -r`) and the size of .init_array, .fini_array
and .preinit_array. PE (--pe, OBJDUMP is MinGW's objdump): the base
relocations (`objdump -p`) and the size of .CRT (the C runtime's
initializers) and .ctors/.dtors. Each may differ by at most a small constant,
never by something per entry.
usage: check_scaling.py [--pe] READELF|OBJDUMP SMALL_EXE SMALL_COUNT LARGE_EXE LARGE_COUNT
"""
import re
import subprocess
import sys

MAX_RELOCATIONS_APART = 8
MAX_ARRAY_BYTES_APART = 16


def run(tool: str, *args: str) -> str:
    return subprocess.run([tool, *args], check=True, capture_output=True, text=True).stdout


def relocations(readelf: str, exe: str) -> int:
    return sum(int(n) for n in re.findall(r"contains (\d+) entr", run(readelf, '-rW', exe)))


def array_bytes(readelf: str, exe: str) -> dict:
    sizes = {'.init_array': 0, '.fini_array': 0, '.preinit_array': 0}
    for line in run(readelf, '-SW', exe).splitlines():
        fields = line.replace('[ ', '[').split()
        if len(fields) > 5 and fields[1] in sizes:
            sizes[fields[1]] += int(fields[5], 16)
    return sizes


def pe_relocations(objdump: str, exe: str) -> int:
    return sum(int(n) for n in re.findall(r"Number of fixups (\d+)", run(objdump, '-p', exe)))


def pe_array_bytes(objdump: str, exe: str) -> dict:
    # `objdump -h`: "Idx Name Size VMA LMA File-off Algn"; the constructor
    # tables of MinGW's GCC sit inside .text, so .CRT is the one to watch.
    sizes = {'.CRT': 0}
    for line in run(objdump, '-h', exe).splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[1] in sizes:
            sizes[fields[1]] += int(fields[2], 16)
    return sizes


def main() -> int:
    args = sys.argv[1:]
    pe = bool(args) and args[0] == '--pe'
    if pe:
        args = args[1:]
    tool, small, n_small, large, n_large = args[:5]
    count_relocations = pe_relocations if pe else relocations
    count_arrays = pe_array_bytes if pe else array_bytes
    kind = 'base relocations' if pe else 'dynamic relocations'
    ok = True
    r_small, r_large = count_relocations(tool, small), count_relocations(tool, large)
    print(f'{kind}: {r_small} with {n_small} entries, {r_large} with {n_large} entries')
    if abs(r_large - r_small) > MAX_RELOCATIONS_APART:
        print(f'FAIL: {r_large - r_small} more relocations for {int(n_large) - int(n_small)} more entries '
              f'(at most {MAX_RELOCATIONS_APART} apart). Fix: a record must hold PC-relative offsets '
              f'(.long target - .), not pointers.')
        ok = False
    a_small, a_large = count_arrays(tool, small), count_arrays(tool, large)
    for name in a_small:
        print(f'{name}: {a_small[name]} bytes with {n_small} entries, {a_large[name]} bytes with {n_large} entries')
        if abs(a_large[name] - a_small[name]) > MAX_ARRAY_BYTES_APART:
            print(f'FAIL: {name} grows with the entries. Fix: no constructor or destructor per '
                  f'ROSTER_SUBMIT; at most one hook per module.')
            ok = False
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
