"""What scripts/gpu-stream-compare reads and writes: BabelStream's --csv
table in either version's format, the Google Benchmark JSON of roster's
STREAM programs, the instruction set of a BabelStream binary's loops, and
the Markdown table of a results file with its check."""
import csv
import io
import json
import os
import re
import shutil
import subprocess

from provenance import shown

OPS = ["copy", "mul", "add", "triad", "dot"]
# BabelStream's bandwidth column, by version; its unit is MB/s (10^6 bytes).
CSV_FORMATS = {"max_MB_per_sec": "BabelStream main (max_MB_per_sec)",
               "max_mbytes_per_sec": "BabelStream 5.0 (max_mbytes_per_sec)"}
CSV_COLUMNS = ["function", "num_times", "n_elements", "sizeof", "min_runtime", "max_runtime", "avg_runtime"]


class FormatError(Exception):
    """An output this script cannot read; its message ends with a Fix."""


# ---- parsing -------------------------------------------------------------------

def parse_babelstream_csv(text, n=None, size=None):
    """Returns (format, {op: {"best": GB/s, "mean": GB/s}}) from BabelStream's
    --csv output, whichever lines the model prints before its table. Raises
    FormatError for a header it does not know, a missing op, or a table of
    another array size or element size than asked for."""
    lines = text.splitlines()
    head = next((i for i, l in enumerate(lines) if l.strip().lower().startswith("function,")), None)
    if head is None:
        raise FormatError("no CSV header row starting 'function,' in BabelStream's output\n"
                          "Fix: run BabelStream with --csv (its CUDA or OpenMP model) and check that it finished")
    cols = [c.strip() for c in lines[head].split(",")]
    rate = [c for c in cols if c.startswith("max_") and c.endswith("_per_sec")]
    if len(rate) != 1 or rate[0] not in CSV_FORMATS:
        raise FormatError(f"unknown BabelStream CSV format: the bandwidth column is {rate or 'missing'}, not one of "
                          f"{', '.join(CSV_FORMATS)} (header: {lines[head].strip()})\n"
                          "Fix: run BabelStream without a unit option (MB/s is its default), or teach "
                          "scripts/gpu-stream-compare the new column in CSV_FORMATS")
    missing = [c for c in CSV_COLUMNS if c not in cols]
    if missing:
        raise FormatError(f"unknown BabelStream CSV format: no column {', '.join(missing)} "
                          f"(header: {lines[head].strip()})\n"
                          "Fix: check the BabelStream version; scripts/gpu-stream-compare reads 5.0 and main")
    table = []
    for l in lines[head + 1:]:
        if l.count(",") != len(cols) - 1:
            break
        table.append(l)
    out = {}
    for r in csv.DictReader(io.StringIO("\n".join([lines[head]] + table)), fieldnames=None):
        r = {k.strip(): (v or "").strip() for k, v in r.items()}
        fn = r["function"].lower()
        if fn not in OPS:
            continue
        try:
            best = float(r[rate[0]]) * 1e-3
            mean = best * float(r["min_runtime"]) / float(r["avg_runtime"])
            got_n, got_size = int(r["n_elements"]), int(r["sizeof"])
        except (ValueError, ZeroDivisionError) as e:
            raise FormatError(f"BabelStream's row for {fn} does not parse ({e}): {r}\n"
                              "Fix: check the output file; it may be cut short") from e
        if (n is not None and got_n != n) or (size is not None and got_size != size):
            raise FormatError(f"BabelStream's {fn} ran {got_n} elements of {got_size} bytes, not {n} of {size}\n"
                              "Fix: run it with --arraysize as asked (and --float for float)")
        out[fn] = {"best": best, "mean": mean}
    absent = [op for op in OPS if op not in out]
    if absent:
        raise FormatError(f"BabelStream's table has no row for {', '.join(absent)} (functions named: "
                          f"{', '.join(r.split(',')[0] for r in table) or 'none'})\n"
                          "Fix: run its classic kernels (the default, no --only), and check the function names")
    return CSV_FORMATS[rate[0]], out


def load_json(path):
    try:
        return json.load(open(path)).get("benchmarks", [])
    except (OSError, ValueError):
        return None


def parse_cuda_stream(benchmarks):
    """Returns {(type, op): GB/s, the fastest run} from cuda_stream_bench's BM_stream_host_clock."""
    out = {}
    for b in benchmarks:
        name = b.get("name", "")
        if not name.startswith("BM_stream_host_clock<") or b.get("error_occurred"):
            continue
        t = "double" if "double" in name else "float"
        for op in OPS:
            if f"{op}_best_GBps" in b:
                out[(t, op)] = float(b[f"{op}_best_GBps"])
    return out


def parse_vulkan_stream(benchmarks):
    """Returns {(backend, type, op): GB/s} from vulkan_stream_bench."""
    out = {}
    for b in benchmarks:
        parts = b.get("name", "").split("/")
        if len(parts) < 4 or parts[0] != "stream" or b.get("error_occurred") or "GB/s" not in b:
            continue
        out[(parts[1], parts[2], parts[3])] = float(b["GB/s"])
    return out


def parse_cpu_stream(benchmarks, median):
    """Returns ({(variant, op): GB/s}, {(variant, op): label}) from
    cpu_stream_bench, the GB/s the median (median(values, 0.5)) of its
    repetitions; variant roster_cpu or roster_cpu_no_streaming."""
    vals, labels = {}, {}
    for b in benchmarks:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred") or "GB/s" not in b:
            continue
        parts = b.get("run_name", b.get("name", "")).split("/")
        if len(parts) >= 2 and parts[1] in OPS:
            vals.setdefault((parts[0], parts[1]), []).append(float(b["GB/s"]))
            labels[(parts[0], parts[1])] = b.get("label", "")
    return {k: median(v, 0.5) for k, v in vals.items()}, labels


def read(path):
    try:
        return open(path).read()
    except OSError:
        return None


def machine_isa(binary):
    """Returns the widest vector registers a binary's OpenMP stream code uses
    ("isa=avx512f", "isa=avx2" or "isa=sse2"), read with objdump, or None."""
    if not shutil.which("objdump"):
        return None
    r = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", binary], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    body, keep = [], False
    for line in r.stdout.splitlines():
        if line.endswith(">:"):
            keep = "OMPStream" in line
        elif keep:
            body.append(line)
    text = "\n".join(body)
    if not text:
        return None
    return "isa=avx512f" if "%zmm" in text else "isa=avx2" if "%ymm" in text else "isa=sse2"


def fmt_what(r):
    labels = r.get("labels")
    if labels and (labels[0] or labels[1]):
        return f"{r['what']} [{labels[0] or 'no label'} / {labels[1] or 'no label'}]"
    return r["what"]


# ---- Markdown ------------------------------------------------------------------

MARK_BEGIN = "<!-- gpu-stream-compare table from "
MARK_BEGIN_END = ": generated by scripts/gpu-stream-compare --markdown; do not edit -->"
MARK_END = "<!-- end of gpu-stream-compare table -->"


def markdown(doc, source, others=()):
    """Returns a saved stream-compare.json as a Markdown table between markers
    naming it (and the other runs compared with it), with its node, its
    BabelStream commit, how each side was timed and where the others disagree."""
    meta, rows = doc["meta"], doc["rows"]
    names = ",".join([source] + [p for p, _ in others])
    lines = [MARK_BEGIN + names + MARK_BEGIN_END,
             f"Measured by `scripts/gpu-stream-compare` on {meta['node']}, {meta['date']}, roster commit "
             f"{shown(meta['roster_commit'], meta.get('roster_diff_sha256'))}"
             + (" (clean tree, as the folder's meta.json records it: the node's copy of .git was older)"
                if meta.get("tree_from") else "")
             + f", against BabelStream {meta['babelstream_commit']} "
             f"({meta.get('babelstream_format', '?')}); median over {meta['rounds']} rounds, spread: the rounds' "
             f"interquartile range over the median"
             + (f" (the CPU rows: {meta['cpu_rounds']} rounds, the median of the rounds' ratios and their spread)"
                if meta.get("cpu_rounds") else "")
             + f". Raw rounds: the folder of `{source}`."]
    timings = []
    for r in rows:
        if r["timing"] not in timings:
            timings.append(r["timing"])
    lines += [f"Timing {i + 1}: {t}." for i, t in enumerate(timings)]
    mine = {r["what"]: r["verdict"] for r in rows}
    for path, other in others:
        diff = [f"{r['what']} {r['verdict']}" + (f" ({r['ratio']:.3f})" if "ratio" in r else "")
                for r in other["rows"] if r["what"] in mine and r["verdict"] != mine[r["what"]]]
        where = f"`{path}` on {other['meta']['node']}, {other['meta']['date']}"
        lines.append(f"Another run disagreed: {where}: " + "; ".join(diff) + "." if diff
                     else f"Another run agreed on every verdict: {where}.")
    lines += ["", "| figure | roster GB/s | baseline GB/s | ratio | target | spread | timing | verdict |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        t = timings.index(r["timing"]) + 1
        verdict = r["verdict"] + (f" ({r['reason']})" if r.get("reason") and r["verdict"] != "pass" else "")
        target = "shown" if r["verdict"] == "shown" else f">= {r['limit']:g}"
        if "ratio" in r:
            lines.append(f"| {fmt_what(r)} | {r['value']:.1f} | {r['baseline']:.1f} | {r['ratio']:.3f} | "
                         f"{target} | {r['spread'] * 100:.1f}% | {t} | {verdict.replace('|', '/')} |")
        else:
            lines.append(f"| {fmt_what(r)} | - | - | - | >= {r['limit']:g} | - | {t} | {verdict.replace('|', '/')} |")
    lines.append(MARK_END)
    return "\n".join(lines) + "\n"


def load_results(path):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        raise FormatError(f"cannot read {path} ({e})\nFix: name a stream-compare.json that this script wrote")
    if not isinstance(doc, dict) or doc.get("kind") != "gpu-stream-compare":
        raise FormatError(f"{path} is not a gpu-stream-compare results file\n"
                          "Fix: name a stream-compare.json written by scripts/gpu-stream-compare")
    return corrected(doc, os.path.join(os.path.dirname(path), "meta.json"))


def corrected(doc, meta_path):
    """The results with the tree its folder's meta.json names, where that file
    corrects the node's record: a node whose copy of .git was older than the
    tree it was sent records that older commit and a dirty tree; the meta.json
    beside the results (the one check-results reads) names the commit sent,
    full, with "roster_tree" starting "clean"."""
    try:
        fix = json.load(open(meta_path))
    except (OSError, ValueError):
        return doc
    commit = str(fix.get("roster_commit", "")) if isinstance(fix, dict) else ""
    if not re.match(r"^[0-9a-f]{40}$", commit) or not str(fix.get("roster_tree", "")).startswith("clean"):
        return doc
    meta = dict(doc["meta"])
    if meta.get("roster_commit") == commit and "roster_diff_sha256" not in meta:
        return doc
    meta["roster_commit"], meta["tree_from"] = commit, "meta.json"
    meta.pop("roster_diff_sha256", None)
    return dict(doc, meta=meta)


def check_readme(path, root):
    """Returns 0 when every generated table in path matches the files it names."""
    text = open(path).read()
    at = text.find(MARK_BEGIN)
    if at < 0:
        print(f"gpu-stream-compare: {path} has no gpu-stream-compare table\n"
              "Fix: paste the output of scripts/gpu-stream-compare --markdown RESULTS into it")
        return 1
    bad = 0
    while at >= 0:
        head_end = text.find(MARK_BEGIN_END, at)
        end = text.find(MARK_END, at)
        if head_end < 0 or end < 0 or head_end > end:
            print(f"gpu-stream-compare: {path}: a table's markers are broken\n"
                  "Fix: paste the output of scripts/gpu-stream-compare --markdown RESULTS again")
            return 1
        names = text[at + len(MARK_BEGIN):head_end].split(",")
        try:
            docs = [(n, load_results(os.path.join(root, n))) for n in names]
        except FormatError as e:
            print(f"gpu-stream-compare: {path} names a results file that cannot be used: {e}")
            return 1
        got = text[at:end + len(MARK_END)] + "\n"
        if got != markdown(docs[0][1], names[0], docs[1:]):
            print(f"gpu-stream-compare: the table in {path} differs from {names[0]}\n"
                  f"Fix: replace it with the output of scripts/gpu-stream-compare --markdown {names[0]}"
                  + (f" --others {','.join(names[1:])}" if len(names) > 1 else ""))
            bad += 1
        at = text.find(MARK_BEGIN, end)
    if not bad:
        print(f"gpu-stream-compare: {path} matches its results")
    return 1 if bad else 0
