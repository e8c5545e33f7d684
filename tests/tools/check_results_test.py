#!/usr/bin/env python3
"""scripts/check-results on throwaway git trees: a README that cites a
results folder passes only when the folder holds raw data and a meta.json
naming a commit of the tree, clean or with its diff's hash; a missing
meta.json, a bare "+changes", a short or unknown commit, BabelStream without
its commit, flags and build log, and a cited path that does not exist fail,
each naming what is missing and ending in a Fix line."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check-results")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class CheckResults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="check-results-")
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@t")
        self.env = env
        self.git("init", "-q")
        write(self.path("src.txt"), "code\n")
        self.git("add", "src.txt")
        self.git("commit", "-q", "-m", "first")
        self.head = self.git("rev-parse", "HEAD").stdout.strip()
        self.run_dir = self.path("bench/results/node-2026-12-04")
        write(os.path.join(self.run_dir, "rounds.json"), '{"rounds": [1.0, 1.1]}\n')
        write(self.path("README.md"), "Triad: 4 TB/s (`bench/results/node-2026-12-04/rounds.json`).\n")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def path(self, rel):
        return os.path.join(self.tmp, rel)

    def git(self, *args):
        return subprocess.run(["git", "-C", self.tmp] + list(args), capture_output=True, text=True,
                              env=self.env, check=True)

    def meta(self, **fields):
        write(os.path.join(self.run_dir, "meta.json"), json.dumps(fields))

    def check(self):
        r = subprocess.run([sys.executable, SCRIPT, self.tmp], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def assert_fails(self, *needles):
        rc, out = self.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL: bench/results/node-2026-12-04 (cited at README.md:1)", out)
        self.assertIn("Fix:", out.splitlines()[-1])
        for n in needles:
            self.assertIn(n, out)

    def test_complete_folder_passes(self):
        self.meta(roster_commit=self.head, roster_tree="clean")
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.meta(roster_commit=self.head, roster_diff_sha256="a" * 64)
        rc, out = self.check()
        self.assertEqual(rc, 0, out)

    def test_missing_meta_fails(self):
        self.assert_fails("lacks meta.json")

    def test_bare_changes_fails(self):
        self.meta(roster_commit=self.head[:7] + "+changes")
        self.assert_fails('not a bare "+changes"', "full 40-hex commit")
        self.meta(roster_commit=self.head, roster_tree="clean", note=self.head[:7] + "+changes")
        self.assert_fails('not a bare "+changes"')

    def test_dirty_tree_without_hash_fails(self):
        self.meta(roster_commit=self.head, roster_tree="plus uncommitted changes")
        self.assert_fails("roster_diff_sha256")

    def test_unknown_commit_fails(self):
        self.meta(roster_commit="0" * 40, roster_tree="clean")
        self.assert_fails("in this repository's history")

    def test_no_raw_data_fails(self):
        os.remove(os.path.join(self.run_dir, "rounds.json"))
        write(os.path.join(self.run_dir, "check.md"), "4 TB/s\n")
        write(self.path("README.md"), "Triad: 4 TB/s (`bench/results/node-2026-12-04/`).\n")
        self.meta(roster_commit=self.head, roster_tree="clean")
        self.assert_fails("raw data")

    def test_babelstream_needs_commit_flags_and_log(self):
        write(os.path.join(self.run_dir, "compare.txt"), "roster / BabelStream 1.01\n")
        self.meta(roster_commit=self.head, roster_tree="clean")
        self.assert_fails('"babelstream_commit"', '"babelstream_cmake_flags"', "build log")
        self.meta(roster_commit=self.head, roster_tree="clean", babelstream_commit="b" * 40,
                  babelstream_cmake_flags="-DMODEL=cuda -DCMAKE_BUILD_TYPE=Release")
        write(os.path.join(self.run_dir, "bs-build.log"), "built\n")
        rc, out = self.check()
        self.assertEqual(rc, 0, out)

    def test_relative_citations_and_missing_folder(self):
        write(self.path("docs/guide.md"), "See [run](../bench/results/node-2026-12-05/).\n")
        rc, out = self.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("bench/results/node-2026-12-05 (cited at docs/guide.md:1): does not exist", out)

    def test_marked_record_is_listed_not_failed(self):
        write(self.path("README.md"), "Triad: 4 TB/s (`bench/results/node-2026-12-04/`; a record,\n"
              "not re-derivable: no meta.json).\n")
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("record: bench/results/node-2026-12-04", out)

    def test_outside_git_is_skipped(self):
        shutil.rmtree(self.path(".git"))
        rc, out = self.check()
        self.assertEqual(rc, 77, out)


if __name__ == "__main__":
    unittest.main()
