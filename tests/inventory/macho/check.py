#!/usr/bin/env python3
"""Inspects a Mach-O image that roster's inventory was linked into.

Checks, from `llvm-objdump -h -s` and `llvm-nm` of the image:
  - the section __DATA,__roster exists and holds exactly the expected records
    (16 bytes each; zero padding skipped), all of one type key;
  - each record's getter offset lands in __TEXT,__text and its site offset on
    a "file:line" string; the files and their record counts are the expected
    ones (every entry is there, none twice);
  - one descriptor in __DATA,__roster_mod (llvm-nm finds its symbol once, at
    the section's start) whose markers (section$start$/section$end$) resolve
    to the section's bounds and whose node lies in another __DATA section.
usage: check.py OBJDUMP NM IMAGE FILE=COUNT [FILE=COUNT ...]
       (no FILE=COUNT: the image must hold no record)
Prints what it found; exits 1 on the first problem, naming it and the fix.
"""
import re
import struct
import subprocess
import sys


def fail(what: str, fix: str) -> None:
    print(f'FAIL: {what}\nFix: {fix}')
    sys.exit(1)


def sections(objdump: str, image: str) -> dict:
    out = subprocess.run([objdump, '-h', image], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r'\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)', line)
        if m:
            found[m.group(1)] = (int(m.group(3), 16), int(m.group(2), 16))  # name: (address, size)
    return found


def memory(objdump: str, image: str) -> dict:
    """Returns address -> byte for every section with contents."""
    out = subprocess.run([objdump, '-s', image], check=True, capture_output=True, text=True).stdout
    mem = {}
    for line in out.splitlines():
        m = re.match(r'\s*([0-9a-f]{4,16}) ((?:[0-9a-f]{2,8} ?){1,4})', line)
        if not m or line.startswith('Contents'):
            continue
        address = int(m.group(1), 16)
        data = bytes.fromhex(''.join(m.group(2).split()))
        for i, b in enumerate(data):
            mem[address + i] = b
    return mem


def read(mem: dict, address: int, n: int) -> bytes:
    try:
        return bytes(mem[address + i] for i in range(n))
    except KeyError:
        fail(f'{n} bytes at {address:#x} are not in any section with contents',
             'the offsets in a record or the descriptor point outside the image: check the assembly of detail/inventory/platform/macho.hpp')
    return b''


def c_string(mem: dict, address: int) -> str:
    chars = []
    while len(chars) < 4096 and mem.get(address + len(chars), 0) != 0:
        chars.append(chr(mem[address + len(chars)]))
    return ''.join(chars)


def main() -> int:
    objdump, nm, image = sys.argv[1:4]
    expected = {}
    for arg in sys.argv[4:]:
        name, _, count = arg.partition('=')
        expected[name] = int(count)
    secs = sections(objdump, image)
    if '__roster' not in secs:
        fail(f'{image} has no __roster section', 'keep the section: no_dead_strip (detail/inventory/platform/macho.hpp)')
    start, size = secs['__roster']
    mem = memory(objdump, image)
    records = []
    for at in range(start, start + size, 16):
        raw = read(mem, at, 16)
        if raw == bytes(16):
            continue
        records.append((at, struct.unpack('<IIii', raw)))
    text_start, text_size = secs.get('__text', (0, 0))
    found = {}
    for at, (lo, hi, getter, site) in records:
        if (lo, hi) != records[0][1][:2]:
            fail(f'record at {at:#x} has another type key', 'the test submits one type only')
        target = at + 8 + getter
        if not text_start <= target < text_start + text_size:
            fail(f'record at {at:#x}: getter {target:#x} is outside __text', 'the getter offset must be taken from the record (l_roster_record)')
        where = c_string(mem, at + 12 + site)
        m = re.match(r'(?:.*/)?([^/]+):(\d+)$', where)
        if not m:
            fail(f'record at {at:#x}: site {where!r} is not "file:line"', 'the site offset must be taken from the record')
        found[m.group(1)] = found.get(m.group(1), 0) + 1
    print(f'{image}: __roster at {start:#x}, {size} bytes, {len(records)} records: '
          + (', '.join(f'{k} {v}' for k, v in sorted(found.items())) or 'none'))
    if found != expected:
        fail(f'records per file {found}, expected {expected}', 'every ROSTER_SUBMIT must leave one record in the image')

    if '__roster_mod' not in secs:
        fail(f'{image} has no __roster_mod section', 'the descriptor is `used`: it must survive -dead_strip')
    mod_start, mod_size = secs['__roster_mod']
    if mod_size != 32:
        fail(f'__roster_mod holds {mod_size} bytes, one descriptor is 32', 'the descriptor must be a weak hidden symbol, coalesced once per image')
    magic, version, begin, end, node = struct.unpack('<IIQQQ', read(mem, mod_start, 32))
    print(f'  descriptor at {mod_start:#x}: markers {begin:#x}..{end:#x}, node {node:#x}')
    if magic != 0x52535452 or version != 1:
        fail(f'descriptor magic {magic:#x} version {version}', 'module_descriptor{expected, 1, ...}')
    if (begin, end) != (start, start + size):
        fail(f'markers {begin:#x}..{end:#x} are not the section bounds {start:#x}..{start + size:#x}',
             'use section$start$__DATA$__roster and section$end$__DATA$__roster')
    data = [(n, a, s) for n, (a, s) in secs.items() if n not in ('__roster', '__roster_mod') and n.startswith('__')]
    if not any(a <= node < a + max(s, 1) for n, a, s in data):
        fail(f'node {node:#x} is in no section', 'the node is an inline hidden variable of the image')
    symbols = subprocess.run([nm, image], check=True, capture_output=True, text=True).stdout.splitlines()
    descriptors = [s for s in symbols if s.endswith(' _roster_impl_module_descriptor')]
    if len(descriptors) != 1 or int(descriptors[0].split()[0], 16) != mod_start:
        fail(f'llvm-nm finds the descriptor {len(descriptors)} times: {descriptors}',
             'one descriptor per image, at the start of __roster_mod')
    print('  llvm-nm: one _roster_impl_module_descriptor, at __roster_mod')
    return 0


if __name__ == '__main__':
    sys.exit(main())
