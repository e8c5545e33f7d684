#!/usr/bin/env python3
"""Runs the job-check program on four ranks with a real mpirun, twice: with
the default policy the check passes and the four ranks hold four devices;
with a planted collision (ROSTER_GPU_BIND=map_gpu:0,0,1,2) it reports two
ranks sharing a device while another idles. Reads the check's JSON.
Usage: mpi_job.py MPIRUN PROGRAM"""
import json
import os
import subprocess
import sys

mpirun, program = sys.argv[1], sys.argv[2]


def run(extra_env):
    env = dict(os.environ, **extra_env)
    args = [mpirun, "-np", "4", "--oversubscribe", "--allow-run-as-root"]
    for k in extra_env:
        args += ["-x", k]
    p = subprocess.run(args + [program], env=env, capture_output=True, text=True, timeout=240)
    print(p.stdout, p.stderr, sep="\n")
    if p.returncode != 0:
        sys.exit(f"FAIL: mpirun exited with {p.returncode}")
    jobs = [line[len("job: "):] for line in p.stdout.splitlines() if line.startswith("job: ")]
    if len(jobs) != 1:
        sys.exit(f"FAIL: expected one job line (rank 0's), got {len(jobs)}")
    return json.loads(jobs[0])


clean = run({})
devices = {r["uuid"] for r in clean["ranks"]}
if not clean["ok"] or len(clean["ranks"]) != 4 or len(devices) != 4:
    sys.exit(f"FAIL: the default binding should pass with four ranks on four devices: {clean}")
if any(r["local_rank"] is None or r["rank"] is None for r in clean["ranks"]):
    sys.exit("FAIL: a record lacks its rank or local rank")

planted = run({"ROSTER_GPU_BIND": "map_gpu:0,0,1,2"})
kinds = [p["kind"] for p in planted["problems"]]
if planted["ok"] or kinds != ["shared while idle"]:
    sys.exit(f"FAIL: the planted collision should be reported once as 'shared while idle': {planted['problems']}")
text = planted["problems"][0]["text"]
if "rank 0, rank 1 share" not in text or "stands idle" not in text:
    sys.exit(f"FAIL: the problem should name ranks 0 and 1 and the idle device: {text}")
print("PASS: a clean binding passes the job check, and a planted collision is reported")
