#!/usr/bin/env python3
"""Times commands by direct exec, alternating, for scripts/bench.sh's patch
case.

Hosts call the helper through an exec API that takes an argv (Docker's and
Kubernetes' exec, a local spawn): no shell. Each command here is an argv run
the same way (fork, exec, wait4: no `sh -c` unless the argv is one), so a
`sh -c` form given beside it measures what the shell adds. Every iteration
runs every command once, in an order that alternates, each after TREE is
replaced by a fresh copy of ORIG and synced (untimed), with TREE as its
working directory, STDIN as its stdin and stdout to /dev/null.

Usage: exec.py ITERATIONS ORIG TREE STDIN NAME=ARGV... ; ARGV is split as a
shell would split it (shlex), then run without one. Prints one line per
command: NAME MEDIAN_WALL_SECONDS MEDIAN_CPU_SECONDS FAILED_RUNS (CPU is
user + system from wait4, the command's waited-for children included).
"""
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time


def main():
    iterations, orig, tree, stdin = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    cmds = [(name, shlex.split(argv)) for name, argv in (a.split("=", 1) for a in sys.argv[5:])]
    wall = {name: [] for name, _ in cmds}
    cpu = {name: [] for name, _ in cmds}
    failed = {name: 0 for name, _ in cmds}
    for i in range(iterations):
        for name, argv in cmds if i % 2 == 0 else cmds[::-1]:
            shutil.rmtree(tree, ignore_errors=True)
            shutil.copytree(orig, tree, symlinks=True)
            os.sync()
            with open(stdin, "rb") as f:
                start = time.perf_counter()
                p = subprocess.Popen(argv, cwd=tree, stdin=f, stdout=subprocess.DEVNULL)
                _, status, ru = os.wait4(p.pid, 0)
                wall[name].append(time.perf_counter() - start)
            p.returncode = os.waitstatus_to_exitcode(status)
            failed[name] += p.returncode != 0
            cpu[name].append(ru.ru_utime + ru.ru_stime)
    for name, _ in cmds:
        print(name, statistics.median(wall[name]), statistics.median(cpu[name]), failed[name])


main()
