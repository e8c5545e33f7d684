#!/usr/bin/env python3
"""Runs one way of consuming roster as a user would, from the snippet files
that docs/consuming.md quotes, in a fresh temporary folder.

  consumers.py docs SRC                     the docs' snippets equal the files
  consumers.py sync-docs SRC                copy the files into the docs' snippets
  consumers.py subproject SRC               subproject/build.sh, roster symlinked in
  consumers.py wrap SRC                     wrap/build.sh, the shipped roster.wrap pointed at a clone of SRC
  consumers.py header-only SRC              header_only/build.sh
  consumers.py source-once SRC              source_once/build.sh: ROSTER_SOURCE in one file
  consumers.py one-file SRC                 one_file/build.sh: every backend from one ROSTER_SOURCE
                                            file, g++ and clang++, no GPU tool on the PATH
  consumers.py pkg-config SRC MESON BUILD PREFIX LIBDIR [BACKEND]   installed/build.sh
  consumers.py cmake SRC MESON BUILD PREFIX LIBDIR [BACKEND]        installed/cmake.sh

With BACKEND (cuda, vulkan) the installed snippets run on that backend instead
of cpu: "cpu", roster-cpu and roster::cpu are replaced in the copies. CUDA
without a visible GPU (nvidia-smi -L fails) is a skip.
  consumers.py plugin SRC MESON BUILD PREFIX LIBDIR       plugin/build.sh

The checks below build their own consumers (checks.py), against the installed
files only, with PKG_CONFIG_PATH or CMAKE_PREFIX_PATH and no LD_LIBRARY_PATH:
  consumers.py combos SRC MESON BUILD PREFIX LIBDIR pkg-config|cmake
                                every set of installed backends, linked plainly
  consumers.py plain-archive SRC MESON BUILD PREFIX LIBDIR
                                -lroster_cpu alone: the error names each fix, which work
  consumers.py identity SRC MESON BUILD PREFIX LIBDIR
                                two backends on one id: a conflict where users look
  consumers.py compile SRC MESON BUILD PREFIX LIBDIR
                                bad backend ids and C++17 fail to compile, clearly
  consumers.py header-only-plugin SRC MESON BUILD PREFIX LIBDIR
                                a header-only plugin in a host without -rdynamic
  consumers.py parent SRC       a parent project with its own tests option
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import checks

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(message):
    print('FAIL: ' + message, file=sys.stderr)
    sys.exit(1)


def run(cmd, cwd, env=None):
    print('$ ' + ' '.join(cmd) + '   (in ' + cwd + ')', flush=True)
    result = subprocess.run(cmd, cwd=cwd, env=env)
    if result.returncode != 0:
        fail(' '.join(cmd) + ' exited with ' + str(result.returncode))


def copy_snippets(folder, names, dest, backend='cpu'):
    for name in names:
        with open(os.path.join(HERE, folder, name), encoding='utf-8') as f:
            text = f.read()
        if backend != 'cpu':
            text = (text.replace('"cpu"', '"%s"' % backend).replace('roster-cpu', 'roster-' + backend)
                    .replace('roster::cpu', 'roster::' + backend))
        with open(os.path.join(dest, name), 'w', encoding='utf-8') as f:
            f.write(text)


def check_docs(src):
    """Every ```lang block preceded by <!-- file: tests/consumers/X --> must be X."""
    docs = os.path.join(src, 'docs', 'consuming.md')
    with open(docs, encoding='utf-8') as f:
        text = f.read()
    blocks = re.findall(r'<!-- file: (\S+) -->\n```[a-z]*\n(.*?)```\n', text, re.S)
    if len(blocks) < 6:
        fail('docs/consuming.md quotes %d snippet files; expected at least 6' % len(blocks))
    for path, body in blocks:
        with open(os.path.join(src, path), encoding='utf-8') as f:
            want = f.read()
        if body != want:
            fail('docs/consuming.md: the snippet of %s differs from the file; run tests/consumers/consumers.py '
                 'sync-docs .' % path)
        print('ok: ' + path)
    markers = len(re.findall(r'<!-- file: ', text))
    if markers != len(blocks):
        fail('docs/consuming.md: %d file markers but %d quoted blocks; a marker must be followed '
             'by a fenced block' % (markers, len(blocks)))


def sync_docs(src):
    """Rewrites each quoted block of docs/consuming.md from its file."""
    docs = os.path.join(src, 'docs', 'consuming.md')
    with open(docs, encoding='utf-8') as f:
        text = f.read()

    def quote(m):
        with open(os.path.join(src, m.group(1)), encoding='utf-8') as f:
            return '<!-- file: %s -->\n```%s\n%s```\n' % (m.group(1), m.group(2), f.read())
    text = re.sub(r'<!-- file: (\S+) -->\n```([a-z]*)\n(.*?)```\n', quote, text, flags=re.S)
    with open(docs, 'w', encoding='utf-8') as f:
        f.write(text)


def source_twice(src, tmp):
    """ROSTER_SOURCE in a second file of the program: the link fails, and the
    linker's first complaint names the mistake and its fix, not one of
    roster's functions. Runs in source_once's folder, after build.sh."""
    shutil.copy(os.path.join(tmp, 'roster.cpp'), os.path.join(tmp, 'roster_again.cpp'))
    run(['c++', '-std=c++20', '-O0', '-I' + os.path.join(src, 'include'),
         '-I' + os.path.join(src, 'backends', 'cpu', 'include'), '-c', 'roster_again.cpp'], cwd=tmp)
    cmd = ['c++', 'main.o', 'stream.o', 'roster.o', 'roster_again.o', '-o', 'twice', '-pthread', '-ldl']
    linked = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, errors='replace')
    said = [line for line in linked.stderr.splitlines() if 'multiple definition' in line or 'duplicate symbol' in line]
    if linked.returncode == 0:
        fail(' '.join(cmd) + ' linked two ROSTER_SOURCE files')
    if not said or 'roster_SOURCE_defined_in_two_files__Fix_define_ROSTER_SOURCE_in_one_file_only' not in said[0]:
        fail('two ROSTER_SOURCE files: the first duplicate the linker names is not the one that says the fix:\n'
             + linked.stderr[:2000])
    print('ok: two ROSTER_SOURCE files fail to link with: ' + said[0])


def link_names_fix(tmp, objects, symbol, what):
    """Links main.o and stream.o with objects: the link must fail, and an
    undefined reference must name symbol (the fix)."""
    cmd = ['c++', 'main.o', 'stream.o'] + objects + ['-o', 'unlinkable', '-pthread', '-ldl']
    linked = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, errors='replace')
    if linked.returncode == 0:
        fail(' '.join(cmd) + ' linked: ' + what)
    said = [line for line in linked.stderr.splitlines() if symbol in line]
    if not said:
        fail(what + ': no undefined reference names the fix (' + symbol + '):\n' + linked.stderr[:2000])
    print('ok: ' + what + ' fails to link with: ' + said[0].strip())


def source_without_backend(src, tmp):
    """A file includes a backend header in library mode, and the program's
    ROSTER_SOURCE file does not include it (and no library of the backend is
    linked): the link fails, and the linker names the backend's missing
    bodies and the fix, not only the backend's functions. The same for a
    ROSTER_SOURCE file that includes one roster header and not
    <roster/roster.hpp>. Runs in source_once's folder, after build.sh."""
    symbol = ('roster_cpu_backend_not_compiled__Fix_include_roster_backends_cpu_hpp'
              '_in_the_ROSTER_SOURCE_file_or_link_libroster_cpu')
    with open(os.path.join(tmp, 'roster_core.cpp'), 'w', encoding='utf-8') as f:
        f.write('// roster compiled once, without the CPU backend\n#define ROSTER_SOURCE\n#include <roster/roster.hpp>\n')
    with open(os.path.join(tmp, 'uses_cpu.cpp'), 'w', encoding='utf-8') as f:
        f.write('// includes the CPU backend in library mode and calls none of its functions\n'
                '#include <roster/backends/cpu.hpp>\n')
    for name in ('roster_core.cpp', 'uses_cpu.cpp'):
        run(['c++', '-std=c++20', '-O0', '-I' + os.path.join(src, 'include'),
             '-I' + os.path.join(src, 'backends', 'cpu', 'include'), '-c', name], cwd=tmp)
    link_names_fix(tmp, ['roster_core.o', 'uses_cpu.o'], symbol, 'a backend header without its bodies')
    # A ROSTER_SOURCE file that includes one roster header, not <roster/roster.hpp>:
    # the program's other files need roster's bodies, and the linker says so.
    core = 'roster_not_compiled__Fix_include_roster_roster_hpp_in_the_ROSTER_SOURCE_file_or_link_libroster'
    with open(os.path.join(tmp, 'roster_part.cpp'), 'w', encoding='utf-8') as f:
        f.write('// roster compiled once, but only what <roster/native.hpp> pulls in\n'
                '#define ROSTER_SOURCE\n#include <roster/native.hpp>\n')
    run(['c++', '-std=c++20', '-O0', '-I' + os.path.join(src, 'include'), '-c', 'roster_part.cpp'], cwd=tmp)
    link_names_fix(tmp, ['roster_part.o'], core, 'a ROSTER_SOURCE file with part of roster')

# The line the one-file program prints for each backend (a regular
# expression): each must be registered, and list or say what it lists. A
# backend whose one-file route lands adds its line here.
ONE_FILE_LISTING = {
    'cpu': r'cpu: cpu:0 ',
    # No NVIDIA driver or GPU on the CI box: the reason, then its Fix.
    'cuda': r'cuda: no adapter: cuda: no NVIDIA (GPU|driver)\b.*\bFix: \S',
    'vulkan': r'vulkan: vulkan:0 ',
    'opencl': r'opencl: opencl:0 ',
}
# Tools the one-file route must not need: off the PATH while it builds.
ONE_FILE_NOT_NEEDED = ('glslangValidator', 'nvcc')


def one_file(src, tmp):
    """one_file/build.sh with a PATH that holds the shell, the compilers and
    binutils alone; checks each program's backend list and its STREAM runs."""
    bin_dir = os.path.join(tmp, 'bin')
    os.mkdir(bin_dir)
    for tool in ('sh', 'g++', 'clang++', 'as', 'ld', 'ld.bfd', 'ld.gold', 'ld.lld'):
        found = shutil.which(tool)
        if found:
            os.symlink(found, os.path.join(bin_dir, tool))
    for tool in ('g++', 'clang++'):
        if not shutil.which(tool):
            fail('one-file: %s is not on the PATH; the one-file route is checked with g++ and clang++' % tool)
    for tool in ONE_FILE_NOT_NEEDED:
        if shutil.which(tool, path=bin_dir):
            fail('one-file: %s is still on the PATH the build runs with' % tool)
    env = dict(os.environ, ROSTER=src, PATH=bin_dir)
    print('$ sh -ex build.sh   (in %s, PATH=%s: no %s)' % (tmp, bin_dir, ', '.join(ONE_FILE_NOT_NEEDED)), flush=True)
    result = subprocess.run(['sh', '-ex', 'build.sh'], cwd=tmp, env=env, capture_output=True, text=True,
                            errors='replace')
    print(result.stdout + result.stderr, flush=True)
    if result.returncode != 0:
        fail('one_file/build.sh exited with %d' % result.returncode)
    # build.sh runs the gcc program, then the clang one: each prints the list.
    for backend, pattern in ONE_FILE_LISTING.items():
        lines = [line for line in result.stdout.splitlines() if line.startswith(backend + ': ')]
        if len(lines) != 2 or not all(re.match(pattern, line) for line in lines):
            fail('one-file: the %s backend\'s line is not "%s" in both programs: %s' % (backend, pattern, lines))
    for spec in ('cpu:0', 'vulkan:0', 'opencl:0'):
        runs = [line for line in result.stdout.splitlines() if line.startswith(spec + ' (')]
        if len(runs) != 2 or not all(line.endswith(', ok') for line in runs):
            fail('one-file: STREAM with a checked dot on %s did not pass in both programs: %s' % (spec, runs))
    # roster::kernels_loaded reaches the one-file route: Vulkan names the
    # pipelines it made at open (scripts/gpu-check-one-file reads CUDA's line).
    loads = [line for line in result.stdout.splitlines() if line.startswith('kernels of vulkan:0: ')]
    if len(loads) != 2 or not all(re.match(r'kernels of vulkan:0: vkCreateComputePipelines: [1-9]', line)
                                  for line in loads):
        fail('one-file: each program should say how vulkan:0 made its kernels ready '
             '("kernels of vulkan:0: vkCreateComputePipelines: N ..."): %s' % loads)
    print('ok: the one-file program lists ' + ', '.join(ONE_FILE_LISTING) + ' and runs STREAM on each, '
          'built by g++ and clang++')
    readme_first_program(src, tmp, bin_dir)
    for header, hidden, package in (('vulkan', 'vulkan', 'libvulkan-dev'), ('opencl', 'CL', 'opencl-c-headers')):
        missing_vendor_header(src, tmp, header, hidden, package)


def readme_first_program(src, tmp, bin_dir):
    """README's first program built with no roster library: its roster.cpp and
    its commands, quoted byte for byte there, run from a copy of the tree's
    layout with the same PATH (no glslangValidator, no nvcc)."""
    with open(os.path.join(src, 'README.md'), encoding='utf-8') as f:
        readme = f.read()
    for name in ('roster.cpp', 'readme.sh'):
        path = 'tests/consumers/one_file/' + name
        with open(os.path.join(src, path), encoding='utf-8') as f:
            want = f.read()
        if '<!-- file: %s -->\n```%s\n%s```\n' % (path, 'cpp' if name.endswith('.cpp') else 'sh', want) not in readme:
            fail('README.md does not quote %s byte for byte after <!-- file: %s -->' % (path, path))
    tree = os.path.join(tmp, 'readme')
    os.mkdir(tree)
    for name in ('include', 'backends', 'examples'):
        os.symlink(os.path.join(src, name), os.path.join(tree, name))
    copy_snippets('one_file', ['roster.cpp', 'readme.sh'], tree)
    run(['sh', '-ex', 'readme.sh'], cwd=tree, env=dict(os.environ, PATH=bin_dir))
    print('ok: README\'s first program builds with no roster library and runs on vulkan:0 and opencl:0')


def missing_vendor_header(src, tmp, backend, hidden, package):
    """A ROSTER_SOURCE file that includes a GPU backend's header where its
    vendor headers are missing stops with one error line that names the
    package, and a library-mode file compiles there. The compiler's own search list, with /usr/include replaced by a
    copy that lacks include/<hidden>/, stands for a host without them."""
    probe = subprocess.run(['g++', '-std=c++20', '-xc++', '-E', '-v', '-'], input='', capture_output=True, text=True)
    lines = probe.stderr.splitlines()
    try:
        dirs = [d.strip() for d in lines[lines.index('#include <...> search starts here:') + 1:lines.index('End of search list.')]]
    except ValueError:
        fail('one-file: g++ -v did not print its include search list')
    overlay = os.path.join(tmp, 'no-' + hidden)
    os.mkdir(overlay)
    for entry in os.listdir('/usr/include'):
        if entry != hidden:
            os.symlink(os.path.join('/usr/include', entry), os.path.join(overlay, entry))
    search = []
    for d in dirs:
        search += ['-isystem', overlay if os.path.realpath(d) == '/usr/include' else d]
    with open(os.path.join(tmp, backend + '_missing.cpp'), 'w', encoding='utf-8') as f:
        f.write('#define ROSTER_SOURCE\n#include <roster/backends/%s.hpp>\n' % backend)
    cmd = (['g++', '-std=c++20', '-fsyntax-only', '-nostdinc'] + search +
           ['-I' + os.path.join(src, 'include'), '-I' + os.path.join(src, 'backends', backend, 'include'),
            backend + '_missing.cpp'])
    said = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, errors='replace')
    errors = [line for line in said.stderr.splitlines() if re.search(r'(^|: )(fatal )?error:', line)]
    if said.returncode == 0 or len(errors) != 1 or 'Fix:' not in errors[0] or package not in errors[0]:
        fail('one-file: <roster/backends/%s.hpp> in a ROSTER_SOURCE file without <%s/...> should fail with one '
             'error line naming %s and a Fix; it %s:\n%s' % (backend, hidden, package,
             'compiled' if said.returncode == 0 else 'said', said.stderr[:3000]))
    print('ok: without the %s headers, one line: %s' % (backend, errors[0]))
    # Library mode (no macro) needs no vendor header: the backend's header
    # declares, and neither its -inl code nor a vendor header comes in.
    with open(os.path.join(tmp, backend + '_library.cpp'), 'w', encoding='utf-8') as f:
        f.write('#include <roster/backends/%s.hpp>\n#include <roster/roster.hpp>\n' % backend)
    cmd[-1] = backend + '_library.cpp'
    said = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, errors='replace')
    if said.returncode != 0:
        fail('one-file: <roster/backends/%s.hpp> in library mode needs the %s headers; it must declare only:\n%s'
             % (backend, hidden, said.stderr[:3000]))
    print('ok: in library mode <roster/backends/%s.hpp> compiles without them' % backend)


def installed_env(tmp, meson, build, prefix, libdir):
    """Installs this build into tmp/root with --destdir; returns the environment a user would have.

    No file is rewritten: the .pc files are relocatable and the CMake package
    finds its prefix from its own folder (checks.install_tree checks it)."""
    root, pcdir = checks.install_tree(tmp, meson, build, prefix, libdir)
    env = checks.user_env(root, pcdir)
    return env  # no LD_LIBRARY_PATH: the snippets link with pkg-config's rpath


def main(argv):
    mode, src = argv[1], os.path.abspath(argv[2])
    if mode == 'docs':
        check_docs(src)
        return
    if mode == 'sync-docs':
        sync_docs(src)
        return
    tmp = tempfile.mkdtemp(prefix='roster-consumer-')
    try:
        if mode == 'subproject':
            copy_snippets('subproject', ['meson.build', 'main.cpp', 'toy_backend.cpp', 'toy_device.hpp',
                                         'build.sh'], tmp)
            os.mkdir(os.path.join(tmp, 'subprojects'))
            os.symlink(src, os.path.join(tmp, 'subprojects', 'roster'))
            # Hide any roster installed on this machine from dependency(), so
            # the fallback to the subproject is what runs.
            empty = os.path.join(tmp, 'no-pkgconfig')
            os.mkdir(empty)
            env = dict(os.environ, PKG_CONFIG_LIBDIR=empty, PKG_CONFIG_PATH='', CMAKE_PREFIX_PATH=empty)
            run(['sh', '-ex', 'build.sh'], cwd=tmp, env=env)
            if not os.path.isdir(os.path.join(tmp, 'build', 'subprojects', 'roster')):
                fail('dependency(\'roster\') did not fall back to subprojects/roster')
        elif mode == 'wrap':
            # The shipped roster.wrap, its url set to a local clone of this tree.
            if subprocess.run(['git', '-C', src, 'rev-parse', '--git-dir'], capture_output=True).returncode != 0:
                print('SKIP: the source tree is not a git repository, so there is nothing to clone')
                sys.exit(77)
            copy_snippets('wrap', ['meson.build', 'build.sh'], tmp)
            copy_snippets('installed', ['stream.cpp'], tmp)
            os.mkdir(os.path.join(tmp, 'subprojects'))
            clone = os.path.join(tmp, 'origin')
            run(['git', 'clone', '--quiet', '--no-hardlinks', src, clone], cwd=tmp)
            with open(os.path.join(src, 'roster.wrap'), encoding='utf-8') as f:
                wrap = f.read()
            if 'url = /path/to/roster\n' not in wrap:
                fail('roster.wrap has no "url = /path/to/roster" line to point at the clone')
            with open(os.path.join(tmp, 'build.sh'), encoding='utf-8') as f:
                script = f.read().replace('cp /path/to/roster/roster.wrap subprojects/   # then set url in it\n', '')
            with open(os.path.join(tmp, 'build.sh'), 'w', encoding='utf-8') as f:
                f.write(script)
            with open(os.path.join(tmp, 'subprojects', 'roster.wrap'), 'w', encoding='utf-8') as f:
                f.write(wrap.replace('url = /path/to/roster\n', 'url = file://' + clone + '\n'))
            empty = os.path.join(tmp, 'no-pkgconfig')
            os.mkdir(empty)
            env = dict(os.environ, PKG_CONFIG_LIBDIR=empty, PKG_CONFIG_PATH='', CMAKE_PREFIX_PATH=empty)
            run(['sh', '-ex', 'build.sh'], cwd=tmp, env=env)
            for off in ('tests', 'tools'):
                if os.path.isdir(os.path.join(tmp, 'build', 'subprojects', 'roster', off)):
                    fail('the wrap built roster\'s ' + off + ': its default_options did not reach it')
        elif mode == 'header-only':
            copy_snippets('header_only', ['main.cpp', 'build.sh'], tmp)
            run(['sh', '-ex', 'build.sh'], cwd=tmp, env=dict(os.environ, ROSTER=src))
        elif mode == 'source-once':
            copy_snippets('source_once', ['roster.cpp', 'stream.hpp', 'stream.cpp', 'main.cpp', 'build.sh'], tmp)
            run(['sh', '-ex', 'build.sh'], cwd=tmp, env=dict(os.environ, ROSTER=src))
            source_twice(src, tmp)
            source_without_backend(src, tmp)
        elif mode == 'one-file':
            copy_snippets('one_file', ['main.cpp', 'build.sh'], tmp)
            one_file(src, tmp)
        elif mode in ('pkg-config', 'cmake'):
            meson, build, prefix, libdir = argv[3:7]
            backend = argv[7] if len(argv) > 7 else 'cpu'
            if backend == 'cuda' and subprocess.run(['sh', '-c', 'nvidia-smi -L']).returncode != 0:
                print('SKIP: no visible NVIDIA GPU (nvidia-smi -L failed)')
                sys.exit(77)
            env = installed_env(tmp, meson, build, prefix, libdir)
            copy_snippets('installed', ['stream.cpp', 'build.sh', 'CMakeLists.txt', 'cmake.sh'], tmp, backend)
            run(['sh', '-ex', 'build.sh' if mode == 'pkg-config' else 'cmake.sh'], cwd=tmp, env=env)
        elif mode == 'plugin':
            meson, build, prefix, libdir = argv[3:7]
            env = installed_env(tmp, meson, build, prefix, libdir)
            copy_snippets('plugin', ['toy_plugin.cpp', 'host.cpp', 'build.sh'], tmp)
            copy_snippets('subproject', ['toy_device.hpp'], tmp)
            run(['sh', '-ex', 'build.sh'], cwd=tmp, env=env)
        elif mode in checks.MODES:
            checks.MODES[mode](tmp, src, argv[3:])
        else:
            fail('unknown mode ' + mode)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main(sys.argv)
