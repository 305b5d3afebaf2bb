#!/usr/bin/env python3
"""The patch case: a 5-file, 10-chunk V4A patch against copies of this
repository's own source files, as-edit (--patch, stdin) against Codex's
apply_patch binary (the patch as its argument), both through `sh -c`; the
files are restored before every run. Prints the medians and their ratio.

Usage: scripts/bench/patch.py AS_EDIT APPLY_PATCH [RUNS]
  (scripts/patch-refs.sh prints where APPLY_PATCH is)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = ["src/engine/matcher.rs", "src/engine/gather.rs", "src/fs/lock.rs", "src/eol.rs", "src/hex.rs"]


def main():
    as_edit, codex = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    work = tempfile.mkdtemp(prefix="patch-bench-")
    tree = os.path.join(work, "t")

    def reset():
        shutil.rmtree(tree, ignore_errors=True)
        for f in FILES:
            os.makedirs(os.path.join(tree, os.path.dirname(f)), exist_ok=True)
            shutil.copy(os.path.join(REPO, f), os.path.join(tree, f))

    reset()
    # Two chunks per file, at a third and two thirds: a unique line with
    # one line of context on each side, changed in place.
    patch = ["*** Begin Patch"]
    for f in FILES:
        lines = open(os.path.join(tree, f)).read().split("\n")
        patch.append("*** Update File: " + f)
        for frac in (0.3, 0.7):
            i = int(len(lines) * frac)
            while not lines[i].strip() or lines.count(lines[i]) > 1 or not lines[i - 1].strip():
                i += 1
            patch += ["@@", " " + lines[i - 1], "-" + lines[i], "+" + lines[i] + " // patched", " " + lines[i + 1]]
    patch.append("*** End Patch")
    pfile = os.path.join(work, "patch.txt")
    with open(pfile, "w") as f:
        f.write("\n".join(patch) + "\n")

    def median(cmd):
        ts = []
        for _ in range(runs):
            reset()
            t = time.perf_counter()
            p = subprocess.run(cmd, cwd=tree, capture_output=True)
            ts.append(time.perf_counter() - t)
            if p.returncode != 0:
                sys.exit("failed: %r\n%s%s" % (cmd, p.stdout.decode(), p.stderr.decode()))
        return sorted(ts)[runs // 2]

    a = median(["sh", "-c", '"$0" --patch < "$1"', as_edit, pfile])
    c = median(["sh", "-c", '"$0" "$(cat "$1")"', codex, pfile])
    print("patch (5 files, 10 chunks, sh -c, median of %d): as-edit %.2f ms, Codex apply_patch %.2f ms, ratio %.3f"
          % (runs, a * 1e3, c * 1e3, a / c))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
