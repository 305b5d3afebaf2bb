#!/usr/bin/env python3
"""Times commands alternating, for scripts/bench.sh.

hyperfine runs each command's whole series in turn, so a slow minute on a
shared machine lands on one command only and skews the ratio. Here every
iteration runs every command once, in an order that alternates, each after
the file is restored and synced (untimed).

Usage: alternate.py ITERATIONS ORIG FILE NAME=CMD... ; prints one line per
command: NAME MEDIAN_SECONDS MEDIAN_CPU_SECONDS (the commands run through
`sh -c`; CPU is user + system from wait4, the shell's waited-for children
included: on a machine others load, CPU times compare binaries where wall
times drift with the load).
"""
import os
import statistics
import subprocess
import sys
import time


def main():
    iterations, orig, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    cmds = [a.split("=", 1) for a in sys.argv[4:]]
    times = {name: [] for name, _ in cmds}
    cpu = {name: [] for name, _ in cmds}
    restore = ["sh", "-c", 'cp "$1" "$2" && sync', "sh", orig, path]
    for i in range(iterations):
        for name, cmd in cmds if i % 2 == 0 else cmds[::-1]:
            subprocess.run(restore, check=True)
            start = time.perf_counter()
            p = subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            times[name].append(time.perf_counter() - start)
            p.returncode = os.waitstatus_to_exitcode(status)
            cpu[name].append(ru.ru_utime + ru.ru_stime)
    for name, _ in cmds:
        print(name, statistics.median(times[name]), statistics.median(cpu[name]))


main()
