#!/usr/bin/env python3
"""scripts/gpu-check-opencl alone on a fake build folder: shell scripts stand
in for the test binaries and roster-info, a file stands in for NVIDIA's
OpenCL driver. The ICD file is written in a temporary OCL_ICD_VENDORS folder
and said; the adapter and the three-API circuit come from roster-info's
report; what is not built is MISSING; the table fails."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gates_test import gtest_log, line, write  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "gpu-check-opencl")


def fake(path, text, rc=0):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write(path, "#!/bin/sh\necho \"$@\" >>\"$0.args\"\ncat <<'EOF'\n" + text + "EOF\nexit %d\n" % rc)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def report(circuits):
    adapters = [{"spec": "cuda:0", "backend": "cuda", "uuid": "GPU-1", "type": "discrete"},
                {"spec": "opencl:0", "backend": "opencl", "uuid": None, "type": "cpu"},
                {"spec": "opencl:1", "backend": "opencl", "uuid": "GPU-1", "type": "discrete"}]
    return json.dumps({"adapters": adapters,
                       "circuits": [{"index": i, "adapters": a} for i, a in enumerate(circuits)]}) + "\n"


class GpuCheckOpencl(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.build = os.path.join(self.tmp, "build")
        self.driver = os.path.join(self.tmp, "libnvidia-opencl.so.1")
        write(self.driver, "")
        self.allow = os.path.join(self.tmp, "allow.txt")
        write(self.allow, "")
        fake(os.path.join(self.build, "tests", "backends", "opencl_backend_test"), gtest_log(ok=["opencl_backend.a"]))
        fake(os.path.join(self.build, "examples", "stencil", "stencil"), "stencil: ... 812.5 GB/s (first dispatch) -> ok\n")
        self.env = dict(os.environ, OUT=os.path.join(self.tmp, "out"), GPU_CHECK_ALLOW=self.allow,
                        GPU_CHECK_OPENCL_LOADER="0", GPU_CHECK_NVIDIA_OPENCL=self.driver, TMPDIR=self.tmp)
        self.env.pop("OCL_ICD_VENDORS", None)

    def run_script(self, *args, **env):
        r = subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, env=dict(self.env, **env))
        return r

    def test_setup_writes_an_icd_file_naming_the_driver_and_says_so(self):
        r = self.run_script("--setup")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no ICD file names NVIDIA's OpenCL driver here", r.stderr)
        folder = r.stdout.strip().split("=", 1)[1]
        self.assertTrue(r.stdout.startswith("export OCL_ICD_VENDORS="), r.stdout)
        with open(os.path.join(folder, "nvidia.icd")) as f:
            self.assertEqual(f.read().strip(), self.driver)
        # Given ICD files of one's own, none is written.
        r = self.run_script("--setup", OCL_ICD_VENDORS="/mine")
        self.assertEqual(r.stdout.strip(), "export OCL_ICD_VENDORS=/mine")
        self.assertNotIn("wrote", r.stderr)

    def test_fake_build_picks_the_gpu_checks_the_circuit_and_fails_on_what_is_missing(self):
        fake(os.path.join(self.build, "tools", "roster-info"),
             report([["cuda:0", "vulkan:0", "opencl:1"], ["cpu:0", "opencl:0"]]))
        r = self.run_script(self.build)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        table = r.stdout[r.stdout.index("gpu-check-opencl "):]
        self.assertRegex(line(table, "circuit cuda+vulkan+opencl"), r"PASS +circuit 0: cuda:0 vulkan:0 opencl:1")
        self.assertRegex(line(table, "opencl_backend "), r"PASS +1 passed")
        self.assertRegex(line(table, "opencl_native"), r"FAIL +MISSING")
        self.assertRegex(line(table, "stencil-opencl"), r"PASS +opencl:1: 812.5 GB/s")
        self.assertRegex(line(table, "opencl_stream_bench"), r"FAIL +MISSING")
        with open(os.path.join(self.build, "examples", "stencil", "stencil.args")) as f:
            self.assertEqual(f.read().split()[0], "opencl:1")  # the adapter with cuda:0's UUID

    def test_three_apis_in_two_circuits_fail(self):
        fake(os.path.join(self.build, "tools", "roster-info"),
             report([["cuda:0", "vulkan:0"], ["opencl:1"], ["cpu:0", "opencl:0"]]))
        r = self.run_script(self.build)
        table = r.stdout[r.stdout.index("gpu-check-opencl "):]
        self.assertRegex(line(table, "circuit cuda+vulkan+opencl"),
                         r"FAIL +no circuit holds cuda:0, vulkan:0 and an opencl adapter: cuda:0 vulkan:0; opencl:1")


if __name__ == "__main__":
    unittest.main(verbosity=2)
