"""How scripts/bench-check shows its rows: the cells of a row, the table on
a terminal, the lines for scripts/gpu-check, and the results file it reads
them from (the closing count is in verdicts.py)."""
import json
import sys


def scale_from_ns(unit):
    return {"ns": 1.0, "us": 1e-3, "ms": 1e-6, "s": 1e-9}.get(unit, 1.0)


def fmt_value(row, key):
    v = row.get(key)
    if v is None:
        return "-"
    metric = row.get("metric", "")
    if metric in ("real_time", "cpu_time"):
        unit = row.get("unit") or ("us" if v >= 1e4 else "ns")
        return f"{v * scale_from_ns(unit):.4g} {unit}"
    if metric.endswith("_ns"):
        return f"{v:.4g} ns"
    if metric.endswith("_GBps"):
        return f"{v:.4g} GB/s"
    return f"{v:.4g} {metric}"


def fmt_target(row):
    c, lim = row["compare"], row.get("limit")
    if c == "ratio_max":
        return f"ratio <= {lim:g}"
    if c == "ratio_min":
        return f"ratio >= {lim:g}"
    if c == "value_max":
        return f"<= {lim:g} {row.get('unit', '')}"
    if c in ("added_max", "difference_max"):
        return f"added <= {lim:g} {row.get('unit', '')}"
    if c == "shown":
        return "shown, not limited"
    return "exit 0"


def fmt_what(row):
    """The figure's words, with the code path both sides ran when it is judged like for like."""
    labels = row.get("labels")
    if labels and labels[0] and labels[0] == labels[1]:
        return f"{row['what']} [both: {labels[0]}]"
    if labels:
        return f"{row['what']} [{labels[0] or 'no label'} / {labels[1] or 'no label'}]"
    return row["what"]


def fmt_added(row):
    if row.get("compare") == "difference_max" and row.get("shown") is not None:
        return f"{row['shown']:+.3g} {row.get('unit', '')}"
    return None


def table_rows(rows):
    out = []
    for r in rows:
        measured = fmt_added(r) or fmt_value(r, "value")
        out.append([fmt_what(r), measured, fmt_value(r, "baseline_value"),
                    f"{r['ratio']:.3f}" if r.get("ratio") is not None else "-", fmt_target(r),
                    f"{r['spread']*100:.1f}%" if r.get("spread") is not None else "-",
                    r["verdict"] + (f" ({r['reason']})" if r.get("reason") and r["verdict"] != "pass" else "")])
    return out


HEAD = ["figure", "measured", "baseline", "ratio", "target", "spread", "verdict"]


def print_table(rows, file=sys.stdout):
    body = table_rows(rows)
    widths = [max(len(h), *(len(b[i]) if i < 6 else 0 for b in body)) for i, h in enumerate(HEAD)]
    widths[6] = 0
    print("  ".join(h.ljust(w) for h, w in zip(HEAD, widths)).rstrip(), file=file)
    for b in body:
        print("  ".join(c.ljust(w) for c, w in zip(b, widths)).rstrip(), file=file)


def summary_rows(doc):
    """Returns one "id|verdict|detail" line per row (scripts/gpu-check's table)."""
    lines = []
    for r, b in zip(doc["rows"], table_rows(doc["rows"])):
        detail = f"{b[1]} against {b[2]}, ratio {b[3]}, target {b[4]}, spread {b[5]}"
        if r["verdict"] == "not run":
            detail = r.get("reason", "")
        elif r.get("reason") and r["verdict"] != "pass":
            detail += f": {r['reason']}"
        lines.append(f"{r['id']}|{r['verdict']}|{detail.replace('|', '/')}")
    return lines


def node_of(doc):
    """Returns the words that name the machine of a results file."""
    node = doc.get("node") or f"{doc['host']} ({doc['cpus']} CPUs)"
    return node


def load_results(path):
    """Returns a bench-check results file, or exits with what to do."""
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        sys.exit(f"bench-check: cannot read {path} ({e})\nFix: name a results file that bench-check wrote")
    if not isinstance(doc, dict) or doc.get("kind") != "bench-check" or "rows" not in doc:
        sys.exit(f"bench-check: {path} is not a bench-check results file\n"
                 "Fix: name a file that scripts/bench-check wrote (its \"kind\" is \"bench-check\")")
    return doc
