#!/usr/bin/env python3
"""Times commands alternating, for scripts/bench.sh.

hyperfine runs each command's whole series in turn, so a slow minute on a
shared machine lands on one command only and skews the ratio. Here every
iteration runs every command once, in an order that alternates, each after
the file is restored and synced (untimed).

Usage: alternate.py ITERATIONS ORIG FILE NAME=CMD... ; prints one line per
command: NAME MEDIAN_SECONDS (the commands run through `sh -c`).
"""
import statistics
import subprocess
import sys
import time


def main():
    iterations, orig, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    cmds = [a.split("=", 1) for a in sys.argv[4:]]
    times = {name: [] for name, _ in cmds}
    restore = ["sh", "-c", 'cp "$1" "$2" && sync', "sh", orig, path]
    for i in range(iterations):
        for name, cmd in cmds if i % 2 == 0 else cmds[::-1]:
            subprocess.run(restore, check=True)
            start = time.perf_counter()
            subprocess.run(["sh", "-c", cmd], stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - start)
    for name, _ in cmds:
        print(name, statistics.median(times[name]))


main()
