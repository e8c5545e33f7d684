#!/usr/bin/env python3
"""A real mpirun -np 4 of `roster-info bind` over the two toolfake GPUs (and
the `other` device and the CPU it must not use): one JSON line per rank, two
ranks on each GPU, none elsewhere, every local rank once. Then the lines go
through `roster-info bind --check -`: the job check passes them (two ranks a
GPU, none idle), and with ROSTER_GPU_BIND=map_gpu:0 (every rank on GPU 0)
it reports the ranks sharing while GPU 1 idles, with exit status 8.

usage: bind_mpirun.py MPIRUN ROSTER_INFO"""
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

mpirun, info = sys.argv[1], sys.argv[2]
cmd = [mpirun, '-np', '4', '--oversubscribe']
if os.geteuid() == 0:
    cmd.append('--allow-run-as-root')
env = {k: v for k, v in os.environ.items() if not k.startswith(('ROSTER_DEVICE', 'ROSTER_REQUIRE', 'CUDA_VISIBLE'))}


def ranks(args, run_env):
    """Runs `mpirun ... args` with each rank's output in a file of its own
    (--output-filename): mpirun forwards the ranks' standard output in
    chunks, so two ranks' long lines could interleave mid-line on the
    shared stream (CI's ASan run saw it). Returns the process, and the
    ranks' output in rank order."""
    with tempfile.TemporaryDirectory() as folder:
        r = subprocess.run(cmd + ['--output-filename', folder] + args, capture_output=True, text=True,
                           timeout=120, env=run_env)
        files = sorted(glob.glob(os.path.join(folder, '*', 'rank.*', 'stdout')),
                       key=lambda f: int(f.split('rank.')[-1].split(os.sep)[0]))
        out = ''.join(open(f).read() for f in files)
    return r, out


p, p_out = ranks([info, 'bind'], env)
print(p_out)
print(p.stderr, file=sys.stderr)
if p.returncode != 0:
    sys.exit(f'FAIL: mpirun exited {p.returncode}')
rows = [json.loads(l) for l in p_out.splitlines() if l.startswith('{')]
problems = []
if len(rows) != 4:
    problems.append(f'{len(rows)} JSON lines, not 4')
if sorted(r['local_rank'] for r in rows) != [0, 1, 2, 3]:
    problems.append('local ranks are not 0..3 once each')
per = collections.Counter(r['adapter'] for r in rows)
if per != collections.Counter({'toolfake:0': 2, 'toolfake:1': 2}):
    problems.append(f'ranks per adapter {dict(per)}, not two on each toolfake GPU')
for r in rows:
    for key in ('host', 'rank', 'local_size', 'circuit', 'uuid', 'pci_address', 'cpuset', 'numa_node', 'sharing',
                'reasons'):
        if key not in r:
            problems.append(f'rank {r.get("local_rank")}: no {key}')
    if r.get('sharing') != 2 or 'share one GPU' not in r.get('warning', ''):
        problems.append(f'rank {r.get("local_rank")}: the sharing is not reported')


def check(lines, *extra):
    return subprocess.run([info, 'bind', '--check', '-', *extra], input=lines, capture_output=True, text=True,
                          timeout=60, env=env)


c = check(p_out, '--json')
print(c.stdout, c.stderr)
if c.returncode != 0 or not json.loads(c.stdout)['ok']:
    problems.append(f'the job check of a sound binding exited {c.returncode}: {c.stdout} {c.stderr}')
planted_env = dict(env, ROSTER_GPU_BIND='map_gpu:0')
q, q_out = ranks(['-x', 'ROSTER_GPU_BIND', info, 'bind'], planted_env)
rows = [json.loads(l) for l in q_out.splitlines() if l.startswith('{')]
if q.returncode != 0 or collections.Counter(r['adapter'] for r in rows) != collections.Counter({'toolfake:0': 4}):
    problems.append(f'map_gpu:0 did not put the four ranks on toolfake:0: {q_out} {q.stderr}')
if any(r.get('policy') != "map_gpu:0 (ROSTER_GPU_BIND='map_gpu:0')" for r in rows):
    problems.append('a record does not name the policy that placed it')
c = check(q_out)
print(c.stdout, c.stderr)
if c.returncode != 8 or 'shared while idle' not in c.stdout or 'stands idle' not in c.stdout:
    problems.append(f'the planted collision was not reported with status 8 (status {c.returncode})')
if check('').returncode != 2:
    problems.append('a check of no records is not a usage error')
if problems:
    sys.exit('FAIL: ' + '; '.join(problems))
print('ok: 4 ranks, 2 on each GPU, none on the CPU or the other device; the job check passes it and reports a '
      'planted collision')
