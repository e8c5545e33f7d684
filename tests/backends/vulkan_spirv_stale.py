#!/usr/bin/env python3
"""The staleness check of the committed SPIR-V headers can fail.

usage: vulkan_spirv_stale.py REGEN_SPIRV SPIRV_DIR

Runs `REGEN_SPIRV --check` with the committed headers (SPIRV_DIR) standing for
the fresh ones, against copies of them: untouched, it passes; with one byte of
one header changed, one header missing, or one header more, it exits 1, names
the header and ends with a Fix line that names scripts/regen-spirv.
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def check(script, committed, fresh):
    run = subprocess.run([sys.executable, str(script), '--check', str(committed)] + [str(f) for f in fresh],
                         capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


def main():
    script, spirv = Path(sys.argv[1]), Path(sys.argv[2])
    fresh = sorted(spirv.glob('*.spv.h'))
    if len(fresh) < 8:
        print(f'FAIL: {spirv} holds {len(fresh)} SPIR-V headers, want 8')
        return 1
    failures = []

    def expect(name, committed, want_rc, want_text):
        rc, out = check(script, committed, fresh)
        lines = out.rstrip('\n').splitlines()
        ok = rc == want_rc and want_text in out
        if want_rc != 0:
            ok = ok and bool(lines) and lines[-1].startswith('Fix: ') and 'scripts/regen-spirv' in lines[-1]
        print(f'{"ok" if ok else "FAIL"}: {name}: exit {rc}')
        if not ok:
            failures.append(name)
            print('  ' + out.replace('\n', '\n  '))

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / 'spirv'
        shutil.copytree(spirv, copy)
        expect('an untouched copy passes', copy, 0, 'match their shaders')

        victim = copy / fresh[0].name
        data = bytearray(victim.read_bytes())
        at = data.rindex(b'0x') + 2  # a hex digit of the last word
        data[at] = ord('1') if data[at] != ord('1') else ord('2')
        victim.write_bytes(bytes(data))
        expect('one byte changed', copy, 1, f'{victim.name} is stale')

        victim.unlink()
        expect('a header missing', copy, 1, f'{victim.name} is missing')

        shutil.copy(fresh[0], victim)
        (copy / 'gone.spv.h').write_text('// a shader since removed\n')
        expect('a header more', copy, 1, 'gone.spv.h is committed but no shader makes it')
    if failures:
        print(f'{len(failures)} case(s) failed: ' + ', '.join(failures))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
