#!/usr/bin/env python3
"""Lists the architectures in the CUDA backend's kernel object and checks them
against the build's list (meson option nvcc_arch).

usage: cuda_arch_check.py OBJECT --want 75,80,... [--default]
       cuda_arch_check.py --configure SOURCE_ROOT

The second form configures SOURCE_ROOT with -Dnvcc_arch=8x in a temporary
folder and fails unless the configure stops with the entry and a Fix.

Reads the object's .nv_fatbin section (objcopy) and walks the fat binary:
a header (magic 0xBA55ED50, version, header size, size), then entries, each
with its kind (1: PTX, 2: SASS in an ELF), header size, size and, at byte 28
of its header, the architecture (75 for sm_75). Fails unless the object holds
SASS for every wanted architecture and the PTX of the lowest. With --default
(the option was left empty) it also fails unless the list reaches back to
sm_75 (Turing) and holds the A100's sm_80 and the H100/H200's sm_90: an
object of Hopper SASS alone leaves most GPUs in service unable to run roster.
cuobjdump --list-elf, where the toolkit ships it, shows the same list.
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile

FATBIN_MAGIC = 0xBA55ED50


def entries(blob):
    """(kind, arch) of every entry of every fat binary in a .nv_fatbin section."""
    out = []
    off = 0
    while off + 16 <= len(blob):
        magic, _version, header, size = struct.unpack_from('<IHHQ', blob, off)
        if magic != FATBIN_MAGIC:
            if any(blob[off:off + 16]):
                raise ValueError(f'no fat binary at byte {off} (magic {magic:#x})')
            off += 8  # padding between fat binaries
            continue
        at, end = off + header, off + header + size
        while at + 32 <= end:
            kind, _unknown, eheader, esize = struct.unpack_from('<HHIQ', blob, at)
            arch = struct.unpack_from('<I', blob, at + 28)[0]
            out.append(('PTX' if kind == 1 else 'SASS' if kind == 2 else f'kind {kind}', arch))
            at += eheader + esize
        off = end
    return out


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
    ap = argparse.ArgumentParser()
    ap.add_argument('object')
    ap.add_argument('--want', required=True)
    ap.add_argument('--default', action='store_true')
    a = ap.parse_args()
    want = sorted({int(w) for w in a.want.split(',') if w})
    with tempfile.TemporaryDirectory() as tmp:
        section = os.path.join(tmp, 'fatbin')
        p = subprocess.run(['objcopy', '-O', 'binary', '--only-section=.nv_fatbin', a.object, section],
                           capture_output=True, text=True)
        if p.returncode != 0 or not os.path.exists(section):
            print(f'{a.object}: objcopy could not read .nv_fatbin: {p.stderr.strip()}', file=sys.stderr)
            return 1
        with open(section, 'rb') as f:
            found = entries(f.read())
    sass = sorted({arch for kind, arch in found if kind == 'SASS'})
    ptx = sorted({arch for kind, arch in found if kind == 'PTX'})
    print(f'{os.path.basename(a.object)}: SASS ' + ' '.join(f'sm_{s}' for s in sass) +
          '; PTX ' + ' '.join(f'compute_{p}' for p in ptx))
    problems = []
    for w in want:
        if w not in sass:
            problems.append(f'no SASS for sm_{w}')
    if want and min(want) not in ptx:
        problems.append(f'no PTX for compute_{min(want)}, the lowest listed')
    if a.default:
        for need in (75, 80, 90):
            if need not in sass:
                problems.append(f'the default list lacks sm_{need}')
    for p in problems:
        print(f'{a.object}: {p}', file=sys.stderr)
    if problems:
        print('Fix: build the kernels with -gencode for every architecture of the nvcc_arch option '
              '(backends/cuda/meson.build), and the PTX of the lowest', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
