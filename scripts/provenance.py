"""The roster tree a measurement ran on, recorded by scripts/bench-check and
scripts/gpu-stream-compare and verified by scripts/check-results (issue 40).

A tree is named by the full commit (`git rev-parse HEAD`) and its state:
"roster_tree": "clean" when `git status --porcelain` lists nothing (ignored
files aside), else "roster_tree": "dirty: ..." with "roster_diff_sha256",
the sha256 of `git diff --binary HEAD` followed, for each untracked file
that is not ignored (sorted by path), by "\\0untracked <path>\\0" and its
bytes. The same tree gives the same hash, so a figure names the code it
measured; never a bare "+changes", which names no tree."""
import hashlib
import re
import subprocess

HEX40 = re.compile(r"^[0-9a-f]{40}$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _git(root, *args):
    return subprocess.run(["git", "-C", root] + list(args), capture_output=True)


def diff_sha256(root):
    """Returns (sha256 of the tree's changes against HEAD, tracked files
    changed, untracked files), as the module's docstring defines the hash."""
    h = hashlib.sha256(_git(root, "diff", "--binary", "HEAD").stdout)
    changed = [p for p in _git(root, "diff", "--name-only", "-z", "HEAD").stdout.split(b"\0") if p]
    untracked = sorted(p for p in _git(root, "ls-files", "--others", "--exclude-standard", "-z").stdout.split(b"\0")
                       if p)
    for p in untracked:
        h.update(b"\0untracked " + p + b"\0")
        try:
            with open(root.encode() + b"/" + p, "rb") as f:
                h.update(f.read())
        except OSError:
            pass  # a file removed while hashing, or a dangling link: its name alone
    return h.hexdigest(), len(changed), len(untracked)


def tree(root):
    """Returns the fields that name the tree at root: roster_commit (40 hex,
    or "unknown" outside a git checkout), roster_tree, and roster_diff_sha256
    when the tree is dirty."""
    head = _git(root, "rev-parse", "HEAD")
    commit = head.stdout.decode().strip() if head.returncode == 0 else ""
    if not HEX40.match(commit):
        return {"roster_commit": "unknown", "roster_tree": "unknown: not a git checkout"}
    digest, changed, untracked = diff_sha256(root)
    if not changed and not untracked:
        return {"roster_commit": commit, "roster_tree": "clean"}
    return {"roster_commit": commit,
            "roster_tree": f"dirty: {changed} tracked files changed, {untracked} untracked (see roster_diff_sha256)",
            "roster_diff_sha256": digest}


def shown(commit, diff_sha256=None):
    """Returns a commit as a table shows it: 7 hex digits of a full commit,
    with the start of its diff's hash when the tree was dirty; any other text
    (an older file's short commit) as it is."""
    text = commit[:7] if HEX40.match(str(commit)) else str(commit)
    return text + (f" plus changes (diff sha256 {diff_sha256[:12]})" if diff_sha256 else "")


def lacks(doc, commit_key, commit_known):
    """Returns what doc lacks to name its tree, one phrase each: the full
    commit under commit_key, one this repository holds (commit_known(c)),
    and the tree clean or hashed. Accepts "tree" for "roster_tree" (older
    hand-written meta.json files)."""
    missing = []
    if "+changes" in str(doc.get(commit_key, "")):
        missing.append('a tree named by a diff hash, not a bare "+changes"')
    c = str(doc.get(commit_key, ""))
    if not HEX40.match(c):
        missing.append(f'"{commit_key}" as a full 40-hex commit (git rev-parse HEAD)')
    elif not commit_known(c):
        missing.append(f'"{commit_key}" {c} in this repository\'s history')
    state = str(doc.get("roster_tree", doc.get("tree", "")))
    if not state.startswith("clean") and not HEX64.match(str(doc.get("roster_diff_sha256", ""))):
        missing.append('"roster_tree": "clean" or "roster_diff_sha256" (scripts/provenance.py)')
    return missing
