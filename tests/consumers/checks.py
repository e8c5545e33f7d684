"""The consumer checks that build their own programs (consumers.py runs them).

Each builds against a `meson install --destdir` tree only, found the way a
user finds it: PKG_CONFIG_PATH or CMAKE_PREFIX_PATH, never LD_LIBRARY_PATH
(programs run through the .pc file's rpath variable or CMake's build rpath).
"""
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(message):
    print('FAIL: ' + message, file=sys.stderr)
    sys.exit(1)


def sh(cmd, cwd, env, want=0, quiet=False):
    """Runs a shell line; fails unless it exits with `want`; returns stdout + stderr."""
    print('$ ' + cmd, flush=True)
    r = subprocess.run(['sh', '-c', cmd], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if not quiet or r.returncode != want:
        print(r.stdout, end='', flush=True)
    if want is not None and r.returncode != want:
        fail('%s exited with %d, expected %d' % (cmd, r.returncode, want))
    return r.stdout


def expect(text, needles, what):
    for n in needles:
        if n not in text:
            fail('%s does not say %r' % (what, n))


def copy(dest, *names):
    for name in names:
        shutil.copy(os.path.join(HERE, name), dest)


def install_tree(tmp, meson, build, prefix, libdir):
    """meson install --destdir tmp/root; checks the .pc files point into it unchanged."""
    destdir = os.path.join(tmp, 'root')
    r = subprocess.run([meson, 'install', '-C', build, '--no-rebuild', '--quiet', '--destdir', destdir], cwd=tmp)
    if r.returncode != 0:
        fail('meson install --destdir failed')
    root = destdir + prefix
    pcdir = os.path.join(root, libdir, 'pkgconfig')
    env = user_env(root, pcdir)
    # Relocatable: the prefix a consumer gets is the tree's, with no rewriting
    # and no --define-prefix (which guesses wrong in a multiarch libdir).
    got = sh('pkg-config --variable=prefix roster', tmp, env).strip()
    if os.path.realpath(got) != os.path.realpath(root):
        fail('roster.pc gives prefix %s, not the install tree %s: the .pc files are not relocatable' % (got, root))
    cflags = sh('pkg-config --cflags roster', tmp, env)
    if not any(os.path.realpath(f[2:]) == os.path.realpath(os.path.join(root, 'include'))
               for f in shlex.split(cflags) if f.startswith('-I')):
        fail('pkg-config --cflags roster does not name %s/include' % root)
    # The installed roster-info runs from the tree as it lies (it exited 127:
    # libroster.so.0 not found, with no RUNPATH).
    info = os.path.join(root, 'bin', 'roster-info')
    if os.path.exists(info):
        sh(shlex.quote(info) + ' --version', tmp, user_env(root, pcdir))
    return root, pcdir


def user_env(root, pcdir):
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir, CMAKE_PREFIX_PATH=root)
    env.pop('LD_LIBRARY_PATH', None)
    env.pop('PKG_CONFIG_LIBDIR', None)
    return env


def installed(tmp, args):
    meson, build, prefix, libdir = args[:4]
    root, pcdir = install_tree(tmp, meson, build, prefix, libdir)
    return root, pcdir, os.path.join(root, libdir), user_env(root, pcdir)


def backends_of(pcdir):
    """The installed backends: one roster-<name>.pc each."""
    return sorted(n[len('roster-'):-len('.pc')] for n in os.listdir(pcdir)
                  if n.startswith('roster-') and n.endswith('.pc'))


def no_gpu():
    return subprocess.run(['sh', '-c', 'nvidia-smi -L'], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode != 0


def combos(tmp, src, args):
    """Every non-empty set of installed backends (and the full set reversed),
    linked plainly through pkg-config or CMake: each one is registered."""
    tool = args[4]
    root, pcdir, libdir, env = installed(tmp, args)
    names = backends_of(pcdir)
    print('installed backends: ' + ', '.join(names))
    if not names:
        fail('no backend is installed')
    sets = [list(c) for k in range(1, len(names) + 1) for c in itertools.combinations(names, k)]
    if len(names) > 1:
        sets.append(list(reversed(names)))
    copy(tmp, 'routes/combo.cpp', 'routes/CMakeLists.txt')
    optional = {'cuda'} if no_gpu() else set()
    for i, s in enumerate(sets):
        ids = ' '.join(n + '?' if n in optional else n for n in s)
        if tool == 'pkg-config':
            mods = ' '.join('roster-' + n for n in s)
            sh('c++ -std=c++20 -O1 combo.cpp -o combo%d $(pkg-config --cflags --libs roster %s) '
               '$(pkg-config --variable=rpath roster)' % (i, mods), tmp, env)
            sh('./combo%d %s' % (i, ids), tmp, env)
        else:
            sh('cmake -S . -B build%d -DCMAKE_BUILD_TYPE=Release "-DROSTER_BACKENDS=%s" >/dev/null'
               % (i, ';'.join(s)), tmp, env)
            sh('cmake --build build%d' % i, tmp, env)
            sh('./build%d/combo %s' % (i, ids), tmp, env)
    if tool != 'pkg-config':
        # A backend asked for as a REQUIRED component and not installed fails
        # find_package, naming it (it passed, and failed later as a missing target).
        out = sh('cmake -S . -B build-missing -DCMAKE_BUILD_TYPE=Release "-DROSTER_BACKENDS=nosuch"', tmp, env,
                 want=None, quiet=True)
        expect(out, ["roster backend 'nosuch' is not installed"], 'find_package(roster COMPONENTS nosuch)')
        # The version file (roster's own template, no CMake at roster's
        # build): 0.1 is taken above; another minor or major is refused.
        for want in ('0.2', '1.0'):
            folder = os.path.join(tmp, 'version-' + want)
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, 'CMakeLists.txt'), 'w') as f:
                f.write('cmake_minimum_required(VERSION 3.20)\nproject(v LANGUAGES CXX)\n'
                        'find_package(roster %s REQUIRED)\n' % want)
            out = sh('cmake -S %s -B %s/build' % (folder, folder), tmp, env, want=1, quiet=True)
            expect(out, ['with requested version "%s"' % want, 'version: 0.1'], 'find_package(roster %s)' % want)


def plain_archive(tmp, src, args):
    """libroster_cpu.a linked plainly loses the backend; the error names the
    fix for each way of linking, and the plain-link fixes it names work."""
    root, pcdir, libdir, env = installed(tmp, args)
    copy(tmp, 'routes/combo.cpp')
    base = 'c++ -std=c++20 -O1 combo.cpp -o %s $(pkg-config --cflags roster) -L%s %s $(pkg-config --libs roster) ' \
           '$(pkg-config --variable=rpath roster)'
    sh(base % ('plain', libdir, '-lroster_cpu'), tmp, env)
    out = sh('./plain cpu', tmp, env, want=3)
    expect(out, ["unknown type 'cpu'", 'Fix:', "dependency('roster-cpu')", 'link_whole',
                 'pkg-config --libs roster-cpu', 'roster::cpu', '-Wl,--undefined=roster_backend_anchor_cpu',
                 '-Wl,--whole-archive -lroster_cpu -Wl,--no-whole-archive', 'ROSTER_USE_BACKEND(cpu)'],
           'the error of a plainly linked libroster_cpu.a')
    sh(base % ('anchored', libdir, '-Wl,--undefined=roster_backend_anchor_cpu -lroster_cpu'), tmp, env)
    sh('./anchored cpu', tmp, env)
    sh(base % ('whole', libdir, '-Wl,--whole-archive -lroster_cpu -Wl,--no-whole-archive'), tmp, env)
    sh('./whole cpu', tmp, env)


def identity(tmp, src, args):
    """Two backends on one id: acquire refuses it with errc::conflict naming
    the id and both sites; check_backends(), the trace and roster-info say so."""
    root, pcdir, libdir, env = installed(tmp, args)
    copy(tmp, 'identity/dup_backend.cpp', 'identity/host.cpp', 'subproject/toy_device.hpp')
    roster = '$(pkg-config --cflags --libs roster) $(pkg-config --variable=rpath roster)'

    def lib(name, source, defines):
        sh('c++ -std=c++20 -O1 -shared -fPIC %s %s -o lib%s.so %s' % (defines, source, name, roster), tmp, env)

    def host(name, libs):
        sh('c++ -std=c++20 -O1 host.cpp -o %s -Wl,--no-as-needed -L. %s -Wl,-rpath,$PWD %s'
           % (name, ' '.join('-l' + n for n in libs), roster), tmp, env)

    # 6. One file built twice: one registration site, two ranks.
    lib('dup10', 'dup_backend.cpp', '-DDUP_RANK=10')
    lib('dup20', 'dup_backend.cpp', '-DDUP_RANK=20')
    host('same_site', ['dup10', 'dup20'])
    out = sh('./same_site dup', tmp, env)
    expect(out, ['acquire: [conflict]', "backend id 'dup'", 'rank 10', 'rank 20', 'dup_backend.cpp:',
                 'share one registration site', 'Fix:'], 'acquire of two backends with one site')
    expect(out, ["check_backends: backend id 'dup'"], 'check_backends()')
    expect(out, ['trace: backend dup: conflict:'], 'the trace')
    # The same library alone is no conflict (nor is one library linked twice:
    # tests/inventory covers it).
    host('one', ['dup10'])
    expect(sh('./one dup', tmp, env, want=1), ['acquire: opened dup:0', 'check_backends: ok'], 'one library')
    # 7. Ids that differ only in case.
    lib('lower', 'dup_backend.cpp', '-DDUP_ID=\'"dup"\'')
    lib('upper', 'dup_backend.cpp', '-DDUP_ID=\'"DUP"\' -DDUP_RANK=5')
    host('cases', ['lower', 'upper'])
    for spec in ('dup', 'DUP'):
        expect(sh('./cases ' + spec, tmp, env), ["'dup'", "'DUP'", 'without regard to case', 'acquire: [conflict]'],
               'acquire(%s) with dup and DUP registered' % spec)
    # 9. One id from two libraries at two sites.
    shutil.copy(os.path.join(tmp, 'dup_backend.cpp'), os.path.join(tmp, 'twin_a.cpp'))
    shutil.copy(os.path.join(tmp, 'dup_backend.cpp'), os.path.join(tmp, 'twin_b.cpp'))
    lib('twin_a', 'twin_a.cpp', '-DDUP_ID=\'"twin"\'')
    lib('twin_b', 'twin_b.cpp', '-DDUP_ID=\'"twin"\'')
    host('twins', ['twin_a', 'twin_b'])
    expect(sh('./twins twin', tmp, env), ["backend id 'twin'", 'twin_a.cpp:', 'twin_b.cpp:', 'acquire: [conflict]'],
           'acquire of one id from two libraries')
    # roster-info, with the two as plugins.
    info = os.path.join(root, 'bin', 'roster-info')
    if os.path.exists(info):
        os.mkdir(os.path.join(tmp, 'plugins'))
        for n in ('twin_a', 'twin_b'):
            shutil.copy(os.path.join(tmp, 'lib%s.so' % n), os.path.join(tmp, 'plugins'))
        out = sh('ROSTER_PLUGIN_PATH=$PWD/plugins LD_LIBRARY_PATH=%s %s' % (libdir, shlex.quote(info)), tmp, env,
                 want=None)
        expect(out, ["warning: backend id 'twin'", 'twin_a.cpp:', 'twin_b.cpp:'], 'roster-info')
    else:
        print('roster-info is not installed by this build: its check is left out')


def compile_checks(tmp, src, args):
    """Ids a spec cannot name fail to compile with one readable message; so
    does C++17, with a clear first error."""
    root, pcdir, libdir, env = installed(tmp, args)
    copy(tmp, 'compile/bad_id.cpp', 'compile/cpp17.cpp', 'subproject/toy_device.hpp')
    message = 'is not a backend id a device spec can name'
    for bad in ('my gpu', 'gpu:1', '', 'gpu/0', 'x' * 65):
        cmd = 'c++ -std=c++20 -fsyntax-only %s bad_id.cpp $(pkg-config --cflags roster)' % shlex.quote(
            '-DBAD_ID="%s"' % bad)
        out = sh(cmd, tmp, env, want=1)
        expect(out, [message], 'the compile of id %r' % bad)
    for good in ('my-gpu_1', 'GPU2', 'x' * 64):
        sh('c++ -std=c++20 -fsyntax-only %s bad_id.cpp $(pkg-config --cflags roster)'
           % shlex.quote('-DBAD_ID="%s"' % good), tmp, env)
    for cxx in ('c++', 'clang++'):
        if shutil.which(cxx) is None:
            continue
        out = sh('%s -std=c++17 -fsyntax-only cpp17.cpp $(pkg-config --cflags roster)' % cxx, tmp, env, want=1)
        errors = [line for line in out.splitlines() if re.search(r':\d+:\d+: (fatal )?error:', line)]
        if not errors or 'roster needs C++20' not in errors[0]:
            fail('%s -std=c++17: the first error is not the C++20 one: %r' % (cxx, errors[:1]))
        if len(errors) > 2:
            fail('%s -std=c++17 gives %d errors; expected the C++20 one and the stop' % (cxx, len(errors)))


def header_only_plugin(tmp, src, args):
    """A header-only plugin in a header-only host: without -rdynamic,
    load_plugin refuses it and says why; with -rdynamic, it works."""
    root, pcdir, libdir, env = installed(tmp, args)
    copy(tmp, 'plugin/toy_plugin.cpp', 'header_only_plugin/host.cpp', 'subproject/toy_device.hpp')
    inc = '-DROSTER_HEADER_ONLY -I' + shlex.quote(os.path.join(root, 'include'))
    os.mkdir(os.path.join(tmp, 'plugins'))
    sh('c++ -std=c++20 -O1 -shared -fPIC -fno-gnu-unique %s toy_plugin.cpp -o plugins/libtoy.so -pthread' % inc,
       tmp, env)
    sh('c++ -std=c++20 -O1 %s host.cpp -o host -pthread -ldl' % inc, tmp, env)
    out = sh('./host plugins/libtoy.so', tmp, env, want=3)
    expect(out, ['header-only', 'Fix:', '-rdynamic', 'export_dynamic'], 'load_plugin in a host without -rdynamic')
    sh('c++ -std=c++20 -O1 -rdynamic %s host.cpp -o host_exported -pthread -ldl' % inc, tmp, env)
    expect(sh('./host_exported plugins/libtoy.so', tmp, env), ['opened toy-plugin:0'], 'the host with -rdynamic')
    # Built with -fno-gnu-unique it unloads; built with GCC's defaults (plain
    # g++ -shared -fPIC) it holds STB_GNU_UNIQUE symbols, which glibc never
    # unloads: unload_plugin refuses it, naming a symbol and the flag, and the
    # plugin stays listed and working (hostile case 66).
    expect(sh('./host_exported plugins/libtoy.so unload', tmp, env), ['unload_plugin: ok', 'listed: 0'],
           'unloading the plugin built with -fno-gnu-unique')
    sh('c++ -std=c++20 -O1 -shared -fPIC %s toy_plugin.cpp -o plugins/libplain.so -pthread' % inc, tmp, env)
    if 'UNIQUE' in sh('readelf -Ws --wide plugins/libplain.so', tmp, env, quiet=True):
        out = sh('./host_exported plugins/libplain.so unload', tmp, env, want=4)
        expect(out, ['cannot be unloaded', 'STB_GNU_UNIQUE symbol _Z', 'Fix:', '-fno-gnu-unique', 'listed: 1, opens: 1'],
               'unloading the plugin built with GCC\'s defaults')
    else:
        print('c++ gives no STB_GNU_UNIQUE symbol (clang, or a GCC built without it): the plain build unloads')
        expect(sh('./host_exported plugins/libplain.so unload', tmp, env), ['unload_plugin: ok'],
               'unloading the plugin built with the compiler\'s defaults')


def parent(tmp, src, args):
    """A parent project whose own tests and tools options are enabled turns
    roster's off with default_options: none of roster's tests or tools is built."""
    for name in ('meson.build', 'meson_options.txt', 'main.cpp'):
        shutil.copy(os.path.join(HERE, 'parent', name), tmp)
    os.mkdir(os.path.join(tmp, 'subprojects'))
    os.symlink(src, os.path.join(tmp, 'subprojects', 'roster'))
    empty = os.path.join(tmp, 'no-pkgconfig')
    os.mkdir(empty)
    env = dict(os.environ, PKG_CONFIG_LIBDIR=empty, PKG_CONFIG_PATH='', CMAKE_PREFIX_PATH=empty)
    sh('meson setup build >/dev/null', tmp, env)
    targets = json.loads(sh('meson introspect build --targets', tmp, env, quiet=True))
    names = [t['name'] for t in targets]
    if 'parent_test' not in names:
        fail('the parent project\'s own test is not built: its tests option did not apply')
    roster_tests = [t['name'] for t in targets
                    if os.sep + 'tests' + os.sep in t['defined_in'] and 'subprojects' in t['defined_in']]
    if roster_tests:
        fail('%d of roster\'s test targets are built in the parent project (%s...): roster\'s tests option '
             'followed the parent\'s instead of default_options' % (len(roster_tests), ', '.join(roster_tests[:3])))
    if 'roster-info' in names:
        fail('roster-info is built in the parent project: roster\'s tools option followed the parent\'s')
    print('ok: %d targets, none of roster\'s tests or tools' % len(names))


MODES = {
    'combos': combos,
    'plain-archive': plain_archive,
    'identity': identity,
    'compile': compile_checks,
    'header-only-plugin': header_only_plugin,
    'parent': parent,
}
