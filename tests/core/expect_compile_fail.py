#!/usr/bin/env python3
"""Runs a compile command that must fail with a given message, then the same
command with an extra define that must succeed.

usage: expect_compile_fail.py MESSAGE FIX_DEFINE -- COMPILER ARGS...
"""
import subprocess
import sys

message, fix_define, sep, *cmd = sys.argv[1:]
assert sep == "--", "usage: expect_compile_fail.py MESSAGE FIX_DEFINE -- COMPILER ARGS..."
bad = subprocess.run(cmd, capture_output=True, text=True)
if bad.returncode == 0:
    sys.exit("FAIL: the broken backend compiled; the concept did not reject it")
if message not in bad.stderr:
    sys.exit("FAIL: the compiler failed without the expected message %r:\n%s" % (message, bad.stderr))
good = subprocess.run(cmd + [fix_define], capture_output=True, text=True)
if good.returncode != 0:
    sys.exit("FAIL: the fixed backend does not compile either:\n%s" % good.stderr)
print("ok: rejected with %r; the fixed backend compiles" % message)
