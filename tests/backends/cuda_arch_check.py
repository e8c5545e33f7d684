#!/usr/bin/env python3
"""Checks that a malformed nvcc_arch entry stops the configure.

usage: cuda_arch_check.py --configure SOURCE_ROOT

Configures SOURCE_ROOT with -Dnvcc_arch=80,8x in a temporary folder and
fails unless the configure stops, quoting the entry, with a Fix. (The
architectures of the committed fat image are listed and checked by
scripts/regen-cuda-fatbin --list, the tests cuda_fatbin_arch*.)
"""
import os
import subprocess
import sys
import tempfile


def bad_entry_stops_configure(source):
    """A malformed nvcc_arch entry is refused by the configure, quoted, with a Fix."""
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run(['meson', 'setup', os.path.join(tmp, 'b'), source, '-Dnvcc_arch=80,8x',
                            '-Dtests=disabled', '-Dtools=disabled', '-Dbenchmarks=disabled',
                            '-Dvulkan=disabled', '-Dopencl=disabled'], capture_output=True, text=True)
    out = p.stdout + p.stderr
    if p.returncode != 0 and "nvcc_arch: '8x' is not an architecture number" in out and 'Fix:' in out:
        print("-Dnvcc_arch=80,8x: refused by the configure, with a Fix")
        return 0
    print(f'-Dnvcc_arch=80,8x: exit {p.returncode}, expected a refusal naming 8x with a Fix:\n{out[-2000:]}',
          file=sys.stderr)
    return 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--configure':
        return bad_entry_stops_configure(sys.argv[2])
    print('usage: cuda_arch_check.py --configure SOURCE_ROOT', file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
