#!/usr/bin/env python3
"""The gates on synthetic result files, each of which must fail: a figure
that misses inside its spread (bench-check: re-measure, settled on the first
run and the re-measure pooled), a row not run, a gtest binary with zero cases, one
partly skipped, a benchmark that errored; the allow-list that lets a named
skip through with its reason (never a FAIL); like-for-like labels and the
added cost at 16 elements in bench-check; test-summary's zero-case rule; and
scripts/gpu-check itself, run on a fake build folder."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GATE = os.path.join(ROOT, "scripts", "gpu-gate")
BENCH_CHECK = os.path.join(ROOT, "scripts", "bench-check")


def run(*args, env=None, cwd=None):
    r = subprocess.run(list(args), capture_output=True, text=True, env=dict(os.environ, **(env or {})), cwd=cwd)
    return r.returncode, r.stdout + r.stderr


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def line(out, start):
    for l in out.splitlines():
        if l.startswith(start):
            return l
    raise AssertionError(f"no line starting {start!r} in:\n{out}")


def gtest_log(ok=(), skipped=(), failed=(), summary=True):
    """gtest's --gtest_color=no output for these cases."""
    lines = [f"[==========] Running {len(ok) + len(skipped) + len(failed)} tests from 1 test suite."]
    for c in ok:
        lines += [f"[ RUN      ] {c}", f"[       OK ] {c} (1 ms)"]
    for c in skipped:
        lines += [f"[ RUN      ] {c}", "tests/x.cpp:10: Skipped", "needs the validation layer", "",
                  f"[  SKIPPED ] {c} (0 ms)"]
    for c in failed:
        lines += [f"[ RUN      ] {c}", "tests/x.cpp:12: Failure", f"[  FAILED  ] {c} (2 ms)"]
    if summary:
        lines.append(f"[==========] {len(ok) + len(skipped) + len(failed)} tests from 1 test suite ran. (5 ms total)")
        lines.append(f"[  PASSED  ] {len(ok)} tests.")
    return "\n".join(lines) + "\n"


class Gate(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gates-")
        self.addCleanup(shutil.rmtree, self.dir)
        self.rows = os.path.join(self.dir, "rows.jsonl")
        self.allow = os.path.join(self.dir, "allow.txt")
        write(self.allow, "")

    def gtest(self, name, text, rc=0):
        log = os.path.join(self.dir, name + ".log")
        write(log, text)
        r, out = run(sys.executable, GATE, "gtest", self.rows, name, log, str(rc))
        self.assertEqual(r, 0, out)

    def table(self):
        return run(sys.executable, GATE, "table", "--allow", self.allow, self.rows)

    def test_every_case_passing_passes(self):
        self.gtest("cuda_device", gtest_log(ok=["a.one", "a.two"]))
        rc, out = self.table()
        self.assertEqual(rc, 0, out)
        self.assertRegex(line(out, "cuda_device"), r"PASS +2 passed$")
        self.assertIn("1 pass, 0 allowed, 0 FAIL", out)

    def test_zero_cases_fail(self):
        self.gtest("kernels_cuda", gtest_log())
        rc, out = self.table()
        self.assertEqual(rc, 1, out)
        self.assertRegex(line(out, "kernels_cuda"), r"FAIL +ZERO: ran no case")
        # No summary at all (a binary that printed nothing and exited 0): zero too.
        os.unlink(self.rows)
        self.gtest("kernels_cuda", "", rc=0)
        rc, out = self.table()
        self.assertEqual(rc, 1, out)
        self.assertIn("ZERO: ran no case", line(out, "kernels_cuda"))

    def test_partial_skip_fails_unless_every_skipped_case_is_allowed(self):
        self.gtest("vulkan_native", gtest_log(ok=["vulkan_native.a", "vulkan_native.b"],
                                              skipped=["vulkan_native_sync.x", "vulkan_native_sync.y"]))
        rc, out = self.table()
        self.assertEqual(rc, 1, out)
        self.assertRegex(line(out, "vulkan_native"), r"FAIL +PARTIAL: 2 passed, 2 skipped")
        self.assertIn("Fix: make the skipped or unrun rows run on this node", out)
        # One of the two cases allowed: still a failure.
        write(self.allow, "vulkan_native:vulkan_native_sync.x | needs the layer\n")
        rc, out = self.table()
        self.assertEqual(rc, 1, out)
        # Both: allowed, and the entry is printed with its reason.
        write(self.allow, "vulkan_native:vulkan_native_sync.* | needs the validation layer, not on the node\n")
        rc, out = self.table()
        self.assertEqual(rc, 0, out)
        self.assertRegex(line(out, "vulkan_native"), r"ALLOWED +PARTIAL")
        self.assertIn("vulkan_native:vulkan_native_sync.* | needs the validation layer, not on the node", out)

    def test_whole_skip_fails(self):
        self.gtest("cuda_device", gtest_log(skipped=["CudaDevice.Opens", "CudaDevice.Ops"]))
        rc, out = self.table()
        self.assertEqual(rc, 1, out)
        self.assertRegex(line(out, "cuda_device"), r"FAIL +SKIP: all 2 cases skipped: needs the validation layer")

    def test_a_failure_is_never_allowed(self):
        self.gtest("cuda_device", gtest_log(ok=["a.one"], failed=["a.two"]), rc=1)
        write(self.allow, "cuda_device | would hide a failure\ncuda_device:* | would hide a failure\n")
        rc, out = self.table()
        self.assertEqual(rc, 1, out)
        self.assertRegex(line(out, "cuda_device"), r"FAIL +exit 1, 1 failed: a\.two")

    def test_not_run_and_missing_fail_unless_allowed(self):
        for name, result in (("stream-compare", "NOT RUN"), ("cuda_native", "MISSING"), ("placement masks", "SKIP")):
            run(sys.executable, GATE, "row", self.rows, name, result, "why")
        rc, out = self.table()
        self.assertEqual(rc, 1, out)
        self.assertRegex(line(out, "stream-compare"), r"FAIL +NOT RUN: why")
        self.assertRegex(line(out, "cuda_native"), r"FAIL +MISSING: why")
        write(self.allow, "placement * | needs two GPUs\n")
        rc, out = self.table()
        self.assertEqual(rc, 1, out)
        self.assertRegex(line(out, "placement masks"), r"ALLOWED +SKIP")
        # An entry without its reason is refused.
        write(self.allow, "stream-compare\n")
        rc, out = self.table()
        self.assertNotEqual(rc, 0, out)
        self.assertIn("Fix: give every allowed row its reason", out)

    def test_benchmark_errors_and_empty_runs_fail(self):
        path = os.path.join(self.dir, "b.json")
        write(path, json.dumps({"benchmarks": [
            {"name": "BM_op<float>/0", "GBps": 1.0},
            {"name": "BM_op<float>/1", "error_occurred": True, "error_message": "no CUDA device"}]}))
        run(sys.executable, GATE, "gbench", self.rows, "cuda_stream_bench", path, "0")
        write(path.replace("b.json", "c.json"), json.dumps({"benchmarks": []}))
        run(sys.executable, GATE, "gbench", self.rows, "vulkan_stream_bench", path.replace("b.json", "c.json"), "0")
        rc, out = self.table()
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL     1 of 2 benchmarks errored: BM_op<float>/1: no CUDA device", line(out, "cuda_stream_bench"))
        self.assertIn("ZERO: ran no benchmark", line(out, "vulkan_stream_bench"))

    def results(self, tool, rows):
        path = os.path.join(self.dir, tool + ".json")
        write(path, json.dumps({"rows": rows}))
        r, out = run(sys.executable, GATE, "results", self.rows, "bench" if tool == "bench-check" else "stream", tool, path)
        self.assertEqual(r, 0, out)

    def test_within_spread_and_not_run_figures_fail(self):
        self.results("bench-check", [
            {"id": "tuned-cuda-best", "verdict": "pass", "ratio": 1.0, "spread": 0.01},
            {"id": "tuned-cuda-default", "verdict": "re-measure", "ratio": 0.99, "spread": 0.02,
             "reason": "misses by 1.0%, within the spread 2.0%: re-measure with more interleaved rounds"},
            {"id": "kernel-call-added", "verdict": "pass on re-measure", "ratio": None, "spread": 0.1, "shown": 0.03,
             "unit": "us", "reason": "first run missed by 2.0% within its spread"},
            {"id": "stencil-cuda-plain", "verdict": "not run", "reason": "needs a CUDA GPU: nvidia-smi lists no GPU"}])
        self.results("gpu-stream-compare", [
            {"what": "CUDA float copy: roster / BabelStream", "verdict": "re-measure", "ratio": 0.985, "spread": 0.02,
             "reason": "misses by 0.5%, within the spread 2.0%"}])
        rc, out = self.table()
        self.assertEqual(rc, 1, out)
        self.assertRegex(line(out, "bench tuned-cuda-best"), r"PASS")
        self.assertRegex(line(out, "bench tuned-cuda-default"), r"FAIL +re-measure: misses by 1\.0%")
        self.assertRegex(line(out, "bench kernel-call-added"), r"PASS +pass on re-measure")
        self.assertRegex(line(out, "bench stencil-cuda-plain"), r"FAIL +NOT RUN: needs a CUDA GPU")
        self.assertRegex(line(out, "stream CUDA float copy"), r"FAIL +re-measure")
        self.assertIn("2 pass, 0 allowed, 3 FAIL", out)

    def test_a_shown_row_is_neither_a_pass_nor_a_failure(self):
        # decision-start-cuda is measured and shown beside the gated default
        # row; gpu-check's table failed it on the H200 (2026-12-04) as if judged.
        self.results("bench-check", [
            {"id": "decision-start-default", "verdict": "pass", "ratio": 1.05, "spread": 0.02},
            {"id": "decision-start-cuda", "verdict": "shown", "ratio": 1.06, "spread": 0.061}])
        rc, out = self.table()
        self.assertEqual(rc, 0, out)
        self.assertRegex(line(out, "bench decision-start-cuda"),
                         r"SHOWN +measured and shown beside its baseline, not judged \(ratio 1\.060, spread 6\.1%\)")
        self.assertIn("1 pass, 1 shown (measured, not judged), 0 allowed, 0 FAIL", out)

    def test_checked_in_allow_list_parses_and_allows_no_failure(self):
        run(sys.executable, GATE, "row", self.rows, "placement two-GPU placement", "SKIP", "needs two GPUs, nvidia-smi lists 1")
        run(sys.executable, GATE, "row", self.rows, "cuda_device", "FAIL", "exit 1")
        rc, out = run(sys.executable, GATE, "table", "--allow", os.path.join(ROOT, "bench", "gpu-allow.txt"), self.rows)
        self.assertEqual(rc, 1, out)
        self.assertRegex(line(out, "placement two-GPU placement"), r"ALLOWED")
        # The one-GPU checks run on every node: one that did not run is not allowed.
        run(sys.executable, GATE, "row", self.rows, "placement CUDA_VISIBLE_DEVICES=-1", "SKIP", "not run")
        rc, out = run(sys.executable, GATE, "table", "--allow", os.path.join(ROOT, "bench", "gpu-allow.txt"), self.rows)
        self.assertRegex(line(out, "placement CUDA_VISIBLE_DEVICES=-1"), r"FAIL")
        self.assertRegex(line(out, "cuda_device"), r"FAIL")


class BenchCheckRules(unittest.TestCase):
    """bench-check's rules that the gates rely on, on synthetic results."""

    def judge(self, figures, benchmarks, remeasured=None):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        tf, rf = os.path.join(tmp, "targets.json"), os.path.join(tmp, "results.json")
        write(tf, json.dumps({"programs": {"p": {"exe": "bench/x"}}, "figures": figures}))
        doc = {"kind": "bench-check", "rows": [], "programs": {"p": {"returncode": 0, "benchmarks": benchmarks}}}
        if remeasured is not None:
            doc["remeasured"] = {"p": {"returncode": 0, "benchmarks": remeasured}}
            doc["remeasure_reps"] = 15
        write(rf, json.dumps(doc))
        return run(sys.executable, BENCH_CHECK, "--evaluate", rf, "--targets", tf)

    @staticmethod
    def reps(name, values, label=None, key="GB/s"):
        return [dict({"name": name, "run_name": name, "run_type": "iteration", key: v},
                     **({"label": label} if label is not None else {})) for v in values]

    RATIO = [{"id": "cached-add", "what": "CPU add like for like", "program": "p", "figure": "roster/add",
              "baseline": "openmp/add", "metric": "GB/s", "compare": "ratio_min", "limit": 1.0, "same_label": True}]

    def test_like_for_like_labels(self):
        rc, out = self.judge(self.RATIO, self.reps("roster/add", [150] * 5, "isa=avx2") +
                             self.reps("openmp/add", [140] * 5, "isa=avx2"))
        self.assertEqual(rc, 0, out)
        self.assertRegex(line(out, "CPU add like for like"), r"\[both: isa=avx2\] .* pass$")
        rc, out = self.judge(self.RATIO, self.reps("roster/add", [150] * 5, "isa=avx2") +
                             self.reps("openmp/add", [140] * 5, "isa=sse2"))
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (not like for like: 'isa=avx2' against 'isa=sse2')", line(out, "CPU add like for like"))
        rc, out = self.judge(self.RATIO, self.reps("roster/add", [150] * 5) + self.reps("openmp/add", [140] * 5))
        self.assertEqual(rc, 1, out)
        self.assertIn("a side names no code path", line(out, "CPU add like for like"))

    def test_like_for_like_by_one_item_of_the_labels(self):
        # The streaming rows: roster's label also names its stores; only the
        # isa= items must agree.
        fig = [dict(self.RATIO[0], what="CPU add streaming", same_label="isa")]
        rc, out = self.judge(fig, self.reps("roster/add", [150] * 5, "isa=avx2, 32-byte streaming stores") +
                             self.reps("openmp/add", [140] * 5, "isa=avx2"))
        self.assertEqual(rc, 0, out)
        self.assertRegex(line(out, "CPU add streaming"), r"pass$")
        rc, out = self.judge(fig, self.reps("roster/add", [150] * 5, "isa=sse2, 16-byte streaming stores") +
                             self.reps("openmp/add", [140] * 5, "isa=avx2"))
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (not like for like: 'isa=sse2, 16-byte streaming stores' against 'isa=avx2')",
                      line(out, "CPU add streaming"))
        rc, out = self.judge(fig, self.reps("roster/add", [150] * 5, "32-byte streaming stores") +
                             self.reps("openmp/add", [140] * 5, "isa=avx2"))
        self.assertEqual(rc, 1, out)
        self.assertIn("a side's label names no isa=", line(out, "CPU add streaming"))
        # The whole-label rows stay whole: the same pair fails there.
        rc, out = self.judge(self.RATIO, self.reps("roster/add", [150] * 5, "isa=avx2, 32-byte streaming stores") +
                             self.reps("openmp/add", [140] * 5, "isa=avx2"))
        self.assertEqual(rc, 1, out)

    def test_a_miss_within_the_spread_is_settled_by_the_remeasure(self):
        first = self.reps("roster/add", [130, 138, 150, 136, 145], "isa=avx2") + \
            self.reps("openmp/add", [140, 141, 139, 150, 138], "isa=avx2")
        rc, out = self.judge(self.RATIO, first)
        self.assertEqual(rc, 1, out)
        self.assertIn("re-measure (misses by", line(out, "CPU add like for like"))
        rc, out = self.judge(self.RATIO, first, self.reps("roster/add", [145] * 15, "isa=avx2") +
                             self.reps("openmp/add", [140] * 15, "isa=avx2"))
        self.assertEqual(rc, 0, out)
        self.assertIn("pass on re-measure (the first run's 5 repetitions and the re-measure's 15 pooled: passes by 3.6%, "
                      "beyond the spread 0.0%; the first run alone missed by", line(out, "CPU add like for like"))
        rc, out = self.judge(self.RATIO, first, self.reps("roster/add", [139.5] * 15, "isa=avx2") +
                             self.reps("openmp/add", [140] * 15, "isa=avx2"))
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (the first run's 5 repetitions and the re-measure's 15 pooled: misses by 0.4%, beyond the "
                      "spread 0.0%", line(out, "CPU add like for like"))

    def test_added_cost_at_16_elements(self):
        fig = [{"id": "static-16", "what": "static call at 16", "program": "p", "figure": "K/16", "baseline": "K/16",
                "metric": "static_ns", "baseline_metric": "direct_ns", "compare": "difference_max", "limit": 25,
                "unit": "ns"}]

        def reps(static):
            return [{"name": "K/16", "run_name": "K/16", "run_type": "iteration", "static_ns": s, "direct_ns": 3.9}
                    for s in static]
        rc, out = self.judge(fig, reps([16.2, 16.0, 15.9, 16.3, 15.8]))
        self.assertEqual(rc, 0, out)
        self.assertRegex(line(out, "static call at 16"), r"\+12\.1 ns +3\.9 ns +- +added <= 25 ns .* pass$")
        # Twice the measured cost fails.
        rc, out = self.judge(fig, reps([31.0, 30.5, 31.2, 30.8, 31.1]))
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (misses by", line(out, "static call at 16"))


class BenchCheckCiRows(unittest.TestCase):
    """bench-check --ci-rows on stand-in programs: the rows the file runs are
    measured and judged; every other row is left out by name ("not run",
    allowed, with its reason); a row the file neither runs nor leaves fails,
    and so does a run row that fails. The results file names roster's tree by
    its full commit (scripts/provenance.py), never "+changes"."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bench-ci-")
        self.addCleanup(shutil.rmtree, self.tmp)
        os.makedirs(os.path.join(self.tmp, "build", "bench"))
        for name, rc in (("ok", 0), ("bad", 1)):
            path = os.path.join(self.tmp, "build", "bench", name)
            write(path, f"#!/bin/sh\nexit {rc}\n")
            os.chmod(path, 0o755)
        self.targets = os.path.join(self.tmp, "targets.json")
        write(self.targets, json.dumps({"programs": {"ok": {"exe": "bench/ok", "format": "exit"},
                                                     "bad": {"exe": "bench/bad", "format": "exit"}},
                                        "figures": [{"id": "quick-row", "what": "quick", "program": "ok",
                                                     "compare": "exit_zero"},
                                                    {"id": "slow-row", "what": "slow", "program": "bad",
                                                     "compare": "exit_zero"}]}))
        self.rows = os.path.join(self.tmp, "ci-rows.txt")
        self.out = os.path.join(self.tmp, "out.json")

    def check(self, rows_text):
        write(self.rows, rows_text)
        return run(sys.executable, BENCH_CHECK, "--no-build", "--build-dir", os.path.join(self.tmp, "build"),
                   "--targets", self.targets, "--ci-rows", self.rows, "--out", self.out)

    def test_left_out_by_name_passes_and_is_said(self):
        rc, out = self.check("# CI\nrun quick-row\nleave slow-* too noisy on two cores\n")
        self.assertEqual(rc, 0, out)
        self.assertIn("1 pass, 0 pass on re-measure, 0 re-measure, 0 inconclusive, 0 FAIL, 1 not run", out)
        self.assertIn("too noisy on two cores", out)
        with open(self.out) as f:
            doc = json.load(f)
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        self.assertEqual(doc["commit"], head)
        self.assertTrue(doc["roster_tree"] == "clean" or len(doc["roster_diff_sha256"]) == 64, doc["roster_tree"])
        self.assertEqual([r["verdict"] for r in doc["rows"]], ["pass", "not run"])
        # Its table shows the commit's first 7 digits (and the diff hash's start on a dirty tree),
        # and, naming its tree, never calls itself not re-derivable.
        rc, md = run(sys.executable, BENCH_CHECK, "--markdown", self.out)
        self.assertEqual(rc, 0, md)
        self.assertIn(f"commit {head[:7]}" + (" plus changes (diff sha256 " if doc["roster_tree"] != "clean" else ","), md)
        self.assertNotIn("not re-derivable", md)
        doc["commit"] = head[:7]  # as bench-check wrote it before it named the tree
        doc.pop("roster_tree")
        doc.pop("roster_diff_sha256", None)
        write(self.out, json.dumps(doc))
        rc, md = run(sys.executable, BENCH_CHECK, "--markdown", self.out)
        self.assertIn("so it is not re-derivable in full", md)

    def test_a_row_neither_run_nor_left_fails(self):
        rc, out = self.check("run quick-row\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("neither runs nor leaves this row. Fix: add 'run slow-row'", out)

    def test_a_failing_run_row_fails(self):
        rc, out = self.check("run *-row\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("1 pass, 0 pass on re-measure, 0 re-measure, 0 inconclusive, 1 FAIL, 0 not run", out)

    def test_a_malformed_line_is_refused(self):
        rc, out = self.check("leave slow-row\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("Fix: write 'run ID-PATTERN' or 'leave ID-PATTERN why it is left out'", out)


class TestSummaryZeroCases(unittest.TestCase):
    def test_a_gtest_binary_that_ran_no_case_fails(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        os.makedirs(os.path.join(tmp, "build", "meson-logs"))
        with open(os.path.join(tmp, "build", "meson-logs", "testlog.json"), "w") as f:
            f.write(json.dumps({"name": "roster / kernels_cuda", "result": "OK", "stdout": gtest_log()}) + "\n")
            f.write(json.dumps({"name": "roster / tools", "result": "OK", "stdout": gtest_log(ok=["a.b"])}) + "\n")
        skips = os.path.join(tmp, "skips.txt")
        write(skips, "")
        rc, out = run(sys.executable, os.path.join(ROOT, "scripts", "test-summary"), "--skips", skips,
                      os.path.join(tmp, "build"))
        self.assertEqual(rc, 1, out)
        self.assertIn("ran no case: build/kernels_cuda", out)
        self.assertEqual(out.strip().splitlines()[-1], "1 passed, 1 failed, 0 skipped")


class GpuCheck(unittest.TestCase):
    """scripts/gpu-check on a fake build folder: shell scripts stand in for the
    test binaries, no GPU, no BabelStream. The table comes last and fails."""

    def test_fake_build_fails_with_every_reason_in_the_table(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        build = os.path.join(tmp, "build")
        tb = os.path.join(build, "tests", "backends")
        os.makedirs(tb)

        def fake(path, text, rc=0):
            with open(path, "w") as f:
                f.write("#!/bin/sh\ncat <<'EOF'\n" + text + "EOF\nexit %d\n" % rc)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        fake(os.path.join(tb, "backends_ops_test"), gtest_log(ok=["ops.cpu"], skipped=["ops.cuda_0"]))
        fake(os.path.join(tb, "cuda_device_test"), gtest_log(ok=["CudaDevice.Opens"]))
        fake(os.path.join(tb, "cuda_native_test"), gtest_log())
        fake(os.path.join(tb, "cuda_nodevice_test"), gtest_log(ok=["NoDevice.Error"]))
        out = os.path.join(tmp, "out")
        allow = os.path.join(tmp, "allow.txt")
        write(allow, "")
        # No GPU, even on a GPU node: an nvidia-smi that lists none.
        os.makedirs(os.path.join(tmp, "bin"))
        fake(os.path.join(tmp, "bin", "nvidia-smi"), "", rc=9)
        # The one-file part compiles roster with every backend (about 45 s a
        # run here); its own tests are GpuCheckOneFile's, so it is left out.
        env = {"OUT": out, "GPU_CHECK_SANITIZE": "0", "GPU_CHECK_VULKAN": "0", "GPU_CHECK_PLACEMENT": "0",
               "GPU_CHECK_ONE_FILE": "0",
               "GPU_CHECK_VULKAN_LOADER": "0", "GPU_CHECK_OPENCL_LOADER": "0",
               "GPU_CHECK_ALLOW": allow, "BABELSTREAM_BIN": "", "BABELSTREAM_COMMIT": "",
               "PATH": os.path.join(tmp, "bin") + ":/usr/bin:/bin:" + os.path.dirname(sys.executable)}
        r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-check"), build], capture_output=True,
                           text=True, env=dict(os.environ, **env))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        table = r.stdout[r.stdout.index("gpu-check "):]
        self.assertRegex(line(table, "backends_ops_test"), r"FAIL +PARTIAL: 1 passed, 1 skipped")
        self.assertRegex(line(table, "cuda_device"), r"PASS +1 passed")
        self.assertRegex(line(table, "cuda_native"), r"FAIL +ZERO: ran no case")
        self.assertRegex(line(table, "kernels_cuda"), r"FAIL +MISSING: .*kernels_cuda_test not built")
        self.assertRegex(line(table, "sanitizers"), r"FAIL +NOT RUN: GPU_CHECK_SANITIZE=0")
        self.assertRegex(line(table, "cuda_stream_bench"), r"FAIL +MISSING")
        self.assertRegex(line(table, "stream-compare"), r"FAIL +NOT RUN: BABELSTREAM_BIN and BABELSTREAM_COMMIT are not set")
        self.assertRegex(line(table, "nvidia-smi"), r"FAIL")
        self.assertRegex(line(table, "opencl "), r"FAIL +MISSING: tests/backends/opencl_backend_test not built")
        self.assertRegex(line(table, "one-file"), r"FAIL +NOT RUN: GPU_CHECK_ONE_FILE=0")
        self.assertRegex(table.strip().splitlines()[-2], r"^\d+ pass, 0 allowed, \d+ FAIL$")

        # A time budget spent: the parts that would start later are NOT RUN rows, and the table still comes.
        with open(os.path.join(tb, "cuda_device_test"), "w") as f:
            f.write("#!/bin/sh\nsleep 2\ncat <<'EOF'\n" + gtest_log(ok=["CudaDevice.Opens"]) + "EOF\n")
        env.update(GPU_CHECK_BUDGET_S="1", GPU_CHECK_SANITIZE="1")
        r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-check"), build], capture_output=True,
                           text=True, env=dict(os.environ, **env))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        table = r.stdout[r.stdout.index("gpu-check "):]
        self.assertRegex(line(table, "sanitizers"), r"FAIL +NOT RUN: the time budget \(GPU_CHECK_BUDGET_S=1\) was spent")
        self.assertRegex(line(table, "cuda_stream_bench and bench-check"), r"FAIL +NOT RUN: the time budget")

        # Placement (correctness) comes before the long timing parts, so a spent budget cuts those, not it.
        env.update(GPU_CHECK_BUDGET_S="600", GPU_CHECK_SANITIZE="1", GPU_CHECK_PLACEMENT="1")
        r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-check"), build], capture_output=True,
                           text=True, env=dict(os.environ, **env))
        rows = r.stdout[r.stdout.index("gpu-check "):].splitlines()
        at = {name: next(i for i, text in enumerate(rows) if text.startswith(name))
              for name in ("placement masks", "sanitizer", "cuda_stream_bench")}
        self.assertRegex(rows[at["placement masks"]], r"FAIL +nvidia-smi lists no GPU")
        self.assertLess(at["placement masks"], at["sanitizer"], "\n".join(rows))
        self.assertLess(at["placement masks"], at["cuda_stream_bench"], "\n".join(rows))


class GpuCheckPlacement(unittest.TestCase):
    """scripts/gpu-check-placement over a fake node: an adapter without a UUID
    (PoCL's: null in roster-info --json) beside the GPU must not turn the
    CUDA_VISIBLE_DEVICES=-1 check into a pass that looked at nothing."""

    def run_placement(self, adapters):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        build, bin_dir = os.path.join(tmp, "build"), os.path.join(tmp, "bin")
        os.makedirs(os.path.join(build, "tools"))
        os.makedirs(bin_dir)

        def script(path, text):
            write(path, "#!/bin/sh\n" + text)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        gpu = "GPU-0a1b2c3d-0000-1111-2222-333344445555"
        script(os.path.join(bin_dir, "nvidia-smi"), "echo '0, %s, 00000000:19:00.0'\n" % gpu)
        script(os.path.join(bin_dir, "mpirun"), "exit 1\n")
        report = {"adapters": adapters(gpu), "circuits": [], "decisions": []}
        write(os.path.join(tmp, "report.json"), json.dumps(report))
        script(os.path.join(build, "tools", "roster-info"), "cat '%s'\n" % os.path.join(tmp, "report.json"))
        env = dict(os.environ, OUT=os.path.join(tmp, "out"),
                   PATH=bin_dir + ":/usr/bin:/bin:" + os.path.dirname(sys.executable))
        r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-check-placement"), build],
                           capture_output=True, text=True, env=env, timeout=120)
        return r.stdout

    def test_a_gpu_still_listed_fails_beside_an_adapter_without_uuid(self):
        out = self.run_placement(lambda gpu: [{"spec": "opencl:0", "backend": "opencl", "uuid": None},
                                              {"spec": "cuda:0", "backend": "cuda", "uuid": gpu.lower()}])
        self.assertRegex(line(out, "placement CUDA_VISIBLE_DEVICES=-1|"), r"\|FAIL\|still seen: cuda:0")

    def test_a_hidden_gpu_passes_beside_an_adapter_without_uuid(self):
        out = self.run_placement(lambda gpu: [{"spec": "opencl:0", "backend": "opencl", "uuid": None}])
        self.assertRegex(line(out, "placement CUDA_VISIBLE_DEVICES=-1|"), r"\|PASS\|no adapter or circuit")


class GpuCheckMeasure(unittest.TestCase):
    """scripts/gpu-check-measure: six fresh measure-mode decisions must choose
    one adapter (and read mode on the last records the same); one that flips
    fails the row. The fake examples/devices answers from a script of choices."""

    def run_measure(self, answers):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        build = os.path.join(tmp, "build")
        os.makedirs(os.path.join(build, "examples"))
        write(os.path.join(tmp, "answers"), "\n".join(answers) + "\n")
        devices = os.path.join(build, "examples", "devices")
        # Each call takes the next answer; measure mode also writes a tuning file.
        write(devices, "#!/bin/sh\n"
              "n=$(cat '%s/count' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '%s/count'\n"
              "a=$(sed -n ${n}p '%s/answers')\n"
              "if [ \"$ROSTER_TUNING\" = measure ]; then mkdir -p \"$XDG_CACHE_HOME/roster\"; "
              "echo '{}' > \"$XDG_CACHE_HOME/roster/tuning.json\"; fi\n"
              "echo \"decision (primary): $a\"\n" % (tmp, tmp, tmp))
        os.chmod(devices, 0o755)
        env = dict(os.environ, OUT=os.path.join(tmp, "out"))
        r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-check-measure"), build],
                           capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_six_of_six_and_read_mode_pass(self):
        out = self.run_measure(["cuda:0"] * 7)
        self.assertRegex(line(out, "measure fresh decisions|"), r"\|PASS\|cuda:0 in 6 of 6")

    def test_one_flip_fails(self):
        out = self.run_measure(["cuda:0", "cuda:0", "vulkan:0", "cuda:0", "cuda:0", "cuda:0", "cuda:0"])
        self.assertRegex(line(out, "measure fresh decisions|"), r"\|FAIL\|cuda:0 in 5 of 6")

    def test_read_mode_that_differs_fails(self):
        out = self.run_measure(["cuda:0"] * 6 + ["vulkan:0"])
        self.assertRegex(line(out, "measure fresh decisions|"), r"\|FAIL\|.*read mode: vulkan:0")


class GpuCheckOneFile(unittest.TestCase):
    """scripts/gpu-check-one-file: the one-file program's rows. A fake compiler
    writes a fake program (it answers as the real one does on a GPU node), and
    a fake nvidia-smi names an sm_90 GPU: CUDA must run with the PTX JIT off
    and say the image's SASS for sm_90 ran; a JIT compile, a failed build or a
    missing OpenCL adapter on the GPU fails its row."""

    def rows(self, kernels="SASS sm_90 from the image, no JIT", compiler_rc=0, opencl="opencl:1 NVIDIA H200;"):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        bin_dir = os.path.join(tmp, "bin")
        os.makedirs(bin_dir)
        # The program: the listing, then a result line per spec (CUDA only
        # with the JIT off, as the script asks), and CUDA's kernels line.
        program = ("#!/bin/sh\n"
                   "echo 'cuda: cuda:0 NVIDIA H200;'; echo 'vulkan: vulkan:0 NVIDIA H200;'\n"
                   "echo 'opencl: opencl:0 pthread-cpu; %s'; echo 'cpu: cpu:0 Xeon;'\n"
                   "for s in \"$@\"; do\n"
                   "  if [ $s = cuda:0 ] && [ \"$CUDA_DISABLE_PTX_JIT\" != 1 ]; then echo 'JIT on' >&2; exit 1; fi\n"
                   "  echo \"$s (dev): a[0] = 16, dot = 240000, ok\"\n"
                   "  [ $s = cuda:0 ] && echo 'kernels of cuda:0: cuModuleLoadData of the image: %s, 9.6 ms'\n"
                   "done\nexit 0\n" % (opencl, kernels))
        write(os.path.join(tmp, "program"), program)
        write(os.path.join(bin_dir, "fakecxx"),
              "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && o=$2; shift; done\n"
              "/bin/cp '%s' \"$o\" && /bin/chmod +x \"$o\"\nexit %d\n" % (os.path.join(tmp, "program"), compiler_rc))
        write(os.path.join(bin_dir, "nvidia-smi"),
              "#!/bin/sh\ncase \"$*\" in *compute_cap*) echo 9.0;; *) echo 'NVIDIA H200';; esac\n")
        for f in ("fakecxx", "nvidia-smi"):
            os.chmod(os.path.join(bin_dir, f), 0o755)
        env = dict(os.environ, OUT=os.path.join(tmp, "out"), CXX="fakecxx",
                   PATH=bin_dir + os.pathsep + os.environ["PATH"])
        script = os.path.join(ROOT, "scripts", "gpu-check-one-file")
        for part in ("build", "run"):
            r = subprocess.run(["bash", script, part], capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_sass_without_jit_and_every_api_pass(self):
        out = self.rows()
        for row in ("build, the host compiler alone", "cuda:0, PTX JIT off", "cuda:0 runs the image's SASS",
                    "vulkan:0", "cpu:0", "opencl:1, the GPU's OpenCL"):
            self.assertRegex(line(out, "one-file " + row + "|"), r"\|PASS\|", out)
        self.assertIn("sm_90 from the image, no JIT", line(out, "one-file cuda:0 runs"))

    def test_jit_compiled_ptx_fails(self):
        out = self.rows(kernels="the driver compiled PTX compute_75 to sm_90")
        self.assertRegex(line(out, "one-file cuda:0 runs the image's SASS|"), r"\|FAIL\|the GPU is sm_90")

    def test_a_failed_build_fails_and_runs_nothing(self):
        out = self.rows(compiler_rc=1)
        self.assertRegex(line(out, "one-file build, the host compiler alone|"), r"\|FAIL\|exit 1")
        self.assertNotIn("cuda:0", out)

    def test_no_opencl_adapter_on_the_gpu_fails(self):
        out = self.rows(opencl="")
        self.assertRegex(line(out, "one-file opencl, the GPU's|"), r"\|FAIL\|no OpenCL adapter named 'NVIDIA H200'")


class GpuCheckSanitizer(unittest.TestCase):
    """compute-sanitizer's verdicts: a program that makes no CUDA call is a SKIP
    (whatever the exit status: newer releases exit 255 for it), errors FAIL."""

    def test_no_cuda_call_is_a_skip_and_errors_fail(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        build = os.path.join(tmp, "build")
        tb = os.path.join(build, "tests", "backends")
        os.makedirs(tb)
        os.makedirs(os.path.join(tmp, "bin"))

        def script(path, body):
            with open(path, "w") as f:
                f.write("#!/bin/sh\n" + body)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        for t in ("backends_ops_test", "backends_smoke_test"):
            script(os.path.join(tb, t), "exit 0\n")
        script(os.path.join(tmp, "bin", "nvidia-smi"), "echo '0, NVIDIA H200, 580, 143771 MiB, 0000:00:06.0'\n")
        script(os.path.join(tmp, "bin", "compute-sanitizer"),
               'case "$*" in\n'
               '  *backends_smoke_test*) echo "========= COMPUTE-SANITIZER"; '
               'echo "========= Error: Target application terminated before first instrumented API call"; exit 255;;\n'
               '  *) echo "========= ERROR SUMMARY: 3 errors"; exit 99;;\n'
               'esac\n')
        allow = os.path.join(tmp, "allow.txt")
        write(allow, "")
        env = {"OUT": os.path.join(tmp, "out"), "GPU_CHECK_SANITIZE": "1", "GPU_CHECK_BENCH": "0", "GPU_CHECK_ONE_FILE": "0",
               "GPU_CHECK_VULKAN": "0", "GPU_CHECK_OPENCL": "0", "GPU_CHECK_PLACEMENT": "0",
               "GPU_CHECK_VULKAN_LOADER": "0", "GPU_CHECK_OPENCL_LOADER": "0", "GPU_CHECK_ALLOW": allow,
               "BABELSTREAM_BIN": "", "BABELSTREAM_COMMIT": "",
               "PATH": os.path.join(tmp, "bin") + ":/usr/bin:/bin:" + os.path.dirname(sys.executable)}
        r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-check"), build], capture_output=True,
                           text=True, env=dict(os.environ, **env))
        table = r.stdout[r.stdout.index("gpu-check "):]
        self.assertRegex(line(table, "sanitizer memcheck backends_smoke_test"),
                         r"FAIL +SKIP: the program makes no CUDA call \(compute-sanitizer rc 255\)")
        self.assertRegex(line(table, "sanitizer memcheck backends_ops_test"), r"FAIL +rc 99: ERROR SUMMARY: 3 errors")


class GpuCheckVulkan(unittest.TestCase):
    """scripts/gpu-check-vulkan alone on a fake build folder prints its own table and fails."""

    def test_fake_build_fails(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        tb = os.path.join(tmp, "build", "tests", "backends")
        os.makedirs(tb)
        path = os.path.join(tb, "vulkan_backend_test")
        write(path, "#!/bin/sh\ncat <<'EOF'\n" + gtest_log(ok=["vulkan_backend.opens"],
                                                           skipped=["vulkan_backend.lavapipe_is_a_cpu_adapter_with_f64"])
              + "EOF\n")
        os.chmod(path, 0o755)
        allow = os.path.join(tmp, "allow.txt")
        write(allow, "vulkan_backend*:vulkan_backend.lavapipe_is_a_cpu_adapter_with_f64 | a lavapipe test\n")
        r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-check-vulkan"), os.path.join(tmp, "build")],
                           capture_output=True, text=True,
                           env=dict(os.environ, OUT=os.path.join(tmp, "out"), GPU_CHECK_ALLOW=allow,
                                    GPU_CHECK_VULKAN_LOADER="0"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        table = r.stdout[r.stdout.index("gpu-check-vulkan "):]
        self.assertRegex(line(table, "vulkan_backend "), r"ALLOWED +PARTIAL: 1 passed, 1 skipped")
        self.assertRegex(line(table, "vulkan_nof64"), r"FAIL +MISSING")
        self.assertRegex(line(table, "vulkan_stream_bench"), r"FAIL +MISSING")
        self.assertIn("vulkan_backend*:vulkan_backend.lavapipe_is_a_cpu_adapter_with_f64 | a lavapipe test", table)


if __name__ == "__main__":
    unittest.main(verbosity=2)
