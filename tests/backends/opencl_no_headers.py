#!/usr/bin/env python3
"""Configures roster without the OpenCL headers and checks that the backend
is left out with its reason in Meson's summary, that -Dopencl=enabled is an
error with a Fix, and that -Dopencl=disabled says so.

    opencl_no_headers.py MESON SOURCE_ROOT

The headers are taken away by hiding pkg-config's folders (the backend finds
them through pkg-config OpenCL-Headers only); every other optional part is
off, so nothing else depends on what pkg-config would have found.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

OFF = ['-Dtests=disabled', '-Dbenchmarks=disabled', '-Dtools=disabled', '-Dcuda=disabled', '-Dvulkan=disabled']


def setup(meson, src, work, name, *options):
    empty = os.path.join(work, 'no-pkgconfig')
    os.makedirs(empty, exist_ok=True)
    env = dict(os.environ, PKG_CONFIG_LIBDIR=empty, PKG_CONFIG_PATH='')
    r = subprocess.run([meson, 'setup', os.path.join(work, name), src, *OFF, *options], capture_output=True,
                       text=True, env=env)
    return r.returncode, r.stdout + r.stderr


def expect(ok, what, out):
    if not ok:
        print(f'opencl_no_headers: FAILED: {what}\n--- meson said:\n{out}')
        sys.exit(1)


def main(meson, src):
    work = tempfile.mkdtemp(prefix='roster-no-opencl-')
    try:
        rc, out = setup(meson, src, work, 'auto')
        expect(rc == 0, 'setup without the OpenCL headers succeeds', out)
        expect(re.search(r'opencl\s*: no: the OpenCL headers were not found \(pkg-config OpenCL-Headers; '
                         r'Debian: opencl-c-headers\)', out), 'the summary gives the reason', out)
        expect('opencl' not in re.findall(r'backends\s*:\s*([^\n]*(?:\n\s{20,}[^\n]*)*)', out)[-1],
               'the backend list leaves opencl out', out)
        rc, out = setup(meson, src, work, 'enabled', '-Dopencl=enabled')
        expect(rc != 0, '-Dopencl=enabled without the headers fails', out)
        expect('-Dopencl=enabled: the OpenCL headers were not found' in out and 'Fix: install opencl-c-headers' in out,
               'the failure names the headers and the fix', out)
        rc, out = setup(meson, src, work, 'disabled', '-Dopencl=disabled')
        expect(rc == 0 and re.search(r'opencl\s*: no: disabled by -Dopencl=disabled', out),
               '-Dopencl=disabled is said in the summary', out)
        print('opencl_no_headers: ok')
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main(*sys.argv[1:3])
