#!/usr/bin/env python3
"""Fails when what an inventory costs at load time grows with its entries.

Reads two executables that differ only in how many entries they submit (the
same main, the same number of translation units) and compares what the
dynamic loader and the start-up code do for them: the dynamic relocations
(`readelf -r`) and the size of .init_array, .fini_array and .preinit_array.
Each may differ by at most a small constant, never by something per entry.
usage: check_scaling.py READELF SMALL_EXE SMALL_COUNT LARGE_EXE LARGE_COUNT
"""
import re
import subprocess
import sys

MAX_RELOCATIONS_APART = 8
MAX_ARRAY_BYTES_APART = 16


def relocations(readelf: str, exe: str) -> int:
    out = subprocess.run([readelf, '-rW', exe], check=True, capture_output=True, text=True).stdout
    return sum(int(n) for n in re.findall(r"contains (\d+) entr", out))


def array_bytes(readelf: str, exe: str) -> dict:
    out = subprocess.run([readelf, '-SW', exe], check=True, capture_output=True, text=True).stdout
    sizes = {'.init_array': 0, '.fini_array': 0, '.preinit_array': 0}
    for line in out.splitlines():
        fields = line.replace('[ ', '[').split()
        if len(fields) > 5 and fields[1] in sizes:
            sizes[fields[1]] += int(fields[5], 16)
    return sizes


def main() -> int:
    readelf, small, n_small, large, n_large = sys.argv[1:6]
    ok = True
    r_small, r_large = relocations(readelf, small), relocations(readelf, large)
    print(f'dynamic relocations: {r_small} with {n_small} entries, {r_large} with {n_large} entries')
    if abs(r_large - r_small) > MAX_RELOCATIONS_APART:
        print(f'FAIL: {r_large - r_small} more relocations for {int(n_large) - int(n_small)} more entries '
              f'(at most {MAX_RELOCATIONS_APART} apart). Fix: a record must hold PC-relative offsets '
              f'(.long target - .), not pointers.')
        ok = False
    a_small, a_large = array_bytes(readelf, small), array_bytes(readelf, large)
    for name in a_small:
        print(f'{name}: {a_small[name]} bytes with {n_small} entries, {a_large[name]} bytes with {n_large} entries')
        if abs(a_large[name] - a_small[name]) > MAX_ARRAY_BYTES_APART:
            print(f'FAIL: {name} grows with the entries. Fix: no constructor or destructor per '
                  f'ROSTER_SUBMIT; at most one hook per module.')
            ok = False
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
