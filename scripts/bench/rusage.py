#!/usr/bin/env python3
"""CPU (user + system, from wait4's rusage) and wall time of `--stdin` runs,
alternating: every iteration runs every case once, in turn.

Usage: rusage.py ITERATIONS NAME=BINARY:REQUEST.json ... ; each case runs
`BINARY --stdin <REQUEST.json >/dev/null` (no shell: fork, exec, wait4) and
prints its median and minimum CPU and wall milliseconds.
"""
import os
import statistics
import sys
import time


def main():
    n = int(sys.argv[1])
    cases = [a.split("=", 1) for a in sys.argv[2:]]
    cpu = {name: [] for name, _ in cases}
    wall = {name: [] for name, _ in cases}
    for _ in range(n):
        for name, spec in cases:
            binary, request = spec.split(":", 1)
            fd = os.open(request, os.O_RDONLY)
            start = time.perf_counter()
            pid = os.fork()
            if pid == 0:
                os.dup2(fd, 0)
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                os.execv(binary, [binary, "--stdin"])
            _, _, ru = os.wait4(pid, 0)
            wall[name].append((time.perf_counter() - start) * 1000)
            os.close(fd)
            cpu[name].append((ru.ru_utime + ru.ru_stime) * 1000)
    for name, _ in cases:
        c, w = cpu[name], wall[name]
        print(f"{name:14s} cpu med {statistics.median(c):7.1f} min {min(c):7.1f}"
              f" | wall med {statistics.median(w):7.1f} min {min(w):7.1f}")


main()
