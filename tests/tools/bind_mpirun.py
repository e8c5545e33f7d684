#!/usr/bin/env python3
"""A real mpirun -np 4 of `roster-info bind` over the two toolfake GPUs (and
the `other` device and the CPU it must not use): one JSON line per rank, two
ranks on each GPU, none elsewhere, every local rank once.

usage: bind_mpirun.py MPIRUN ROSTER_INFO"""
import collections
import json
import os
import subprocess
import sys

mpirun, info = sys.argv[1], sys.argv[2]
cmd = [mpirun, '-np', '4', '--oversubscribe']
if os.geteuid() == 0:
    cmd.append('--allow-run-as-root')
env = {k: v for k, v in os.environ.items() if not k.startswith(('ROSTER_DEVICE', 'ROSTER_REQUIRE', 'CUDA_VISIBLE'))}
p = subprocess.run(cmd + [info, 'bind'], capture_output=True, text=True, timeout=120, env=env)
print(p.stdout)
print(p.stderr, file=sys.stderr)
if p.returncode != 0:
    sys.exit(f'FAIL: mpirun exited {p.returncode}')
rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{')]
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
if problems:
    sys.exit('FAIL: ' + '; '.join(problems))
print('ok: 4 ranks, 2 on each GPU, none on the CPU or the other device')
