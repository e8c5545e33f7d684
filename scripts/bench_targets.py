"""bench/targets.json as scripts/bench-check reads it: the figures with their
placeholders expanded, whether a results file reported a figure, and the
check that every target sits within 2x of the figure it gates (so that a
two-fold regression fails), or says in its "why" why not. A results file
measured on a busy machine (its load average over twice its CPUs) sets no
target: it says what a row does under load, not what the code does."""
import glob
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def expand(targets):
    """Returns the figures with their OP/TYPE placeholders expanded."""
    out = []
    for f in targets["figures"]:
        ops = f.get("ops", [None])
        types = f.get("types", [None])
        for t in types:
            for o in ops:
                g = dict(f)
                for k in ("id", "what", "figure", "baseline"):
                    if k in g and g[k] is not None:
                        if o is not None:
                            g[k] = g[k].replace("OP", o)
                        if t is not None:
                            g[k] = g[k].replace("TYPE", t)
                g.pop("ops", None)
                g.pop("types", None)
                out.append(g)
    return out


def reported(f, progs):
    """Returns whether a results file's run of f's program reported f (or
    could not run it at all)."""
    prog = progs[f["program"]]
    if prog.get("not_run") or prog.get("error") or f["compare"] == "exit_zero":
        return True
    names = {b.get("run_name", b.get("name", "")) for b in prog.get("benchmarks", [])}
    return any(n == f["figure"] or n.startswith(f["figure"] + "/") for n in names)


def busy(doc):
    """Returns whether a results file was measured with the load average
    over twice the machine's CPUs."""
    try:
        return float(str(doc.get("load", "0")).split()[0]) > 2 * int(doc.get("cpus") or 0)
    except (ValueError, IndexError):
        return False


def check_targets(path, judge_all, root=ROOT):
    """Returns 0 when every target is within 2x of the figure it gates in the
    latest committed results file (under root) that measured it on a machine
    that was not busy, or says why not; judge_all is bench-check's (figures,
    programs, remeasured) -> rows."""
    docs = []
    for p in glob.glob(os.path.join(root, "bench", "results", "**", "*.json"), recursive=True):
        try:
            d = json.load(open(p))
        except (OSError, ValueError):
            continue
        if isinstance(d, dict) and d.get("kind") == "bench-check" and not busy(d):
            docs.append((d.get("date", ""), os.path.relpath(p, root), d))
    docs.sort(key=lambda x: x[:2], reverse=True)
    bad = whys = 0
    for f in (f for f in expand(json.load(open(path))) if f.get("limit") is not None):
        ran = [(p, d) for _, p, d in docs if f["program"] in d.get("programs", {}) and reported(f, d["programs"])
               and not any(d["programs"][f["program"]].get(k) for k in ("not_run", "error"))]
        got = None
        if ran:
            row = judge_all([f], ran[0][1]["programs"], ran[0][1].get("remeasured", {}))[0]
            got = row["shown"] if row.get("shown") is not None else row.get("ratio")
        if f.get("why"):
            whys += 1
        elif got is None or got <= 0 or not 0.5 <= f["limit"] / got <= 2:
            bad += 1
            print(f"bench-check: {f['id']}: target {f['limit']:g}{' ' + f['unit'] if f.get('unit') else ''} is not "
                  "within 2x of "
                  + (f"{got:.4g}, measured in {ran[0][0]}" if ran else "a figure in any committed results file")
                  + "\nFix: set the target within 2x of what it measures, or say why not in its \"why\"")
    print(f"bench-check: {bad} target{'s' if bad != 1 else ''} not within 2x of the figure it gates, "
          f"{whys} with a why")
    return 1 if bad else 0
