#!/usr/bin/env python3
"""Checks that every C++ and Meson block of a doc is quoted verbatim from files.

    check_doc.py DOC FILE...          exit 1 naming each block found in no FILE
    check_doc.py --self-test DOC FILE...
                                      exit 0 when a block altered by one
                                      character is caught (the check checks)

docs/writing-a-backend.md quotes examples/my_backend/; this keeps the two
from drifting apart. A block matches when its text, fences removed, stands
as one run of lines in one of the files.
"""
import re
import sys

LANGUAGES = {"cpp", "c++", "meson"}


def blocks(text):
    """Returns (line, language, body) for each fenced block of the doc."""
    out = []
    for m in re.finditer(r"^```([\w+]*)\n(.*?)^```$", text, re.M | re.S):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1).lower(), m.group(2)))
    return out


def missing(doc_text, sources):
    """Returns the quoted blocks that appear in no source, as (line, body)."""
    found = [(line, body) for line, lang, body in blocks(doc_text) if lang in LANGUAGES]
    if not found:
        return [(0, "(the doc has no C++ or Meson block: wrong file?)")]
    return [(line, body) for line, body in found if not any("\n" + body in "\n" + s for s in sources)]


def main(argv):
    self_test = argv[:1] == ["--self-test"]
    args = argv[1:] if self_test else argv
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    doc_text = open(args[0], encoding="utf-8").read()
    sources = [open(p, encoding="utf-8").read() for p in args[1:]]
    if self_test:
        first = next(b for b in blocks(doc_text) if b[1] in LANGUAGES)
        body = first[2]
        altered = body.replace(";", ":", 1) if ";" in body else body + "x\n"
        drifted = doc_text.replace(body, altered, 1)
        caught = missing(drifted, sources)
        if missing(doc_text, sources) or [line for line, _ in caught] != [first[0]]:
            print(f"check_doc: the self-test failed: an altered block at line {first[0]} was not caught alone",
                  file=sys.stderr)
            return 1
        return 0
    bad = missing(doc_text, sources)
    for line, body in bad:
        first = body.splitlines()[0] if body else ""
        print(f"{args[0]}:{line}: this block is not in the example's files: {first}\n"
              f"Fix: copy the block again from examples/my_backend/ (or change the example and the doc together)",
              file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
