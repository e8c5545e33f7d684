#!/usr/bin/env python3
"""Runs a program that must fail in one way: passes only when it exits with
the given status (a crash, a signal or a sanitizer's abort is another
status) and its output (stdout and stderr) holds every given text. An
expected failure must fail for the stated reason, as pytest's
xfail(raises=..., strict=True) asks.

usage: expect_exit.py STATUS TEXT [TEXT...] -- PROGRAM [ARGS...]
"""
import subprocess
import sys


def main(argv):
    if "--" not in argv or len(argv) < 4:
        print(__doc__)
        return 2
    cut = argv.index("--")
    want, texts, cmd = int(argv[0]), argv[1:cut], argv[cut + 1:]
    r = subprocess.run(cmd, capture_output=True, text=True)
    out = r.stdout + r.stderr
    sys.stdout.write(out)
    bad = []
    if r.returncode != want:
        bad.append(f"exit status {r.returncode}, want {want}" +
                   (" (killed by a signal)" if r.returncode < 0 else ""))
    bad += [f"no {t!r} in the output" for t in texts if t not in out]
    for b in bad:
        print(f"expect_exit: {b}")
    if bad:
        print("Fix: the program must fail the stated way; if it now fails differently, find out why before changing "
              "the expectation")
        return 1
    print(f"expect_exit: exit status {want} and every expected text, as wanted")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
