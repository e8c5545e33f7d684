#!/usr/bin/env python3
"""Proves that tests/sanitizers/tsan.supp hides no race of ours with lavapipe.

usage: tsan_canary.py CANARY SUPPRESSIONS

CANARY (tsan_canary.cpp, built with -fsanitize=thread) writes a host-visible
buffer from one of its threads while lavapipe copies it, unsynchronised.
  1. With SUPPRESSIONS (the file scripts/test gives TSan) the race must be
     reported: exit 66, our writer canary_host_write on one stack and a
     libvulkan_lvp.so frame on the other.
  2. With the file as it was before (library-wide lines, below) the same run
     passes silently: the copy happened and the report was hidden. This keeps
     the canary honest: it shows the check above could fail.
  3. `CANARY layer-lock` (the shape of the validation layer's race, the one
     line SUPPRESSIONS keeps) passes with SUPPRESSIONS and is reported with
     no suppression at all: the line is live, and it is not what hides or
     spares the race of 1.
Exit 77 (skip) when the machine has no lavapipe device.
"""
import os
import platform
import shutil
import subprocess
import sys
import tempfile

# tests/sanitizers/tsan.supp at b7a772c.
BLANKET = """race:libvulkan_lvp.so
race:libvulkan.so
race:libLLVM-15.so
called_from_lib:libvulkan_lvp.so
"""

canary, supp = sys.argv[1], os.path.abspath(sys.argv[2])
# GCC 12's TSan cannot map its shadow under 32 bits of mmap ASLR; scripts/test
# runs meson test without ASLR, and so does this when run on its own.
runner = []
if shutil.which('setarch') and subprocess.run(['setarch', platform.machine(), '-R', 'true'],
                                                capture_output=True).returncode == 0:
    runner = ['setarch', platform.machine(), '-R']


def run(supp_file, *args):
    env = dict(os.environ, TSAN_OPTIONS=f'halt_on_error=1:exitcode=66:suppressions={supp_file}')
    r = subprocess.run(runner + [canary, *args], env=env, capture_output=True, text=True, timeout=240)
    if r.returncode == 77:
        print(r.stderr, end='')
        sys.exit(77)
    return r


failures = []
narrow = run(supp)
for want in ('WARNING: ThreadSanitizer: data race', 'canary_host_write', 'libvulkan_lvp.so'):
    if want not in narrow.stderr:
        failures.append(f'with {supp}: the report does not name {want!r}')
if narrow.returncode != 66:
    failures.append(f'with {supp}: exit {narrow.returncode}, not 66 (TSan\'s exit after a report)')
if failures:
    failures.append(f'stdout:\n{narrow.stdout}\nstderr:\n{narrow.stderr}')

with tempfile.TemporaryDirectory() as tmp:
    old = os.path.join(tmp, 'blanket.supp')
    with open(old, 'w') as f:
        f.write(BLANKET)
    blanket = run(old)
    empty = os.path.join(tmp, 'empty.supp')
    open(empty, 'w').close()
    lock_kept = run(supp, 'layer-lock')
    lock_bare = run(empty, 'layer-lock')
if lock_kept.returncode != 0 or 'ThreadSanitizer' in lock_kept.stderr:
    failures.append(f'with {supp}: the validation layer\'s lock race (layer-lock) is not suppressed: '
                    f'exit {lock_kept.returncode}\n{lock_kept.stderr}')
if lock_bare.returncode != 66 or 'pthread_rwlock_' not in lock_bare.stderr:
    failures.append(f'layer-lock with no suppression: exit {lock_bare.returncode}, not 66 with a pthread_rwlock_ '
                    f'frame, so it does not check the line\n{lock_bare.stderr}')
if blanket.returncode != 0 or 'ThreadSanitizer' in blanket.stderr or 'lavapipe copied' not in blanket.stdout:
    failures.append(f'with the old library-wide file the canary should pass silently (the race hidden), '
                    f'but: exit {blanket.returncode}\nstdout:\n{blanket.stdout}\nstderr:\n{blanket.stderr}')

if failures:
    print('\n'.join(failures))
    print(f'Fix: {supp} must leave a race between our threads and lavapipe reported (no library-wide '
          'race: or called_from_lib: line) and keep its line for the validation layer\'s lock race')
    sys.exit(1)
print(f'with {os.path.basename(supp)}: reported, exit 66 (as it must be); with the old library-wide file: hidden, '
      'exit 0; the layer\'s lock race: suppressed by the file, reported without it')
