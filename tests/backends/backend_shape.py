#!/usr/bin/env python3
"""Fails when a backend under backends/ leaves the one backend shape.

    backend_shape.py BACKENDS_DIR        check every backends/<name>/
    backend_shape.py --self-test BACKENDS_DIR
                                          check that each rule fails on a copy
                                          with one fault injected

Every backend has:
  - include/roster/backends/<name>.hpp, which declares namespace roster::<name>;
  - src/ split by job, with at least adapters, device, dispatch and
    registration (a .cpp each), every file of src/ named in README.md;
  - meson.build building its library with gnu_symbol_visibility: 'hidden'
    (what stays visible says ROSTER_API);
  - README.md;
  - its entry points, backend::open and backend::enumerate, defined in the
    registration job file (src/registration.cpp, or
    include/roster/backends/<name>/detail/registration-inl.hpp for a backend
    that also works header-only) and nowhere else;
and no file of it includes the core's private headers (roster/detail/...) or
calls getenv (the environment is read with roster::env, <roster/env.hpp>).
"""
import pathlib
import re
import shutil
import sys
import tempfile

JOBS = ('adapters', 'device', 'dispatch', 'registration')
CORE_DETAIL = re.compile(r'^\s*#\s*include\s*[<"]roster/detail/')
GETENV = re.compile(r'\bgetenv\s*\(')
SOURCES = ('.hpp', '.h', '.cpp', '.cu', '.cuh')
# A definition of an entry point: a return type, then backend::open( or
# backend::enumerate( at the start of a declarator (not a call, not a use).
ENTRY = re.compile(r'^[\w:<>,\s*&]*\s(?:\w+::)*backend::(open|enumerate)\s*\(')


def problems_of(backend):
    name = backend.name
    out = []
    header = backend / 'include' / 'roster' / 'backends' / (name + '.hpp')
    if not header.is_file():
        out.append(f'{backend}: no public header include/roster/backends/{name}.hpp')
    elif f'namespace roster::{name}' not in header.read_text(encoding='utf-8'):
        out.append(f'{header}: does not declare namespace roster::{name}')
    src = backend / 'src'
    for job in JOBS:
        if not (src / (job + '.cpp')).is_file():
            out.append(f'{backend}: no src/{job}.cpp (src/ is split by job: {", ".join(JOBS)}, and more as needed)')
    readme = backend / 'README.md'
    if not readme.is_file():
        out.append(f'{backend}: no README.md')
    elif src.is_dir():
        text = readme.read_text(encoding='utf-8')
        for f in sorted(p.name for p in src.iterdir() if p.is_file()):
            if f not in text:
                out.append(f'{readme}: does not say what src/{f} holds')
    build = backend / 'meson.build'
    if not build.is_file():
        out.append(f'{backend}: no meson.build')
    elif not re.search(r"gnu_symbol_visibility\s*:\s*'hidden'", build.read_text(encoding='utf-8')):
        out.append(f"{build}: the library is not built with gnu_symbol_visibility: 'hidden'")
    job_files = {src / 'registration.cpp',
                 backend / 'include' / 'roster' / 'backends' / name / 'detail' / 'registration-inl.hpp'}
    defined = {'open': [], 'enumerate': []}
    for path in sorted(backend.rglob('*')):
        if not path.is_file() or path.suffix not in SOURCES:
            continue
        for n, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
            m = ENTRY.match(line)
            if m and not line.rstrip().endswith(';'):
                defined[m.group(1)].append(path)
                if path not in job_files:
                    out.append(f'{path}:{n}: defines backend::{m.group(1)}; the entry points live in the '
                               f'registration job file (src/registration.cpp or detail/registration-inl.hpp)')
            if CORE_DETAIL.match(line):
                out.append(f'{path}:{n}: includes a private header of the core: {line.strip()}')
            if GETENV.search(line) and not line.lstrip().startswith('//'):
                out.append(f'{path}:{n}: calls getenv; read the variable with roster::env (<roster/env.hpp>)')
    for entry, where in defined.items():
        if not where:
            out.append(f'{backend}: defines no backend::{entry} in its registration job file')
    return out


def check(root):
    backends = sorted(p for p in pathlib.Path(root).iterdir() if p.is_dir() and (p / 'meson.build').is_file())
    if not backends:
        return [f'{root}: no backend folder']
    out = []
    for b in backends:
        out += problems_of(b)
    return out


def inject(root, rel, fn):
    path = pathlib.Path(root) / rel
    path.write_text(fn(path.read_text(encoding='utf-8')), encoding='utf-8')


def self_test(backends):
    cases = [
        ('a core detail include', 'cpu/src/adapters.cpp',
         lambda t: t.replace('#include <roster/backends/cpu.hpp>', '#include <roster/detail/base/text.hpp>\n#include <roster/backends/cpu.hpp>', 1),
         'includes a private header of the core'),
        ('a getenv', 'vulkan/src/device.cpp', lambda t: t + '\nconst char* v = std::getenv("X");\n', 'calls getenv'),
        ('visible symbols', 'cuda/meson.build', lambda t: t.replace("gnu_symbol_visibility: 'hidden'", ''),
         "gnu_symbol_visibility: 'hidden'"),
        ('a src file the README does not name', 'cpu/README.md', lambda t: t.replace('memory.cpp', 'memory'),
         'does not say what src/memory.cpp holds'),
        ('a job without its file', None, 'vulkan/src/dispatch.cpp', 'no src/dispatch.cpp'),
        ('an entry point outside the registration file', 'opencl/src/adapters.cpp',
         lambda t: t + '\nnamespace roster::opencl {\nexpected<std::vector<adapter_info>> backend::enumerate() {\n'
                       '  return {};\n}\n}\n', 'defines backend::enumerate; the entry points live in'),
        ('an entry point nowhere', 'cuda/include/roster/backends/cuda/detail/registration-inl.hpp',
         lambda t: t.replace('backend::open(open_key', 'backend_open(open_key'), 'defines no backend::open'),
        ('a public header in another namespace', 'cpu/include/roster/backends/cpu.hpp',
         lambda t: t.replace('namespace roster::cpu', 'namespace roster::host'), 'does not declare namespace roster::cpu'),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as clean:
        shutil.copytree(backends, clean, dirs_exist_ok=True)
        if check(clean):
            print('FAIL: the unchanged backends do not pass:\n' + '\n'.join(check(clean)))
            return 1
    for name, rel, fn, expect in cases:
        with tempfile.TemporaryDirectory() as root:
            shutil.copytree(backends, root, dirs_exist_ok=True)
            if rel is None:
                (pathlib.Path(root) / fn).unlink()
            else:
                inject(root, rel, fn)
            found = check(root)
            if any(expect in p for p in found):
                print(f'ok: {name} fails the check')
            else:
                failures += 1
                print(f'FAIL: {name}: expected "{expect}" among:\n' + '\n'.join(found))
    return 1 if failures else 0


def main(argv):
    if argv and argv[0] == '--self-test':
        return self_test(argv[1])
    found = check(argv[0])
    for p in found:
        print(p, file=sys.stderr)
    if found:
        print('Fix: give the backend the shape the first comment of tests/backends/backend_shape.py describes', file=sys.stderr)
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
