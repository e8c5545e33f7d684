#!/usr/bin/env python3
"""scripts/check-results on throwaway git trees: a README that cites a
results folder passes only when the folder holds raw data and a meta.json
naming a commit of the tree, clean or with its diff's hash; a missing
meta.json, a bare "+changes", a short or unknown commit, BabelStream without
its commit, flags and build log, and a cited path that does not exist fail,
each naming what is missing and ending in a Fix line. A cited bench-check
results file is its own meta: a short commit or "+changes" fails, the full
commit with the tree clean or hashed passes, and an older one passes only
where the citing prose says it is not re-derivable. scripts/provenance.py,
which bench-check and gpu-stream-compare record the tree with, names a
clean tree "clean" and hashes a dirty one's diff and untracked files."""
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

    def results_file(self, **fields):
        write(self.path("bench/results/vm-2026-12-04.json"), json.dumps(dict(kind="bench-check", **fields)))
        write(self.path("README.md"), "CPU rows: `bench/results/vm-2026-12-04.json`.\n")

    def assert_file_fails(self, *needles):
        rc, out = self.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL: bench/results/vm-2026-12-04.json (cited at README.md:1)", out)
        self.assertIn("Fix:", out.splitlines()[-1])
        for n in needles:
            self.assertIn(n, out)

    def test_results_file_needs_the_full_commit_and_the_tree(self):
        self.results_file(commit=self.head, roster_tree="clean")
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.results_file(commit=self.head, roster_tree="dirty: 1 tracked files changed", roster_diff_sha256="c" * 64)
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.results_file(commit=self.head[:7])
        self.assert_file_fails('"commit" as a full 40-hex commit')
        self.results_file(commit=self.head[:7] + "+changes")
        self.assert_file_fails('not a bare "+changes"')
        self.results_file(commit=self.head)
        self.assert_file_fails('"roster_tree": "clean" or "roster_diff_sha256"')
        self.results_file(commit="1" * 40, roster_tree="clean")
        self.assert_file_fails("in this repository's history")

    def test_older_results_file_marked_is_listed(self):
        self.results_file(commit=self.head[:7])
        write(self.path("README.md"), "CPU rows (not re-derivable: a short commit):\n\n"
              "`bench/results/vm-2026-12-04.json`.\n")
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("record: bench/results/vm-2026-12-04.json", out)

    def test_provenance_names_the_tree(self):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import provenance
        write(self.path(".gitignore"), "ignored.txt\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "results")
        head = self.git("rev-parse", "HEAD").stdout.strip()
        self.assertEqual(provenance.tree(self.tmp), {"roster_commit": head, "roster_tree": "clean"})
        write(self.path("ignored.txt"), "build output\n")
        self.assertEqual(provenance.tree(self.tmp)["roster_tree"], "clean")  # ignored files are no change
        write(self.path("src.txt"), "code changed\n")
        edited = provenance.tree(self.tmp)
        self.assertEqual(edited["roster_commit"], head)
        self.assertTrue(edited["roster_tree"].startswith("dirty: 1 tracked files changed, 0 untracked"), edited)
        self.assertRegex(edited["roster_diff_sha256"], r"^[0-9a-f]{64}$")
        self.assertEqual(provenance.tree(self.tmp), edited)  # the same tree, the same hash
        write(self.path("new.txt"), "one\n")
        with_new = provenance.tree(self.tmp)
        self.assertNotEqual(with_new["roster_diff_sha256"], edited["roster_diff_sha256"])
        write(self.path("new.txt"), "two\n")  # an untracked file's content counts, not only its name
        self.assertNotEqual(provenance.tree(self.tmp)["roster_diff_sha256"], with_new["roster_diff_sha256"])
        self.assertEqual(provenance.shown(head), head[:7])
        self.assertEqual(provenance.shown(head, "d" * 64), head[:7] + " plus changes (diff sha256 dddddddddddd)")
        self.assertEqual(provenance.shown("b15e044"), "b15e044")
        self.assertEqual(provenance.tree(tempfile.gettempdir())["roster_commit"], "unknown")

    def test_outside_git_is_skipped(self):
        shutil.rmtree(self.path(".git"))
        rc, out = self.check()
        self.assertEqual(rc, 77, out)


if __name__ == "__main__":
    unittest.main()
