#!/usr/bin/env python3
"""The checks of the committed CUDA fat image fail, each ending with its Fix,
on a header with one byte of the image changed, on a missing one, and on one
whose recorded sources' hash is not theirs now (a kernel changed without
regenerating); and pass on the committed header itself. No nvcc needed.

usage: cuda_fatbin_stale.py REGEN_SCRIPT COMMITTED_HEADER
"""
import subprocess
import sys
import tempfile
from pathlib import Path


def run(script, *args):
    r = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def expect_failure(name, rc, out, words):
    ok = rc != 0 and out.rstrip().splitlines()[-1].startswith('Fix: run scripts/regen-cuda-fatbin') and \
        all(w in out for w in words)
    print(('ok    ' if ok else 'FAIL  ') + name + ('' if ok else f' (exit {rc}):\n{out}'))
    return ok


def main():
    script, committed = sys.argv[1], Path(sys.argv[2])
    text = committed.read_text()
    good = True
    rc, out = run(script, '--check', str(committed), str(committed))
    good &= rc == 0 or not print(f'FAIL  the committed header against itself:\n{out}')
    rc, out = run(script, '--check-source', str(committed))
    good &= rc == 0 or not print(f'FAIL  the committed header\'s sources hash:\n{out}')
    with tempfile.TemporaryDirectory() as tmp:
        # One character of the image changed.
        at = text.index('image_base64[] =') + 40
        changed = Path(tmp) / 'changed.hpp'
        changed.write_text(text[:at] + ('A' if text[at] != 'A' else 'B') + text[at + 1:])
        rc, out = run(script, '--check', str(committed), str(changed))
        good &= expect_failure('one byte of the image changed', rc, out, ['differs'])
        # A missing header.
        rc, out = run(script, '--check', str(Path(tmp) / 'missing.hpp'), str(committed))
        good &= expect_failure('a missing header', rc, out, ['is missing'])
        # A header made from other sources (the kernels changed since).
        old = Path(tmp) / 'old.hpp'
        lines = text.split('\n')
        lines[2] = '// kernels sha256: ' + '0' * 64
        old.write_text('\n'.join(lines))
        rc, out = run(script, '--check-source', str(old))
        good &= expect_failure('a kernel changed without regenerating (--check-source)', rc, out, ['stale'])
        rc, out = run(script, '--check', str(old), str(committed))
        good &= expect_failure('a kernel changed without regenerating (--check)', rc, out, ['other sources'])
    return 0 if good else 1


if __name__ == '__main__':
    sys.exit(main())
