#!/usr/bin/env python3
"""Fails when a test of this build lacks the build-local XDG_CACHE_HOME.

usage: test_env_check.py MESON BUILD_DIR
Tuning records change acquire and ranking, so a test that reads the user's
~/.cache passes or fails by what that user ran before; every test's env must
set XDG_CACHE_HOME to a folder inside the build (tests/meson.build: test_env_vars).
"""
import json
import os
import subprocess
import sys

meson, build = sys.argv[1], os.path.realpath(sys.argv[2])
tests = json.loads(subprocess.run([meson, 'introspect', '--tests', build], check=True,
                                  capture_output=True, text=True).stdout)
bad = []
for t in tests:
    cache = (t.get('env') or {}).get('XDG_CACHE_HOME')
    if cache is None:
        bad.append(f"{t['name']}: no XDG_CACHE_HOME")
    elif not os.path.realpath(cache).startswith(build + os.sep):
        bad.append(f"{t['name']}: XDG_CACHE_HOME={cache} is outside the build")
print(f'{len(tests)} tests checked')
if bad:
    print('tests that may read the user\'s cache:\n  ' + '\n  '.join(bad))
    print("Fix: give them env: test_env, or environment(test_env_vars + {...}) (tests/meson.build)")
    sys.exit(1)
