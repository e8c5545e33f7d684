#!/usr/bin/env python3
"""scripts/check-tools names each missing tool and its Debian package.

usage: check_tools_test.py SOURCE_ROOT
Runs the script with a PATH holding only what it needs to run and a clang++
that has no libFuzzer runtime (as on a Debian 12 installed without
recommends); then with the real PATH, where everything is present.
"""
import os
import shutil
import subprocess
import sys
import tempfile

script = os.path.join(sys.argv[1], 'scripts', 'check-tools')
failures = []
with tempfile.TemporaryDirectory() as tmp:
    for tool in ('bash', 'uname', 'python3'):
        os.symlink(shutil.which(tool), os.path.join(tmp, tool))
    clang = os.path.join(tmp, 'clang++')
    with open(clang, 'w') as f:  # -print-file-name of a file it lacks: the bare name
        f.write('#!/bin/sh\nfor a; do case "$a" in -print-file-name=*) echo "${a#*=}";; esac; done\n')
    os.chmod(clang, 0o755)
    r = subprocess.run([os.path.join(tmp, 'bash'), script], env={'PATH': tmp}, capture_output=True, text=True)
    if r.returncode == 0:
        failures.append('exit 0 with meson, ninja and libFuzzer missing')
    for want in ('meson (Debian package meson)', 'ninja (Debian package ninja-build)',
                 'c++ (Debian package g++', 'libclang-rt-14-dev', 'Fix: '):
        if want not in r.stderr:
            failures.append(f'does not say {want!r}:\n{r.stderr}')
    for present in ('python3 (', 'clang++ ('):
        if present in r.stderr:
            failures.append(f'names {present!r}, which is there:\n{r.stderr}')
r = subprocess.run([script], capture_output=True, text=True)
if r.returncode != 0:
    failures.append(f'fails with every tool installed:\n{r.stderr}')
print('\n'.join(failures) if failures else 'check-tools names what is missing')
sys.exit(1 if failures else 0)
