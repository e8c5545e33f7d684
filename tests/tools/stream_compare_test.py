#!/usr/bin/env python3
"""scripts/gpu-stream-compare on synthetic raw rounds: both BabelStream CSV
formats (5.0's max_mbytes_per_sec, main's max_MB_per_sec) read, an unknown
one refused, BabelStream's exit status checked, the re-measure rule, the
like-for-like check of the CPU rows, the CPU rows judged round by round and
measured in more rounds than the GPU rows, the pinned anchor, and the
Markdown table that names its results file. Nothing here is BabelStream's code: the
CSV texts are written below in the shape its two versions print."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "gpu-stream-compare")
OPS = ["copy", "mul", "add", "triad", "dot"]
GPU_N, CPU_N = 1 << 28, 1 << 25
WEIGHT = {"copy": 2, "mul": 2, "add": 3, "triad": 3, "dot": 2}


def run(*args, env=None):
    r = subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    return r.returncode, r.stdout + r.stderr


def row(out, start):
    for line in out.splitlines():
        if line.startswith(start):
            return line
    raise AssertionError(f"no line starting {start!r} in:\n{out}")


def babelstream_csv(gbps, n, size, fmt="main"):
    """BabelStream's --csv output for GB/s per op: main prints its CUDA
    model's device lines first and max_MB_per_sec; 5.0 prints a phase table
    first and max_mbytes_per_sec; "unknown" names its column otherwise."""
    col = {"main": "max_MB_per_sec", "5.0": "max_mbytes_per_sec", "unknown": "max_MiB_per_sec"}[fmt]
    lines = []
    if fmt == "5.0":
        lines += ["phase,n_elements,sizeof,max_mbytes_per_sec,runtime", f"Init,{n},{size},1.2e+06,0.9",
                  f"Read,{n},{size},3.1e+06,0.7"]
    else:
        lines += ["CUDA Driver: 13000", 'CUDA Device 0: "NVIDIA H200" 132 SMs(9,0) Memory: 3201 MHz x 6144-bit',
                  "Memory Allocation: DEFAULT", "Parallel for kernel config: thread blocks of size 1024"]
    lines.append(f"function,num_times,n_elements,sizeof,{col},min_runtime,max_runtime,avg_runtime")
    for op in OPS:
        t = WEIGHT[op] * size * n / (gbps[op] * 1e9)
        lines.append(f"{op.capitalize()},100,{n},{size},{gbps[op] * 1e3:.6g},{t:.6g},{t * 1.05:.6g},{t * 1.01:.6g}")
    return "\n".join(lines) + "\n"


def gbench(benchmarks):
    return json.dumps({"context": {}, "benchmarks": benchmarks})


def cuda_stream_json(gbps_by_type):
    out = []
    for t, g in gbps_by_type.items():
        b = {"name": f"BM_stream_host_clock<{t}>/iterations:100/manual_time", "run_type": "iteration",
             "real_time": 5.0, "time_unit": "ms", "runs": 99.0,
             "label": "host clock around dispatch and synchronize, classic order, first run dropped"}
        for op in OPS:
            b[f"{op}_best_GBps"] = g[op]
            b[f"{op}_median_GBps"] = g[op] * 0.99
        out.append(b)
    return gbench(out)


def vulkan_stream_json(vk, cu):
    out = []
    for be, g in (("vulkan", vk), ("cuda", cu)):
        for t in ("float", "double"):
            for op in OPS:
                out.append({"name": f"stream/{be}/{t}/{op}/manual_time", "run_type": "iteration", "GB/s": g[op]})
    return gbench(out)


def cpu_stream_json(streaming, plain, isa="isa=avx2"):
    out = []
    for variant, g, label in (("roster_cpu", streaming, "isa=sse2, 16-byte streaming stores"),
                              ("roster_cpu_no_streaming", plain, isa)):
        for op in OPS:
            for rep in range(3):
                out.append({"name": f"{variant}/{op}/real_time", "run_name": f"{variant}/{op}/real_time",
                            "run_type": "iteration", "GB/s": g[op], "label": label})
    return gbench(out)


def same(x):
    return {op: x for op in OPS}


class Rounds:
    """A folder of raw rounds as gpu-stream-compare writes them."""

    def __init__(self, test):
        self.dir = tempfile.mkdtemp(prefix="stream-compare-")
        test.addCleanup(shutil.rmtree, self.dir)
        self.write("meta.json", json.dumps({"kind": "gpu-stream-compare-meta", "date": "2026-12-01T10:00Z",
                                            "node": "gpu-node: 1 x NVIDIA H200 (driver 580.159.04), 16 CPUs",
                                            "roster_commit": "abc1234", "babelstream_commit": "57637d5",
                                            "rounds": 3, "babelstream_omp_isa": "isa=avx2"}))

    def write(self, rel, text):
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def round(self, i, bs, roster, fmt="main", rc=None, vulkan=True, cpu=None, omp=None, folder=""):
        d = os.path.join(folder, f"round{i}")
        if bs is not None:
            for t, size in (("float", 4), ("double", 8)):
                self.write(f"{d}/babelstream-cuda-{t}.csv", babelstream_csv(bs, GPU_N, size, fmt))
            self.write(f"{d}/cuda_stream.json", cuda_stream_json({"float": roster, "double": roster}))
        if vulkan and bs is not None:
            self.write(f"{d}/vulkan_stream.json", vulkan_stream_json(same(4300.0), same(4280.0)))
        if cpu:
            self.write(f"{d}/cpu_stream.json", cpu_stream_json(*cpu))
        if omp:
            self.write(f"{d}/babelstream-omp-double.csv", babelstream_csv(omp, CPU_N, 8, "main"))
        status = {f"babelstream-cuda-{t}": {"rc": (rc or {}).get(t, 0), "source": "babelstream-cuda"}
                  for t in ("float", "double")}
        self.write(f"{d}/status.json", json.dumps(status))


BS = {"copy": 4034.0, "mul": 4020.0, "add": 4361.0, "triad": 4367.0, "dot": 4441.0}


def scaled(g, f):
    return {op: v * f for op, v in g.items()}


class StreamCompare(unittest.TestCase):
    def test_main_csv_format_read(self):
        r = Rounds(self)
        for i in range(3):
            r.round(i, scaled(BS, 1 + i * 0.001), scaled(BS, 1.02))
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 0, out)
        self.assertIn("BabelStream main (max_MB_per_sec) at 57637d5", out)
        self.assertRegex(row(out, "CUDA double copy: roster / BabelStream"), r"4114\.7 +4038\.0 +1\.019 .* pass$")
        self.assertIn("host clock around launch and synchronization", out)
        self.assertIn("20 pass, 0 pass on re-measure, 0 re-measure, 0 inconclusive, 0 FAIL, 10 not run", out)
        # The CPU rows were not run (no BabelStream OpenMP model): a failure
        # unless the caller allows rows not run.
        rc, out = run("--recorded", r.dir)
        self.assertEqual(rc, 1, out)
        self.assertIn("gpu-stream-compare: 10 rows not run (no roster_cpu figure for double copy)", out)
        self.assertIn("Fix: run them where they can run, or pass --allow-not-run", out)

    def test_babelstream_5_0_csv_format_read(self):
        r = Rounds(self)
        for i in range(3):
            r.round(i, BS, scaled(BS, 1.02), fmt="5.0")
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 0, out)
        self.assertIn("BabelStream 5.0 (max_mbytes_per_sec)", out)
        self.assertRegex(row(out, "CUDA float triad: roster / BabelStream"), r"4454\.3 +4367\.0 +1\.020 .* pass$")

    def test_unknown_csv_format_refused(self):
        r = Rounds(self)
        r.write("odd.csv", babelstream_csv(BS, GPU_N, 8, "unknown"))
        rc, out = run("--parse-babelstream", os.path.join(r.dir, "odd.csv"))
        self.assertEqual(rc, 2, out)
        self.assertIn("unknown BabelStream CSV format: the bandwidth column is ['max_MiB_per_sec']", out)
        self.assertIn("Fix: ", out)
        # In a run, every CUDA row fails with the reason, never "not run".
        for i in range(3):
            r.round(i, BS, scaled(BS, 1.02), fmt="unknown")
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (round0/babelstream-cuda-float.csv: unknown BabelStream CSV format",
                      row(out, "CUDA double dot: roster / BabelStream"))
        # A renamed function column: no op rows, refused rather than "not run".
        r.write("renamed.csv", babelstream_csv(BS, GPU_N, 8).replace("function,", "kernel,"))
        rc, out = run("--parse-babelstream", os.path.join(r.dir, "renamed.csv"))
        self.assertEqual(rc, 2, out)
        self.assertIn("no CSV header row starting 'function,'", out)

    def test_both_formats_parse_the_same(self):
        r = Rounds(self)
        for fmt in ("main", "5.0"):
            r.write(f"{fmt}.csv", babelstream_csv(BS, GPU_N, 8, fmt))
        rc, main = run("--parse-babelstream", os.path.join(r.dir, "main.csv"))
        self.assertEqual(rc, 0, main)
        rc, old = run("--parse-babelstream", os.path.join(r.dir, "5.0.csv"))
        self.assertEqual(rc, 0, old)
        self.assertEqual(main.splitlines()[1:], old.splitlines()[1:])
        self.assertIn("triad best 4367.0 GB/s, mean 4323.8 GB/s", main)

    def test_babelstream_exit_status_fails_its_rows(self):
        r = Rounds(self)
        for i in range(3):
            r.round(i, BS, scaled(BS, 1.02), rc={"float": 1} if i == 1 else None)
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (babelstream-cuda-float exited 1 in round1", row(out, "CUDA float copy"))

    def test_a_miss_within_the_spread_is_remeasured(self):
        r = Rounds(self)
        # roster 1.2% under the 0.99 target, BabelStream's rounds 4% apart.
        for i, f in enumerate((0.98, 1.02, 1.0)):
            r.round(i, scaled(BS, f), scaled(BS, 0.978))
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 1, out)  # the spread widens the verdict to re-measure, never to a pass
        self.assertIn("re-measure (misses by 1.2%, within the spread 2.0%", row(out, "CUDA double copy"))
        # The re-measure alone would pass (0.995, no spread), but it is judged
        # with the first rounds' misses: the pooled spread exceeds the margin.
        for i in range(5):
            r.round(i, BS, scaled(BS, 0.995), folder="remeasure")
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 1, out)
        self.assertIn("inconclusive (the first run's 3 rounds and the re-measure's 5 pooled: passes by 0.5%, "
                      "within the spread 1.7%; the first run alone missed by 1.2%, spread 2.0%)",
                      row(out, "CUDA double copy"))
        # Enough re-measured rounds at 0.995 that the first three no longer
        # spread the pool: a pass on all the evidence.
        for i in range(10):
            r.round(i, BS, scaled(BS, 0.995), folder="remeasure")
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 0, out)
        self.assertIn("pass on re-measure (the first run's 3 rounds and the re-measure's 10 pooled: passes by 0.5%, "
                      "beyond the spread 0.0%", row(out, "CUDA double copy"))
        # The pool misses beyond its spread: FAIL.
        for i in range(10):
            r.round(i, BS, scaled(BS, 0.96), folder="remeasure")
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (the first run's 3 rounds and the re-measure's 10 pooled: misses by 3.0%, beyond the "
                      "spread", row(out, "CUDA double copy"))

    def test_a_remeasure_cut_short_decides_nothing(self):
        # The re-measure planned 6 rounds and the time budget let 1 run: its
        # one passing round is no verdict, the row FAILs and says why.
        r = Rounds(self)
        for i, f in enumerate((0.98, 1.02, 1.0)):
            r.round(i, scaled(BS, f), scaled(BS, 0.978))
        r.round(0, BS, scaled(BS, 1.05), folder="remeasure")
        with open(os.path.join(r.dir, "remeasure", "planned.json"), "w") as f:
            json.dump({"gpu": 6, "cpu": 0}, f)
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (re-measure cut short: 1 of 6 rounds ran before the time budget ended",
                      row(out, "CUDA double copy"))
        # The rounds it planned, all run: they decide, pooled with the first
        # three, whose misses they contradict (1.05 against 0.978): inconclusive.
        for i in range(1, 6):
            r.round(i, BS, scaled(BS, 1.05), folder="remeasure")
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 1, out)
        self.assertIn("inconclusive (the first run's 3 rounds and the re-measure's 6 pooled: passes by 6.1%, "
                      "within the spread 6.9%", row(out, "CUDA double copy"))

    def test_cpu_rows_like_for_like(self):
        r = Rounds(self)
        for i in range(3):
            r.round(i, BS, scaled(BS, 1.02), cpu=(same(180.0), same(150.0)), omp=same(140.0))
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 0, out)
        # The plain loops are shown beside BabelStream's, never judged (at
        # parity by design, inside the host's spread); like for like still holds.
        self.assertRegex(row(out, "CPU double add: roster (no streaming stores)"),
                         r"\[isa=avx2 / isa=avx2\] +150\.0 +138\.6 +1\.082 +shown .* shown \(passes by 8\.2% of 1x, "
                         r"spread 0\.0%: roster's loops without streaming stores")  # BabelStream: its mean, 140 / 1.01
        self.assertRegex(out, r"\n\d+ pass, .*, 5 shown\n")
        # BabelStream's loops built for another instruction set: not like for like.
        for i in range(3):
            r.round(i, BS, scaled(BS, 1.02), cpu=(same(180.0), same(150.0), "isa=sse2"), omp=same(140.0))
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (not like for like: 'isa=sse2' against 'isa=avx2')",
                      row(out, "CPU double add: roster (no streaming stores)"))

    def test_cpu_rows_judged_round_by_round(self):
        # The judged CPU row is roster's default, with streaming stores.
        # The host's bandwidth moves both sides of a round alike (80 to 120
        # GB/s here): each round's ratio is what counts, not each side's own
        # spread. Roster 5% ahead in every round: ratio 1.050, spread 0.
        r = Rounds(self)
        host = (100.0, 80.0, 120.0)
        for i, h in enumerate(host):
            r.round(i, BS, scaled(BS, 1.02), cpu=(same(1.05 * h), same(1.6 * h)), omp=same(h * 1.01))
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 0, out)
        self.assertRegex(row(out, "CPU double add: roster (streaming stores)"),
                         r"\] +105\.0 +100\.0 +1\.050 +>= 1 +0\.0% .* pass$")
        # 5% behind in every round: FAIL, not a re-measure hidden in the
        # host's 40% swing (each side's own spread).
        for i, h in enumerate(host):
            r.round(i, BS, scaled(BS, 1.02), cpu=(same(0.95 * h), same(1.6 * h)), omp=same(h * 1.01))
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (misses by 5.0%, beyond the spread 0.0%)", row(out, "CPU double add: roster (streaming stores)"))
        # One side in the host's fast state in other rounds than the other
        # (bench/results/h200-2026-12-02/cpu-stream): the ratios spread, a
        # miss inside that spread is measured again.
        for i, (h, g) in enumerate(((100.0, 120.0), (120.0, 100.0), (100.0, 100.0), (100.0, 118.0), (100.0, 101.0))):
            r.round(i, BS, scaled(BS, 1.02), cpu=(same(0.99 * g), same(1.6 * g)), omp=same(h * 1.01))
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 1, out)
        self.assertRegex(row(out, "CPU double copy: roster (streaming stores)"),
                         r"1\.000 +>= 1 .* re-measure \(misses by 0\.0%, within the spread 17\.8%")
        # A round with one side missing pairs with nothing and is left out.
        r = Rounds(self)
        for i, h in enumerate(host):
            r.round(i, BS, scaled(BS, 1.02), cpu=(same(1.05 * h), same(1.6 * h)), omp=same(h * 1.01))
        r.round(3, None, None, cpu=(same(50.0), same(160.0)))
        rc, out = run("--recorded", r.dir, "--allow-not-run")
        self.assertEqual(rc, 0, out)
        with open(os.path.join(r.dir, "stream-compare.json")) as f:
            cpu = [x for x in json.load(f)["rows"] if x["what"].startswith("CPU double add: roster (streaming")][0]
        self.assertEqual((cpu["rounds"], cpu["pairing"], [round(x, 3) for x in cpu["ratios"]]), (3, "round", [1.05] * 3))

    def test_anchor_is_required_and_pinned(self):
        build = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, build)
        out = os.path.join(build, "out")
        rc, text = run(build, "--out", out, env={"BABELSTREAM_BIN": "", "BABELSTREAM_COMMIT": ""})
        self.assertEqual(rc, 2, text)
        self.assertIn("BABELSTREAM_BIN and BABELSTREAM_COMMIT must name", text)
        self.assertIn("Fix: build it with its own CMake", text)
        fake = os.path.join(build, "cuda-stream")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(fake, 0o755)
        rc, text = run(build, "--out", out, env={"BABELSTREAM_BIN": fake, "BABELSTREAM_COMMIT": "2411a9a"})
        self.assertEqual(rc, 2, text)
        self.assertIn("BABELSTREAM_COMMIT=2411a9a is not the pinned anchor 57637d5", text)

    def test_markdown_names_its_file_and_the_other_run(self):
        runs = []
        for f in (1.02, 0.95):
            r = Rounds(self)
            for i in range(3):
                r.round(i, BS, scaled(BS, f))
            run("--recorded", r.dir, "--allow-not-run")
            runs.append(os.path.join(r.dir, "stream-compare.json"))
        rc, md = run("--markdown", runs[0], "--others", runs[1])
        self.assertEqual(rc, 0, md)
        self.assertIn("on gpu-node: 1 x NVIDIA H200 (driver 580.159.04), 16 CPUs", md)
        self.assertIn("against BabelStream 57637d5 (BabelStream main (max_MB_per_sec))", md)
        self.assertRegex(md, r"Another run disagreed: `[^`]+` on gpu-node.*: CUDA float copy: roster / BabelStream FAIL \(0\.950\)")
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write("# page\n\n" + md)
        self.addCleanup(os.unlink, f.name)
        rc, out = run("--check-readme", f.name)
        self.assertEqual(rc, 0, out)
        with open(f.name, "w") as g:
            g.write("# page\n\n" + md.replace("| 4114.7 |", "| 4200.0 |", 1))
        rc, out = run("--check-readme", f.name)
        self.assertEqual(rc, 1, out)
        self.assertIn("Fix: replace it with the output of scripts/gpu-stream-compare --markdown", out)

    def test_markdown_takes_the_tree_its_folders_meta_corrects(self):
        # A node whose copy of .git was older records that commit and a dirty
        # tree; the folder's meta.json (check-results' record) names the tree
        # sent, and the table shows that one. A meta.json naming no clean tree
        # changes nothing.
        r = Rounds(self)
        for i in range(3):
            r.round(i, BS, scaled(BS, 1.0))
        run("--recorded", r.dir, "--allow-not-run")
        results = os.path.join(r.dir, "stream-compare.json")
        doc = json.load(open(results))
        doc["meta"].update(roster_commit="a" * 40, roster_diff_sha256="d" * 64)
        json.dump(doc, open(results, "w"))
        meta = os.path.join(r.dir, "meta.json")
        json.dump({"roster_commit": "b" * 40, "roster_tree": "dirty: 1 tracked file changed"}, open(meta, "w"))
        rc, md = run("--markdown", results)
        self.assertEqual(rc, 0, md)
        self.assertIn("roster commit aaaaaaa plus changes (diff sha256 dddddddddddd), against", md)
        json.dump({"roster_commit": "b" * 40, "roster_tree": "clean: the tree sent was this commit"}, open(meta, "w"))
        rc, md = run("--markdown", results)
        self.assertEqual(rc, 0, md)
        self.assertIn("roster commit bbbbbbb (clean tree, as the folder's meta.json records it: the node's copy of "
                      ".git was older), against", md)
        self.assertNotIn("plus changes", md)

    def test_rows_for_gpu_check(self):
        r = Rounds(self)
        for i in range(3):
            r.round(i, BS, scaled(BS, 1.02), vulkan=False)
        run("--recorded", r.dir, "--allow-not-run")
        rc, out = run("--rows", os.path.join(r.dir, "stream-compare.json"))
        self.assertEqual(rc, 0, out)
        lines = out.strip().splitlines()
        self.assertEqual(len(lines), 30, out)
        self.assertRegex(lines[0], r"^CUDA float copy: roster / BabelStream\|pass\|4114\.7 against 4034\.0 GB/s")
        self.assertIn("Vulkan float copy: Vulkan / roster CUDA|not run|", out)


FAKE_NVIDIA_SMI = """#!/bin/sh
case "$*" in
  -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
  *) echo "NVIDIA H200, 580.159.04" ;;
esac
"""

# A stand-in for BabelStream's CUDA model: its main branch's CSV, GB/s that
# move from call to call (FAKE_FACTORS, one per call), exit FAKE_BS_RC.
FAKE_BABELSTREAM = """#!PYTHON
import os, sys
state = os.environ["FAKE_STATE"] + "/bs"
n = int(open(state).read()) if os.path.exists(state) else 0
open(state, "w").write(str(n + 1))
f = [float(x) for x in os.environ.get("FAKE_BS_FACTORS", "1").split(",")]
f = f[(n // 2) % len(f)]
size = 4 if "--float" in sys.argv else 8
count = int(sys.argv[sys.argv.index("--arraysize") + 1])
print("CUDA Driver: 13000")
print("function,num_times,n_elements,sizeof,max_MB_per_sec,min_runtime,max_runtime,avg_runtime")
for op, w, g in (("Copy", 2, 4034), ("Mul", 2, 4020), ("Add", 3, 4361), ("Triad", 3, 4367), ("Dot", 2, 4441)):
    t = w * size * count / (g * f * 1e9)
    print(f"{op},100,{count},{size},{g * f * 1e3:.6g},{t:.6g},{t * 1.05:.6g},{t * 1.01:.6g}")
sys.exit(int(os.environ.get("FAKE_BS_RC", "0")))
"""

# A stand-in for cuda_stream_bench: BM_stream_host_clock's counters in its
# --benchmark_out file, roster at FAKE_ROSTER_FACTORS (one per call) of BabelStream.
FAKE_CUDA_BENCH = """#!PYTHON
import json, os, sys
state = os.environ["FAKE_STATE"] + "/cuda"
n = int(open(state).read()) if os.path.exists(state) else 0
open(state, "w").write(str(n + 1))
f = [float(x) for x in os.environ.get("FAKE_ROSTER_FACTORS", "1.02").split(",")]
f = f[min(n, len(f) - 1)]
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
bench = []
for t in ("float", "double"):
    b = {"name": f"BM_stream_host_clock<{t}>/iterations:100/manual_time", "run_type": "iteration"}
    for op, g in (("copy", 4034), ("mul", 4020), ("add", 4361), ("triad", 4367), ("dot", 4441)):
        b[op + "_best_GBps"] = g * f
    bench.append(b)
json.dump({"benchmarks": bench}, open(out, "w"))
"""

# Stand-ins for the host pair: BabelStream's OpenMP model (main's CSV at 2^25
# doubles, 100 GB/s per op), cpu_stream_bench (both roster variants, at
# FAKE_CPU_FACTORS of that, one per call; streaming stores at 1.5x) and the
# objdump that reads the OpenMP model's instruction set.
FAKE_OMP_STREAM = """#!PYTHON
import sys
count = int(sys.argv[sys.argv.index("--arraysize") + 1])
print("function,num_times,n_elements,sizeof,max_MB_per_sec,min_runtime,max_runtime,avg_runtime")
for op, w in (("Copy", 2), ("Mul", 2), ("Add", 3), ("Triad", 3), ("Dot", 2)):
    t = w * 8 * count / 100e9
    print(f"{op},100,{count},8,{100e3:.6g},{t:.6g},{t * 1.05:.6g},{t:.6g}")
"""

FAKE_CPU_BENCH = """#!PYTHON
import json, os, sys
state = os.environ["FAKE_STATE"] + "/cpu"
n = int(open(state).read()) if os.path.exists(state) else 0
open(state, "w").write(str(n + 1))
f = [float(x) for x in os.environ.get("FAKE_CPU_FACTORS", "1.05").split(",")]
f = f[min(n, len(f) - 1)]
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
bench = []
for variant, g, label in (("roster_cpu", 100.0 * f, "isa=avx2, 32-byte streaming stores"),
                          ("roster_cpu_no_streaming", 150.0, "isa=avx2")):
    for op in ("copy", "mul", "add", "triad", "dot"):
        bench.append({"name": f"{variant}/{op}/real_time", "run_type": "iteration", "GB/s": g, "label": label})
json.dump({"benchmarks": bench}, open(out, "w"))
"""

FAKE_OBJDUMP = """#!/bin/sh
printf '0000000000001000 <OMPStream<double>::copy()>:\\n    1000:\\tvmovupd (%%rax),%%ymm0\\n'
"""


class StreamCompareRun(unittest.TestCase):
    """gpu-stream-compare measuring, with stand-ins for nvidia-smi, BabelStream
    and cuda_stream_bench: the rounds, their raw files, the exit status, the
    re-measure of a row that missed inside its spread."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="stream-run-")
        self.addCleanup(shutil.rmtree, self.dir)
        self.bin = os.path.join(self.dir, "bin")
        self.build = os.path.join(self.dir, "build")
        os.makedirs(self.bin)
        os.makedirs(os.path.join(self.build, "bench"))
        os.makedirs(os.path.join(self.dir, "state"))
        for path, text in ((os.path.join(self.bin, "nvidia-smi"), FAKE_NVIDIA_SMI),
                           (os.path.join(self.dir, "cuda-stream"), FAKE_BABELSTREAM),
                           (os.path.join(self.build, "bench", "cuda_stream_bench"), FAKE_CUDA_BENCH)):
            with open(path, "w") as f:
                f.write(text.replace("#!PYTHON", "#!" + sys.executable))
            os.chmod(path, 0o755)
        self.env = {"PATH": self.bin + os.pathsep + os.environ["PATH"], "FAKE_STATE": os.path.join(self.dir, "state"),
                    "BABELSTREAM_BIN": os.path.join(self.dir, "cuda-stream"), "BABELSTREAM_COMMIT": "57637d5",
                    "BABELSTREAM_OMP_BIN": ""}
        self.out = os.path.join(self.dir, "out")

    def measure(self, **env):
        return run(self.build, "--out", self.out, "--rounds", "3", "--allow-not-run", env=dict(self.env, **env))

    def test_rounds_and_their_raw_files(self):
        rc, out = self.measure()
        self.assertEqual(rc, 0, out)
        self.assertRegex(row(out, "CUDA double triad: roster / BabelStream"), r"4454\.3 +4367\.0 +1\.020 .* pass$")
        self.assertIn("not run (bench/vulkan_stream_bench is not built", row(out, "Vulkan float copy"))
        for i in range(3):
            for f in ("babelstream-cuda-float.csv", "babelstream-cuda-double.csv", "cuda_stream.json", "status.json"):
                self.assertTrue(os.path.isfile(os.path.join(self.out, f"round{i}", f)), f)
        with open(os.path.join(self.out, "meta.json")) as f:
            meta = json.load(f)
        self.assertEqual((meta["babelstream_commit"], meta["rounds"]), ("57637d5", 3))
        # roster's tree: the full commit, clean or with its diff's hash (scripts/provenance.py), never "+changes".
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        self.assertEqual(meta["roster_commit"], head)
        self.assertTrue(meta["roster_tree"] == "clean" or len(meta["roster_diff_sha256"]) == 64, meta)
        self.assertNotIn("+changes", json.dumps(meta))
        self.assertEqual(len(meta["babelstream_sha256"]), 64)
        with open(os.path.join(self.out, "stream-compare.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["meta"]["babelstream_format"], "BabelStream main (max_MB_per_sec)")
        self.assertEqual(len(doc["rows"][0]["values"]), 3)  # every round's figure, not only the median
        self.assertFalse(os.path.exists(os.path.join(self.out, "remeasure")))

    def test_babelstream_failing_fails_its_rows(self):
        rc, out = self.measure(FAKE_BS_RC="1")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL (babelstream-cuda-float exited 1 in round0", row(out, "CUDA float copy"))

    def host_pair(self):
        for path, text in ((os.path.join(self.dir, "omp-stream"), FAKE_OMP_STREAM),
                           (os.path.join(self.build, "bench", "cpu_stream_bench"), FAKE_CPU_BENCH),
                           (os.path.join(self.bin, "objdump"), FAKE_OBJDUMP)):
            with open(path, "w") as f:
                f.write(text.replace("#!PYTHON", "#!" + sys.executable))
            os.chmod(path, 0o755)
        self.env["BABELSTREAM_OMP_BIN"] = os.path.join(self.dir, "omp-stream")

    def test_cpu_rows_take_more_rounds(self):
        # 3 rounds of everything, then the host pair alone up to --cpu-rounds.
        self.host_pair()
        rc, out = run(self.build, "--out", self.out, "--rounds", "3", "--allow-not-run", "--cpu-rounds", "5", env=self.env)
        self.assertEqual(rc, 0, out)
        self.assertRegex(row(out, "CPU double triad: roster (streaming stores)"),
                         r"\[isa=avx2, 32-byte streaming stores / isa=avx2\] +105\.0 +100\.0 +1\.050 .* pass$")
        for i in range(5):
            files = set(os.listdir(os.path.join(self.out, f"round{i}")))
            self.assertTrue({"babelstream-omp-double.csv", "cpu_stream.json"} <= files, (i, files))
            self.assertEqual("cuda_stream.json" in files, i < 3, (i, files))
        with open(os.path.join(self.out, "stream-compare.json")) as f:
            doc = json.load(f)
        self.assertEqual((doc["meta"]["rounds"], doc["meta"]["cpu_rounds"]), (3, 5))
        rounds = {r["what"]: r.get("rounds") for r in doc["rows"]}
        self.assertEqual(rounds["CUDA double copy: roster / BabelStream"], 3)
        self.assertEqual(rounds["CPU double copy: roster (streaming stores) / BabelStream OpenMP"], 5)
        self.assertIn("median over 3 rounds, spread: the rounds' interquartile range over the median (the CPU rows: "
                      "5 rounds", run("--markdown", os.path.join(self.out, "stream-compare.json"))[1])

    def test_a_cpu_row_is_measured_again_in_no_fewer_rounds(self):
        # 7 rounds whose ratios straddle 1.0 (median 0.98): a re-measure of
        # the host pair, 7 rounds (not the default 6), at 1.02; pooled with
        # the first 7, still spread wider than the margin: inconclusive.
        self.host_pair()
        rc, out = run(self.build, "--out", self.out, "--rounds", "3", "--allow-not-run", "--cpu-rounds", "7", env=dict(
            self.env, FAKE_CPU_FACTORS="0.97,1.1,0.9,0.98,1.1,0.9,0.98,1.02"))
        self.assertEqual(rc, 1, out)
        self.assertIn("inconclusive (the first run's 7 rounds and the re-measure's 7 pooled: passes by 2.0%, "
                      "within the spread 3.9%; the first run alone missed by 2.0%, spread 10.7%)",
                      row(out, "CPU double add: roster (streaming stores)"))
        self.assertEqual(sorted(os.listdir(os.path.join(self.out, "remeasure"))),
                         ["planned.json"] + [f"round{i}" for i in range(7)])

    def test_a_miss_inside_the_spread_is_measured_again(self):
        # The re-measure's six rounds at 0.995 would pass alone; pooled with
        # the first three's misses, and BabelStream's rounds 4% apart, the
        # row is inconclusive, and fails.
        rc, out = self.measure(FAKE_BS_FACTORS="0.98,1.02,1.0", FAKE_ROSTER_FACTORS="0.978,0.978,0.978,0.995")
        self.assertEqual(rc, 1, out)
        self.assertIn("inconclusive (the first run's 3 rounds and the re-measure's 6 pooled: passes by 0.5%, "
                      "within the spread 4.0%", row(out, "CUDA double copy"))
        self.assertEqual(len([d for d in os.listdir(os.path.join(self.out, "remeasure")) if d.startswith("round")]), 6)


if __name__ == "__main__":
    unittest.main(verbosity=2)
