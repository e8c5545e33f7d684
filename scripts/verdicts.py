"""The verdicts of scripts/bench-check and scripts/gpu-stream-compare: the
rule that turns a row's miss and spread into a verdict, the final verdict of
a row judged on its first run and its re-measure pooled, and the exit status.

A row's margin is how far its median lies from the target, as a fraction of
the target (its miss, negative on a pass). A row is conclusive when its
spread does not exceed that margin: "pass" or FAIL. One whose spread exceeds
its margin, on either side of the target, asks for a re-measure; the first
run's samples and the re-measure's are then judged together, and a row still
not conclusive on them is "inconclusive", a failure. A close pass is
re-measured as a close miss is, and neither is judged on the re-measure
alone: the first run counts as much as the re-measure does, sample for
sample."""
import sys

FAILING = ("FAIL", "re-measure", "inconclusive")
KEPT = ("value", "baseline_value", "baseline", "ratio", "spread", "miss", "shown", "rounds", "repetitions")


def conclusive(miss, spread):
    """Returns whether the spread leaves the side of the target in no doubt:
    a miss within or at the spread is not, nor a pass by less than it."""
    return miss > spread if miss > 0 else -miss >= spread


def by(miss):
    """Returns "misses by 3.0%" or "passes by 3.0%"."""
    return f"{'misses' if miss > 0 else 'passes'} by {abs(miss) * 100:.1f}%"


def verdict_of(miss, spread):
    """Returns (verdict, reason) of one measurement: a row whose spread exceeds
    its margin asks for a re-measure, never passes and never fails outright."""
    if not conclusive(miss, spread):
        return "re-measure", (f"{by(miss)}, within the spread {spread * 100:.1f}%: "
                              "re-measure with more interleaved rounds")
    if miss > 0:
        return "FAIL", f"{by(miss)}, beyond the spread {spread * 100:.1f}%"
    return "pass", ""


def settle(first, pooled, samples):
    """Returns the final row of one that asked for a re-measure, from the row
    judged on the first run's samples and the re-measure's pooled; samples
    says how many ("5 repetitions and the re-measure's 15"). The first run's
    figures stay beside it under "first"."""
    row = dict(pooled)
    row["first"] = {k: first[k] for k in KEPT if k in first}
    ruled = "miss" in pooled and pooled["verdict"] == verdict_of(pooled["miss"], pooled["spread"])[0]
    if not ruled:  # the re-measure failed, or its sides ran other code
        row.update(verdict="FAIL", reason="re-measure: " + pooled.get("reason", pooled["verdict"]))
        return row
    miss, spread = pooled["miss"], pooled["spread"]
    within = "within" if pooled["verdict"] == "re-measure" else "beyond"
    row["verdict"] = {"pass": "pass on re-measure", "re-measure": "inconclusive"}.get(pooled["verdict"], "FAIL")
    alone = by(first["miss"]).replace("es by", "ed by")
    row["reason"] = (f"the first run's {samples} pooled: {by(miss)}, {within} the spread {spread * 100:.1f}%; "
                     f"the first run alone {alone}, spread {first['spread'] * 100:.1f}%")
    return row


def counts(rows):
    """Returns the closing line: how many rows of each verdict."""
    n = {v: sum(r["verdict"] == v for r in rows)
         for v in ("pass", "pass on re-measure", "re-measure", "inconclusive", "FAIL", "not run")}
    shown = sum(r["verdict"] == "shown" for r in rows)
    return (f"{n['pass']} pass, {n['pass on re-measure']} pass on re-measure, {n['re-measure']} re-measure, "
            f"{n['inconclusive']} inconclusive, {n['FAIL']} FAIL, {n['not run']} not run"
            + (f", {shown} shown" if shown else ""))


def exit_status(tool, rows, allow_not_run):
    """Returns 1 when a row fails (FAIL, re-measure, inconclusive) or when a
    row was not run that allow_not_run does not allow: True allows every
    one, a collection of row ids only those (rows a caller left out by
    name); says why on stderr."""
    allowed = (lambda r: True) if allow_not_run is True else (lambda r: r.get("id") in (allow_not_run or ()))
    not_run = [r for r in rows if r["verdict"] == "not run" and not allowed(r)]
    sys.stdout.flush()
    if not_run:
        print(f"{tool}: {len(not_run)} row{'s' if len(not_run) > 1 else ''} not run "
              f"({not_run[0].get('reason', '')[:100]}): a row not run never passes\n"
              "Fix: run them where they can run, or pass --allow-not-run where another gate judges them "
              "(scripts/gpu-check's table, against bench/gpu-allow.txt)", file=sys.stderr)
    return 1 if any(r["verdict"] in FAILING for r in rows) or not_run else 0
