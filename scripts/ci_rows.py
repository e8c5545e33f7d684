"""The rows file a caller (CI) hands scripts/bench-check: which figures it
runs, which it leaves out and why, and the rows of those it names neither way."""
import fnmatch
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_ci_rows(path):
    """Returns ([run patterns], [(leave pattern, reason)]) from a rows file:
    one "run ID-PATTERN" or "leave ID-PATTERN reason" a line, # comments."""
    runs, leaves = [], []
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        word, _, rest = line.partition(" ")
        pat, _, why = rest.strip().partition(" ")
        if word == "run" and pat:
            runs.append(pat)
        elif word == "leave" and pat and why.strip():
            leaves.append((pat, why.strip()))
        else:
            sys.exit(f"bench-check: {path}:{n}: '{line}' is neither 'run ID' nor 'leave ID reason'\n"
                     "Fix: write 'run ID-PATTERN' or 'leave ID-PATTERN why it is left out'")
    return runs, leaves


def split_ci_rows(figures, path):
    """Returns (figures to measure, {id: reason} of those left out by name,
    rows of figures the file neither runs nor leaves, each a FAIL)."""
    runs, leaves = read_ci_rows(path)
    chosen, left, unnamed = [], {}, []
    name = os.path.relpath(os.path.abspath(path), ROOT)
    for f in figures:
        if any(fnmatch.fnmatch(f["id"], p) for p in runs):
            chosen.append(f)
            continue
        why = next((w for p, w in leaves if fnmatch.fnmatch(f["id"], p)), None)
        if why is None:
            unnamed.append({"id": f["id"], "what": f["what"], "compare": f["compare"], "limit": f.get("limit"),
                            "unit": f.get("unit", ""), "verdict": "FAIL",
                            "reason": f"{name} neither runs nor leaves this row. Fix: add 'run {f['id']}' or "
                                      f"'leave {f['id']} <why>' to {name}"})
        else:
            left[f["id"]] = f"left out by {name}: {why}"
    return chosen, left, unnamed


def with_left_out(rows, figures, left, unnamed):
    """Returns a row for every figure, in targets.json order: the measured
    ones, those left out by name ("not run", with the reason) and those a
    rows file neither runs nor leaves (FAIL)."""
    by_id = {r["id"]: r for r in rows + unnamed}
    by_id.update({f["id"]: {"id": f["id"], "what": f["what"], "compare": f["compare"], "limit": f.get("limit"),
                            "unit": f.get("unit", ""), "verdict": "not run", "reason": left[f["id"]]}
                  for f in figures if f["id"] in left})
    return [by_id[f["id"]] for f in figures if f["id"] in by_id]
