#!/usr/bin/env python3
"""Writes the patch case of scripts/bench.sh: copies of five of this
repository's own source files under WORK/orig/ (their paths as in the
repository) and WORK/patch.txt, a 5-file, 10-chunk V4A patch over them
(two chunks per file, at a third and two thirds: a line that occurs once,
with one line of context on each side, changed in place). bench.sh times
as-edit and Codex's apply_patch on it, each on a fresh copy of orig/.

Usage: scripts/bench/patch.py WORK
"""
import os
import shutil
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = [
    "crates/text/src/engine/matcher.rs",
    "crates/text/src/engine/gather.rs",
    "src/fs/lock.rs",
    "crates/text/src/eol.rs",
    "src/hex.rs",
]


def main():
    work = sys.argv[1]
    orig = os.path.join(work, "orig")
    patch = ["*** Begin Patch"]
    for f in FILES:
        os.makedirs(os.path.join(orig, os.path.dirname(f)), exist_ok=True)
        shutil.copy(os.path.join(REPO, f), os.path.join(orig, f))
        lines = open(os.path.join(orig, f)).read().split("\n")
        patch.append("*** Update File: " + f)
        for frac in (0.3, 0.7):
            i = int(len(lines) * frac)
            while not lines[i].strip() or lines.count(lines[i]) > 1 or not lines[i - 1].strip():
                i += 1
            patch += ["@@", " " + lines[i - 1], "-" + lines[i], "+" + lines[i] + " // patched", " " + lines[i + 1]]
    patch.append("*** End Patch")
    with open(os.path.join(work, "patch.txt"), "w") as out:
        out.write("\n".join(patch) + "\n")


if __name__ == "__main__":
    main()
