#!/usr/bin/env python3
"""Fails when a header a backend plugin is built from changed since
plugin_abi_version was last checked.

A plugin built against other headers than the host's passes the plugin ABI
check when plugin_abi_version stays the same, and then crashes the host
(roster-info ended in free(): invalid pointer). So the SHA-256 of the
headers below is recorded beside plugin_abi_version (plugin_abi_headers_sha256
in include/roster/detail/base/plugin_note.hpp), and this test compares.

    python3 tests/reliability/plugin_abi_check.py [SOURCE_ROOT]            # check
    python3 tests/reliability/plugin_abi_check.py [SOURCE_ROOT] --record   # record the new hash
"""
import hashlib
import pathlib
import re
import sys

# The plugin-facing headers: what a plugin includes to register a backend
# (roster/backend.hpp, with the device class of roster/device_interface.hpp),
# the device cache and run-time factories (roster/device_cache.hpp), and every
# roster header those include (not the *-inl.hpp code). plugin_note.hpp, which
# holds plugin_abi_version and the recorded hash, is checked at load time
# (magic and size) instead. The test fails if this list and the includes part.
PLUGIN_HEADERS = [
    "roster/acquire.hpp",
    "roster/backend.hpp",
    "roster/config.hpp",
    "roster/detail/backend/backend_id.hpp",
    "roster/noise_rule.hpp",
    "roster/detail/inventory/inventory_hub.hpp",
    "roster/detail/inventory/platform/elf.hpp",
    "roster/detail/inventory/platform/object_format.hpp",
    "roster/detail/inventory/platform/macho.hpp",
    "roster/detail/inventory/platform/pe.hpp",
    "roster/device_cache.hpp",
    "roster/device_interface.hpp",
    "roster/error.hpp",
    "roster/inventory.hpp",
    "roster/kernels.hpp",
    "roster/program.hpp",
    "roster/spec.hpp",
    "roster/split.hpp",
    "roster/tuning/record.hpp",
]
ENTRY_HEADERS = ["roster/backend.hpp", "roster/device_cache.hpp"]
NOTE = "roster/detail/base/plugin_note.hpp"
RECORDED = re.compile(r'(plugin_abi_headers_sha256\[\] =\s*")([0-9a-f]*)(")')


def included_closure(include):
    """The roster headers ENTRY_HEADERS include, directly or not (no *-inl.hpp)."""
    seen, todo = set(), list(ENTRY_HEADERS)
    while todo:
        h = todo.pop()
        if h in seen or not (include / h).is_file():
            continue
        seen.add(h)
        for m in re.finditer(r"^\s*#\s*include\s*<(roster/[^>]+)>", (include / h).read_text(), re.M):
            if not m.group(1).endswith("-inl.hpp"):
                todo.append(m.group(1))
    return seen - {NOTE}


def headers_hash(include):
    h = hashlib.sha256()
    for name in PLUGIN_HEADERS:
        h.update(name.encode() + b"\0" + (include / name).read_bytes() + b"\0")
    return h.hexdigest()


def main():
    args = [a for a in sys.argv[1:] if a != "--record"]
    root = pathlib.Path(args[0]) if args else pathlib.Path(__file__).resolve().parents[2]
    include = root / "include"
    note_path = include / NOTE
    script = "python3 tests/reliability/plugin_abi_check.py --record"

    closure, listed = included_closure(include), set(PLUGIN_HEADERS)
    if closure != listed:
        print("plugin_abi_check.py: PLUGIN_HEADERS is not what roster/backend.hpp and roster/device_cache.hpp include:")
        for h in sorted(closure - listed):
            print("  add to PLUGIN_HEADERS:", h)
        for h in sorted(listed - closure):
            print("  remove from PLUGIN_HEADERS:", h)
        print("Fix: edit PLUGIN_HEADERS in tests/reliability/plugin_abi_check.py, then bump plugin_abi_version "
              "if the plugin ABI changed and record the new hash: " + script)
        return 1

    note = note_path.read_text()
    m = RECORDED.search(note)
    if not m:
        print(f"{note_path}: no plugin_abi_headers_sha256 beside plugin_abi_version\n"
              f"Fix: restore the line 'inline constexpr char plugin_abi_headers_sha256[] = \"\";', then run: {script}")
        return 1
    now = headers_hash(include)
    if "--record" in sys.argv:
        note_path.write_text(note[: m.start(2)] + now + note[m.end(2):])
        print(f"recorded {now} in {note_path}")
        return 0
    if m.group(2) != now:
        version = re.search(r"plugin_abi_version = (\d+);", note)
        print(f"the plugin-facing headers changed since plugin_abi_version ({version.group(1) if version else '?'}) "
              f"was last checked: recorded {m.group(2) or '(none)'}, now {now}\n"
              f"Fix: bump plugin_abi_version in include/{NOTE} if the plugin ABI changed (a type, layout, virtual "
              f"function or inline function a plugin compiles in), then record the new hash: {script}")
        return 1
    print(f"plugin-facing headers unchanged ({len(PLUGIN_HEADERS)} files, sha256 {now})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
