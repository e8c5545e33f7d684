#!/usr/bin/env python3
"""The stages of scripts/test around the meson suites (issue 42, item 17).

Closing count  scripts/test-summary --failed-stage, and scripts/test's own
               summary block run on given failed stages: a failed stage
               (Windows and Mach-O, the linker matrix, fuzz, a build) is in
               the closing "N passed, N failed" line, never under "0 failed".
Wine prefix    scripts/test-windows --prefix-only with a fake wine64 and
               wineserver: the prefix is its own step, timed and said in the
               log; a failure or a timeout fails (never a skip) with a Fix,
               and a timeout kills what it started. Cheap: no Wine runs.
               With ROSTER_TEST_REAL_WINE=1 and Wine installed, a real prefix
               is made from nothing too (about 20 s idle, minutes when busy).
Strict tools   .ci/run sets ROSTER_STRICT_TOOLS=1 (issue 40, deliverable 3):
               on a PATH without mold its tool check (scripts/check-tools,
               run by scripts/test) fails naming mold, where a local run only
               notes it; test-summary fails on a toolchain skip of
               tests/skips.txt, linker-matrix on a combination whose tool is
               missing, test-windows on a skipped part. Cheap: stand-in
               meson and ninja, nothing is built.

  python3 tests/toolchain/stages_test.py [-v]
"""
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUMMARY = os.path.join(ROOT, "scripts", "test-summary")
WINDOWS = os.path.join(ROOT, "scripts", "test-windows")
MATRIX = os.path.join(ROOT, "scripts", "linker-matrix")
COUNT_RE = re.compile(r"^(\d+) passed, (\d+) failed, (\d+) skipped$")


def closing_count(out):
    """The last 'N passed, N failed, N skipped' line, as CI reads it: (passed, failed, skipped)."""
    lines = [m for m in (COUNT_RE.match(line) for line in out.splitlines()) if m]
    if not lines:
        raise AssertionError(f"no closing count in:\n{out}")
    return tuple(int(x) for x in lines[-1].groups())


def write_testlog(build, results):
    """A meson testlog.json with one test per result ('OK', 'FAIL')."""
    os.makedirs(os.path.join(build, "meson-logs"))
    with open(os.path.join(build, "meson-logs", "testlog.json"), "w") as f:
        for i, result in enumerate(results):
            f.write(json.dumps({"name": f"roster:t / t{i}", "result": result, "stdout": ""}) + "\n")


class ClosingCount(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="roster-stages-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.build = os.path.join(self.tmp, "build")

    def summary(self, *args):
        r = subprocess.run([sys.executable, SUMMARY] + list(args), capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def test_a_failed_stage_is_counted_and_named(self):
        write_testlog(self.build, ["OK"] * 3)
        rc, out = self.summary("--failed-stage", "windows and mach-o", "--failed-stage", "fuzz", self.build)
        self.assertEqual(rc, 0, out)  # the stages are the caller's to fail on, as before
        self.assertEqual(closing_count(out), (3, 2, 0), out)
        self.assertIn("failed stage: windows and mach-o\nfailed stage: fuzz\n", out)

    def test_no_stage_counts_as_before(self):
        write_testlog(self.build, ["OK", "FAIL"])
        rc, out = self.summary(self.build)
        self.assertEqual(rc, 0, out)
        # The failed test is named above the closing line, which counts as before.
        self.assertEqual(out.strip(), "failed build/t1: FAIL\n1 passed, 1 failed, 0 skipped")

    def closing_block(self, failed):
        """Runs scripts/test from its summary step on, with `failed` as the stages that failed before."""
        with open(os.path.join(ROOT, "scripts", "test")) as f:
            text = f.read()
        block = text[text.index('step "summary"'):]
        prelude = ("set -euo pipefail\nstep() { :; }\n"
                   f"build={self.build}\n" + "failed=(" + " ".join(f'"{f}"' for f in failed) + ")\n")
        r = subprocess.run(["bash", "-c", prelude + block], cwd=ROOT, capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def test_scripts_test_closes_with_every_stage_failure(self):
        # Issue 42, item 17: "456 passed, 0 failed, 6 skipped" over "test: FAILED: windows and mach-o".
        write_testlog(self.build, ["OK"] * 4)
        rc, out = self.closing_block(["windows and mach-o", "linker matrix", "tests build"])
        self.assertEqual(rc, 1, out)
        self.assertEqual(closing_count(out), (4, 3, 0), out)
        self.assertEqual(out.strip().splitlines()[-1], "test: FAILED: windows and mach-o linker matrix tests build")

    def test_scripts_test_counts_failing_tests_once(self):
        # A meson test run that failed is counted by its failing tests, not again as a stage.
        write_testlog(self.build, ["OK", "FAIL", "FAIL"])
        rc, out = self.closing_block(["tests tests", "fuzz"])
        self.assertEqual(rc, 1, out)
        self.assertEqual(closing_count(out), (1, 3, 0), out)

    def test_scripts_test_counts_a_test_run_that_failed_without_a_failing_test(self):
        write_testlog(self.build, ["OK"])
        rc, out = self.closing_block(["tests tests"])
        self.assertEqual(rc, 1, out)
        self.assertEqual(closing_count(out), (1, 1, 0), out)

    def test_scripts_test_all_passed(self):
        write_testlog(self.build, ["OK"] * 2)
        rc, out = self.closing_block([])
        self.assertEqual(rc, 0, out)
        self.assertEqual(closing_count(out), (2, 0, 0), out)
        self.assertEqual(out.strip().splitlines()[-1], "test: all passed")


FAKE_WINE = """#!/bin/sh
echo "wine $*" >> "$FAKE_LOG"
echo "WINEPREFIX=$WINEPREFIX WINEDEBUG=$WINEDEBUG" >> "$FAKE_LOG"
case "$FAKE_MODE $1" in
  "fail wineboot") echo "wine: could not load kernel32.dll, status c0000135"; exit 1 ;;
  "hang wineboot") mkdir -p "$WINEPREFIX"; exec sleep 60 ;;
  *" wineboot") mkdir -p "$WINEPREFIX/drive_c" ;;
esac
exit 0
"""
FAKE_WINESERVER = """#!/bin/sh
echo "wineserver $*" >> "$FAKE_LOG"
"""


class WinePrefix(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="roster-wine-prefix-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        for name, text in [("wine64", FAKE_WINE), ("wineserver", FAKE_WINESERVER)]:
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)
        self.log = os.path.join(self.tmp, "calls")
        self.build = os.path.join(self.tmp, "build")

    def prefix_only(self, mode, *args, env=None):
        env = env or dict(os.environ, PATH=self.bin + os.pathsep + os.environ["PATH"], FAKE_LOG=self.log,
                          FAKE_MODE=mode)
        t0 = time.time()
        r = subprocess.run([sys.executable, WINDOWS, "--prefix-only", "--build-dir", self.build] + list(args),
                           env=env, capture_output=True, text=True, timeout=600)
        return r.returncode, r.stdout + r.stderr, time.time() - t0

    def calls(self):
        with open(self.log) as f:
            return f.read().splitlines()

    def test_prefix_is_its_own_timed_step(self):
        rc, out, _ = self.prefix_only("ok")
        self.assertEqual(rc, 0, out)
        prefix = os.path.join(self.build, "wineprefix")
        self.assertRegex(out, rf"(?m)^Wine prefix: ready in \d+ s \(new prefix, {re.escape(prefix)}\)$")
        calls = [c for c in self.calls() if not c.startswith("WINEPREFIX")]
        self.assertEqual(calls, ["wine wineboot --init", "wineserver -w", "wine cmd /c exit 0"])
        self.assertIn(f"WINEPREFIX={prefix} WINEDEBUG=-all", self.calls())
        rc, out, _ = self.prefix_only("ok")  # made ready every time: Wine may have been upgraded
        self.assertEqual(rc, 0, out)
        self.assertIn("(existing prefix,", out)

    def test_a_failed_prefix_fails_with_a_fix(self):
        rc, out, _ = self.prefix_only("fail")
        self.assertEqual(rc, 1, out)
        self.assertIn("Wine prefix: FAIL exit status 1 in `wineboot --init`", out)
        self.assertIn("could not load kernel32.dll", out)
        self.assertIn("Fix: remove ", out)
        self.assertNotIn("skipped", out)

    def test_a_prefix_past_its_time_fails_and_is_stopped(self):
        rc, out, took = self.prefix_only("hang", "--prefix-timeout", "2")
        self.assertEqual(rc, 1, out)
        self.assertIn("Wine prefix: FAIL timed out after 2 s in `wineboot --init`", out)
        self.assertIn("--prefix-only --build-dir", out)
        self.assertIn("--prefix-timeout 4", out)
        self.assertLess(took, 30, out)
        self.assertIn("wineserver -k", self.calls())

    @unittest.skipUnless(os.environ.get("ROSTER_TEST_REAL_WINE") == "1", "ROSTER_TEST_REAL_WINE=1 runs real Wine")
    def test_real_wine_from_a_deleted_prefix(self):
        env = dict(os.environ)
        env.pop("WINEPREFIX", None)
        rc, out, _ = self.prefix_only("real", env=env)
        if rc == 77:
            self.skipTest(out.strip())
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"Wine prefix: ready in \d+ s \(new prefix, ")
        self.assertTrue(os.path.isdir(os.path.join(self.build, "wineprefix", "drive_c")), out)


STAND_IN = """#!/bin/sh
echo "$0 $*" >> "$STAND_IN_LOG"
exit 3
"""


def path_without(folder, names, stand_ins=()):
    """Makes folder a PATH of links to every program on this PATH but `names` (fnmatch patterns);
    each of `stand_ins` is a script that logs its call to $STAND_IN_LOG and exits 3."""
    os.makedirs(folder)
    for d in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for n in os.listdir(d):
            target, link = os.path.join(d, n), os.path.join(folder, n)
            if any(fnmatch.fnmatchcase(n, p) for p in names) or os.path.lexists(link):
                continue
            if os.access(target, os.X_OK) and not os.path.isdir(target):
                os.symlink(target, link)
    for n in stand_ins:
        link = os.path.join(folder, n)
        if os.path.lexists(link):
            os.unlink(link)
        with open(link, "w") as f:
            f.write(STAND_IN)
        os.chmod(link, 0o755)
    return folder


def missing_section(err):
    """The lines check-tools prints under 'check-tools: missing:'."""
    return err.split("check-tools: missing:", 1)[1].split("Fix:", 1)[0] if "check-tools: missing:" in err else ""


class StrictTools(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="roster-strict-tools-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.lenient_env = {k: v for k, v in os.environ.items() if k != "ROSTER_STRICT_TOOLS"}

    def tree(self):
        """A copy of .ci/run and the scripts it reaches up to meson, with install-deps stood in for
        (it would install what is missing)."""
        tree = os.path.join(self.tmp, "tree")
        for f in (".ci/run", "scripts/test", "scripts/check-tools"):
            os.makedirs(os.path.dirname(os.path.join(tree, f)), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, f), os.path.join(tree, f))
        with open(os.path.join(tree, "scripts", "install-deps"), "w") as f:
            f.write("#!/bin/sh\necho 'install-deps: stood in for'\n")
        os.chmod(os.path.join(tree, "scripts", "install-deps"), 0o755)
        return tree

    def test_ci_run_without_mold_fails_naming_mold(self):
        tree = self.tree()
        log = os.path.join(self.tmp, "stand-ins")
        path = path_without(os.path.join(self.tmp, "bin"), ["mold", "ld.mold"], stand_ins=["meson", "ninja"])
        env = dict(self.lenient_env, PATH=path, STAND_IN_LOG=log)
        r = subprocess.run(["bash", os.path.join(tree, ".ci", "run")], env=env, capture_output=True, text=True,
                           timeout=120)
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 1, out)
        self.assertIn("mold (ld.mold) (Debian package mold", missing_section(r.stderr), out)
        self.assertIn("ROSTER_STRICT_TOOLS=1", r.stderr, out)
        self.assertFalse(os.path.exists(log), "the run went on past the tool check:\n" + out)
        # The same PATH in a local scripts/test: lenient, mold is only noted and the run goes on (to meson,
        # stood in for, which stops it).
        r = subprocess.run(["bash", os.path.join(tree, "scripts", "test")], env=env, capture_output=True,
                           text=True, timeout=120)
        out = r.stdout + r.stderr
        self.assertNotIn("mold", missing_section(r.stderr), out)
        self.assertRegex(r.stderr, r"check-tools: note: .*\n(  .*\n)*  mold \(ld.mold\) \(Debian package mold", out)
        if not missing_section(r.stderr):
            with open(log) as f:
                self.assertIn("meson setup", f.read(), out)

    def test_check_tools_names_each_toolchain_tool(self):
        path = path_without(os.path.join(self.tmp, "bin"), ["mold", "ld.mold", "ld.gold", "cmake", "mpirun"])
        env = dict(self.lenient_env, PATH=path, ROSTER_STRICT_TOOLS="1")
        r = subprocess.run([os.path.join(ROOT, "scripts", "check-tools")], env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        missing = missing_section(r.stderr)
        for want in ("mold (ld.mold) (Debian package mold", "ld.gold (Debian package binutils",
                     "cmake (Debian package cmake", "mpirun (Debian package openmpi-bin"):
            self.assertIn(want, missing, r.stderr)
        self.assertIn("Fix: ", r.stderr)

    def write_skip_log(self):
        build = os.path.join(self.tmp, "build")
        os.makedirs(os.path.join(build, "meson-logs"))
        with open(os.path.join(build, "meson-logs", "testlog.json"), "w") as f:
            f.write(json.dumps({"name": "roster:inventory / inventory-link-mold-gc-sections", "result": "SKIP",
                                "stdout": "SKIP: GCC 12.2.0 cannot link with -fuse-ld=mold (ld.mold missing?)\n"})
                    + "\n")
            f.write(json.dumps({"name": "roster:consumers / consumers-wrap", "result": "SKIP",
                                "stdout": "SKIP: not a git repository\n"}) + "\n")
            f.write(json.dumps({"name": "roster:t / t0", "result": "OK", "stdout": ""}) + "\n")
        return build

    def test_summary_fails_a_toolchain_skip_under_strict(self):
        build = self.write_skip_log()
        r = subprocess.run([sys.executable, SUMMARY, build], env=self.lenient_env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("[toolchain skip: mold (Debian package mold)]", r.stdout)
        self.assertEqual(closing_count(r.stdout), (1, 0, 2), r.stdout)
        for how in (dict(env=dict(self.lenient_env, ROSTER_STRICT_TOOLS="1"), args=[]),
                    dict(env=self.lenient_env, args=["--strict-tools"])):
            r = subprocess.run([sys.executable, SUMMARY] + how["args"] + [build], env=how["env"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn("not allowed under ROSTER_STRICT_TOOLS=1: mold (Debian package mold) is missing: "
                          "build/inventory-link-mold-gc-sections", r.stdout)
            self.assertNotIn("is missing: build/consumers-wrap", r.stdout)  # not a toolchain skip

    def test_every_toolchain_skip_names_its_tool(self):
        with open(os.path.join(ROOT, "tests", "skips.txt")) as f:
            lines = [line.split("|") for line in f if not line.startswith("#") and "|" in line]
        tools = {fields[0].strip(): fields[2].strip() for fields in lines if len(fields) == 3}
        for name in ("inventory-link-mold-gc-sections", "inventory-link-gold-gc-sections",
                     "inventory-link-lld-gc-sections", "inventory-link-lto", "inventory-clang-lld",
                     "vulkan_validation", "devices_mpirun_bind", "tools_bind_mpirun", "consumers-cmake",
                     "consumers-pkg-config"):
            self.assertRegex(tools.get(name, ""), r"^tool: .+\(Debian package", f"{name}: no tool in tests/skips.txt")

    def test_linker_matrix_fails_a_missing_compiler_under_strict(self):
        path = path_without(os.path.join(self.tmp, "bin"), ["clang++*"])
        r = subprocess.run([MATRIX, "--only", "clang++:lld"], env=dict(self.lenient_env, PATH=path),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        r = subprocess.run([MATRIX, "--only", "clang++:lld"], env=dict(self.lenient_env, PATH=path,
                                                                       ROSTER_STRICT_TOOLS="1"),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^clang\+\+ +\* +plain +FAIL \(ROSTER_STRICT_TOOLS=1: clang\+\+ not installed")

    def test_windows_fails_a_skipped_part_under_strict(self):
        path = path_without(os.path.join(self.tmp, "bin"), ["clang++*", "x86_64-w64-mingw32-*"])
        build = os.path.join(self.tmp, "build-windows")
        r = subprocess.run([sys.executable, WINDOWS, "--build-dir", build], env=dict(self.lenient_env, PATH=path),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        r = subprocess.run([sys.executable, WINDOWS, "--build-dir", build],
                           env=dict(self.lenient_env, PATH=path, ROSTER_STRICT_TOOLS="1"),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("skipped: Wine: no MinGW-w64 g++ (Debian: g++-mingw-w64-x86-64-posix)", r.stdout)
        self.assertIn("test-windows: FAIL: ROSTER_STRICT_TOOLS=1", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
