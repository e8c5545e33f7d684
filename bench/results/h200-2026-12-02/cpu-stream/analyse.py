#!/usr/bin/env python3
"""Reads call2/round*/ (BabelStream OpenMP's CSV and cpu_stream_bench's JSON
of each round) and prints: each round's GB/s, the rounds' ratios, and how
scripts/gpu-stream-compare's CPU rule judges windows of consecutive rounds,
before this change (ratio of the two sides' medians, spread: the larger of
the two sides' own spreads) and after it (the median of the rounds' ratios
and their spread). Run from the repository root:

  python3 bench/results/h200-2026-12-02/cpu-stream/analyse.py
"""
import csv
import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
OPS = ["copy", "mul", "add", "triad", "dot"]


def quantile(v, q):  # as scripts/bench-check
    v = sorted(v)
    at = q * (len(v) - 1)
    lo = int(at)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (at - lo) * (v[hi] - v[lo])


def summarize(v):
    m = quantile(v, 0.5)
    return m, (quantile(v, 0.75) - quantile(v, 0.25)) / m


def verdict(ratio, spread):
    miss = 1.0 - ratio
    return "pass" if miss <= 0 else "re-measure" if miss <= spread else "FAIL"


rounds = []
for d in sorted(glob.glob(os.path.join(HERE, "call2", "round*")), key=lambda p: int(re.search(r"\d+$", p).group())):
    r = {}
    lines = open(os.path.join(d, "babelstream-omp-double.csv")).read().splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("function,"))
    for rec in csv.DictReader(lines[head:]):
        op = rec["function"].lower()
        moved = (3 if op in ("add", "triad") else 2) * int(rec["n_elements"]) * int(rec["sizeof"])
        r[("babelstream", op)] = moved / float(rec["avg_runtime"]) / 1e9  # its mean, as gpu-stream-compare reads it
    for b in json.load(open(os.path.join(d, "cpu_stream.json")))["benchmarks"]:
        side, op = b["name"].split("/")[:2]
        r[(side, op)] = b["GB/s"]
    rounds.append(r)

n = len(rounds)
print(f"{n} rounds; even rounds ran BabelStream first, odd rounds cpu_stream_bench first")
print("GB/s: bs = BabelStream OpenMP (its own process and arrays), omp = cpu_stream_bench's openmp/ loop "
      "(roster's buffers, same process), ro = roster_cpu_no_streaming")
for op in OPS:
    print(f"\n== {op}")
    for i, r in enumerate(rounds):
        bs, om, ro = r[("babelstream", op)], r[("openmp", op)], r[("roster_cpu_no_streaming", op)]
        print(f"round{i:<3} bs {bs:6.1f}  omp {om:6.1f}  ro {ro:6.1f}   ro/bs {ro / bs:.3f}  ro/omp {ro / om:.3f}")
    ro = [r[("roster_cpu_no_streaming", op)] for r in rounds]
    bs = [r[("babelstream", op)] for r in rounds]
    om = [r[("openmp", op)] for r in rounds]
    for name, v in (("bs", bs), ("omp", om), ("ro", ro)):
        print(f"  {name:4} median {quantile(v, 0.5):6.1f}  min {min(v):6.1f}  max {max(v):6.1f}")
    m, s = summarize([a / b for a, b in zip(ro, bs)])
    m2, s2 = summarize([a / b for a, b in zip(ro, om)])
    print(f"  ro/bs paired: median {m:.3f}, spread {s * 100:.1f}%;  ro/omp paired: median {m2:.3f}, spread {s2 * 100:.1f}%")
    print("  windows of 3 consecutive rounds (gpu-check's 3 rounds):")
    for w in range(n - 2):
        a, b = ro[w:w + 3], bs[w:w + 3]
        (am, asp), (bm, bsp) = summarize(a), summarize(b)
        old_r, old_s = am / bm, max(asp, bsp)
        new_r, new_s = summarize([x / y for x, y in zip(a, b)])
        print(f"    rounds {w}-{w + 2}: before: {old_r:.3f} spread {old_s * 100:4.1f}% {verdict(old_r, old_s):10}"
              f"  paired: {new_r:.3f} spread {new_s * 100:4.1f}% {verdict(new_r, new_s)}")
    print("  windows of 9 consecutive rounds (the new default --cpu-rounds), paired:")
    for w in range(n - 8):
        r9, s9 = summarize([x / y for x, y in zip(ro[w:w + 9], bs[w:w + 9])])
        print(f"    rounds {w}-{w + 8}: {r9:.3f} spread {s9 * 100:4.1f}% {verdict(r9, s9)}")
