#!/usr/bin/env python3
"""Fails when a backend's public header declares a test hook.

    public_headers.py BACKENDS_DIR

A backend's public header is backends/<name>/include/roster/backends/<name>.hpp;
hooks for roster's own tests live in include/roster/backends/<name>/detail/
(e.g. vulkan/detail/testing.hpp), which the tests include and nothing installs.
"""
import pathlib
import re
import sys

HOOK = re.compile(r"\b\w*(for_testing|inject\w*|_testing)\b\s*\(")


def main(argv):
    root = pathlib.Path(argv[0])
    headers = sorted(root.glob("*/include/roster/backends/*.hpp"))
    if not headers:
        print(f"public_headers: no public header under {root}", file=sys.stderr)
        return 1
    bad = 0
    for h in headers:
        for n, line in enumerate(h.read_text(encoding="utf-8").splitlines(), 1):
            if HOOK.search(line):
                print(f"{h}:{n}: a test hook in a public header: {line.strip()}\n"
                      f"Fix: declare it in include/roster/backends/<name>/detail/testing.hpp", file=sys.stderr)
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
