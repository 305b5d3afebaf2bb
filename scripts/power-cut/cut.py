#!/usr/bin/env python3
"""The host side of scripts/power-cut.sh: boots the guest, cuts its power
(SIGKILL to qemu) at a random instant, and holds every work disk against the
console log. Usage: see scripts/power-cut.sh, which builds the kernel tree,
the initramfs and the binary and passes them here.

Per cut, per disk: mount the image through a loop device (rw, so that the
kernel replays the ext4 journal or the xfs log, as the next boot would),
classify every file, remove and count temp residue, unmount, then fsck
read-only (e2fsck -fn, xfs_repair -n) on the recovered image.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

LINES = 250  # as in guest-init.sh
FILES = 4
FAILING = {3, 5}  # the kinds that must be refused (guest-init.sh)
RESIDUE = re.compile(r"^\.as-edit-[0-9a-f]+\.tmp$")
EVENT = re.compile(r"PC ([be]) (\d+) (\d+) (.*)")
COLS = ["cuts", "files", "torn", "empty", "lost", "residue", "inflight_new",
        "failed_seen", "misplanned", "unknown", "fsck_bad"]


def content(f, seq):
    t = "o%08d" % seq
    head = "power-cut file f%d op %s\n" % (f, t)
    body = "".join("f%d %s line %03d abcdefghijklmnopqrstuvwxyz0123456789\n" % (f, t, n)
                   for n in range(1, LINES + 1))
    return (head + body).encode()


def planned(k, proto):
    """The kind and files of the guest's k-th edit (guest-init.sh's formula)."""
    f = (k + k // 7) % 4
    kind = k % 7
    if kind == 4 and proto < 3:
        kind = 0
    return kind, ([f, (f + 1) % 4] if kind == 4 else [f])


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def die(msg):
    print("power-cut: error: " + msg, file=sys.stderr)
    sys.exit(2)


def mkfs(fs, img, size):
    with open(img, "wb") as fh:
        fh.truncate(size)
    cmd = ["mkfs.ext4", "-q", "-F", "-b", "4096", img] if fs == "ext4" else ["mkfs.xfs", "-q", "-f", img]
    r = run(cmd)
    if r.returncode:
        die("%s: %s" % (" ".join(cmd), r.stdout))


class Guest:
    def __init__(self, a, accel, append, console, disks):
        self.console = console
        # --qemu-dir: a private qemu's firmware directories (power-cut.sh).
        cmd = [a.qemu, "-accel", accel, "-m", "256", "-smp", "1",
               "-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none",
               "-no-reboot", "-serial", "file:" + console,
               "-kernel", a.kernel, "-initrd", a.initrd,
               "-append", ("console=ttyS0 loglevel=1 panic=-1 tsc=reliable no_timer_check "
                          "mitigations=off nokaslr " + append)]
        if accel == "tcg":
            cmd[3:3] = ["-cpu", "max"]
        for d in reversed(a.qemu_dir):
            cmd[1:1] = ["-L", d]
        for img in disks:
            cmd += ["-drive", "file=%s,format=raw,if=virtio,cache=none" % img]
        self.log = open(console + ".qemu", "w")
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)

    def text(self):
        try:
            with open(self.console, "rb") as fh:
                return fh.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def wait_for(self, marker, timeout):
        """Seconds since start when the console shows marker; None on timeout."""
        while time.monotonic() - self.t0 < timeout:
            t = self.text()
            if "PC fatal" in t:
                self.cut()
                die("guest: " + t[t.index("PC fatal"):].splitlines()[0])
            if marker in t:
                return time.monotonic() - self.t0
            if self.p.poll() is not None:
                die("qemu exited (%d) before %r: see %s.qemu" % (self.p.returncode, marker, self.console))
            time.sleep(0.02)
        return None

    def cut(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()
        self.log.close()


def probe_kvm(a, work):
    """KVM only where a short probe boot reaches the guest's init."""
    if not os.path.exists("/dev/kvm"):
        return False
    g = Guest(a, "kvm", "pc_probe=1", os.path.join(work, "probe-kvm.log"), [])
    try:
        return g.wait_for("PC probe ok", a.kvm_probe_seconds) is not None
    except SystemExit:
        return False
    finally:
        if g.p.poll() is None:
            g.cut()


class Disk:
    def __init__(self, i, fs, fsync, img):
        self.i, self.fs, self.fsync, self.img = i, fs, fsync, img
        self.base = [0] * FILES  # the edit each file held at the last check
        self.stats = dict.fromkeys(COLS, 0)
        self.notes = []
        self.succeeded = False  # some edit of the series returned 0

    def name(self):
        return "%s %s" % (self.fs, "--fsync" if self.fsync else "no fsync")


def events(text):
    """Per disk: {seq: [kind, files, rc or None]} from the console log."""
    out = {}
    # A line the cut interrupted is not in the log: its edit counts as one
    # whose begin line had not reached the console yet.
    whole = text[:text.rfind("\n") + 1]
    for m in EVENT.finditer(whole):
        what, disk, seq, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        ops = out.setdefault(disk, {})
        if what == "b":
            w = rest.split()
            ops[seq] = [int(w[0]), [int(x) for x in w[1:]], None]
        elif seq in ops:
            ops[seq][2] = int(rest.split()[0])
    return out


def check(d, ops, base, nops, proto, mnt, bad):
    """Holds disk d against its ops of this cut; returns False on a violation."""
    st, ok = d.stats, True
    st["cuts"] += 1
    r = run(["mount", "-o", "loop", d.img, mnt])
    if r.returncode:
        d.notes.append("mount failed: " + r.stdout.strip())
        st["fsck_bad"] += 1
        return False
    try:
        w = os.path.join(mnt, "w")
        for name in sorted(os.listdir(w)):
            if RESIDUE.match(name):
                st["residue"] += 1
                d.notes.append("residue %s (%d bytes)" % (name, os.path.getsize(os.path.join(w, name))))
                os.unlink(os.path.join(w, name))
            elif name not in ["f%d" % f for f in range(FILES)]:
                st["unknown"] += 1
                d.notes.append("unknown name " + name)
                ok = False
        last_begun = max(ops) if ops else base
        d.succeeded |= any(o[2] == 0 for o in ops.values())
        for s, o in sorted(ops.items()):
            if o[2] is not None and (o[2] == 0) == (o[0] in FAILING):
                # A refused kind that edited, or an edit that failed: the
                # editor is wrong, whatever the disk then holds.
                st["misplanned"] += 1
                ok = False
                d.notes.append("edit %d (kind %d) exited %d, not as planned" % (s, o[0], o[2]))
        for f in range(FILES):
            st["files"] += 1
            try:
                data = open(os.path.join(w, "f%d" % f), "rb").read()
            except FileNotFoundError:
                st["unknown"] += 1
                d.notes.append("f%d missing" % f)
                ok = False
                continue
            m = re.match(rb"power-cut file f(\d) op o(\d{8})\n", data)
            seq = int(m.group(2)) if m else -1
            if not data:
                st["empty"] += 1
                ok = False
                d.notes.append("f%d empty" % f)
                continue
            if not m or int(m.group(1)) != f or data != content(f, seq):
                st["torn"] += 1
                ok = False
                d.notes.append("f%d torn (%d bytes)" % (f, len(data)))
                continue
            mine = {s: o for s, o in ops.items() if f in o[1]}
            done = [s for s, o in mine.items() if o[2] == 0]
            if seq in mine and (mine[seq][2] not in (0, None) or (mine[seq][2] is None and mine[seq][0] in FAILING)):
                st["failed_seen"] += 1
                ok = False
                d.notes.append("f%d holds edit %d, which failed" % (f, seq))
                continue
            if seq == d.base[f] or seq in mine:
                if seq in mine and mine[seq][2] is None:
                    st["inflight_new"] += 1
            elif seq == last_begun + 1 and seq - base <= nops and f in planned(seq - base, proto)[1] \
                    and planned(seq - base, proto)[0] not in FAILING:
                # Its begin line had not reached the console yet.
                st["inflight_new"] += 1
                d.notes.append("f%d holds edit %d, begun but not yet logged" % (f, seq))
            else:
                st["unknown"] += 1
                ok = False
                d.notes.append("f%d holds edit %d, in no log (held %d)" % (f, seq, d.base[f]))
                continue
            if done and seq < max(done):
                st["lost"] += 1
                if d.fsync:
                    ok = False
                    d.notes.append("f%d lost edit %d (holds %d) after its success line" % (f, max(done), seq))
            d.base[f] = seq
    finally:
        r = run(["umount", mnt])
        if r.returncode:
            die("umount %s: %s" % (mnt, r.stdout))
    cmd = ["e2fsck", "-fn", d.img] if d.fs == "ext4" else ["xfs_repair", "-n", d.img]
    r = run(cmd)
    if r.returncode:
        st["fsck_bad"] += 1
        ok = False
        d.notes.append("%s exit %d: %s" % (cmd[0], r.returncode, r.stdout.strip()[-400:]))
    if not ok:
        keep = "%s.bad" % d.img
        shutil.copyfile(d.img, keep)
        bad.append(keep)
    return ok


def table(disks):
    head = "%-16s" % "series" + "".join("%13s" % c for c in COLS)
    rows = [head]
    for d in disks:
        rows.append("%-16s" % d.name() + "".join("%13d" % d.stats[c] for c in COLS))
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--proto", type=int, required=True)
    ap.add_argument("--cuts", type=int, default=3)
    ap.add_argument("--ops", type=int, default=60)
    ap.add_argument("--disks", default="ext4:1,ext4:0,xfs:1,xfs:0")
    ap.add_argument("--seconds", type=float, default=0,
                    help="start no cut after this many seconds (0: no bound)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--accel", default="auto", choices=["auto", "tcg", "kvm"])
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--qemu-dir", action="append", default=[])
    ap.add_argument("--kvm-probe-seconds", type=float, default=20)
    ap.add_argument("--boot-timeout", type=float, default=300)
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 32)
    rng = random.Random(seed)
    accel = a.accel
    if accel == "auto":
        accel = "kvm" if probe_kvm(a, a.work) else "tcg"
        if accel == "tcg":
            print("power-cut: a KVM guest did not reach init in %ds: TCG" % a.kvm_probe_seconds)
    disks = []
    for i, spec in enumerate(a.disks.split(",")):
        fs, fsync = spec.split(":")
        img = os.path.join(a.work, "disk%d-%s-%s.img" % (i, fs, "fsync" if fsync == "1" else "nofsync"))
        mkfs(fs, img, (64 if fs == "ext4" else 320) << 20)
        disks.append(Disk(i, fs, fsync == "1", img))
    mnt = tempfile.mkdtemp(prefix="mnt-", dir=a.work)
    for d in disks:
        # A mount failing after a cut is a finding; one failing now means the
        # harness cannot check (no loop devices, no xfs in the host kernel).
        r = run(["mount", "-o", "loop", d.img, mnt])
        if r.returncode:
            die("cannot loop-mount a fresh %s image: %s" % (d.fs, r.stdout.strip()))
        if run(["umount", mnt]).returncode:
            die("cannot unmount " + mnt)
    print("power-cut: %d cuts, %d edits per disk per boot, accel %s, seed %d, transactions %s"
          % (a.cuts, a.ops, accel, seed,
             "included (protocol %d)" % a.proto if a.proto >= 3 else
             "not included (the helper reports protocol %d; they need 3)" % a.proto), flush=True)
    series = None  # seconds from "ready" to "done", measured by the first cut
    bad, cycles, boots, after, lengths = [], [], [], 0, []
    start = time.monotonic()
    for c in range(1, a.cuts + 1):
        t0 = time.monotonic()
        if a.seconds and t0 - start > a.seconds:
            print("power-cut: stopping after %d cuts: the %ds bound is spent" % (c - 1, a.seconds))
            break
        base = c * 10000
        console = os.path.join(a.work, "console-%04d.log" % c)
        g = Guest(a, accel, "pc_base=%d pc_ops=%d pc_disks=%s" % (base, a.ops, a.disks),
                  console, [d.img for d in disks])
        ready = g.wait_for("PC ready", a.boot_timeout)
        if ready is None:
            g.cut()
            die("no 'PC ready' within %ds: see %s" % (a.boot_timeout, console))
        boots.append(ready)
        if series is None:
            # The first cut comes after the loops, and measures how long they take.
            end = g.wait_for("PC done", ready + a.boot_timeout)
            if end is None:
                g.cut()
                die("no 'PC done' within %ds: see %s" % (a.boot_timeout, console))
            series = end - ready
            lengths.append(series)
            delay = series
        else:
            delay = rng.uniform(0, series)
            # Waits watching for "PC done": a series seen to end sooner (the
            # load of a shared machine varies) shortens the estimate.
            end = g.wait_for("PC done", ready + delay)
            if end is not None:
                lengths.append(end - ready)
                series = sum(lengths[-8:]) / len(lengths[-8:])
            time.sleep(max(0.0, g.t0 + ready + delay - time.monotonic()))
        g.cut()
        log = g.text()
        evs = events(log)
        ok = all([check(d, evs.get(d.i, {}), base, a.ops, a.proto, mnt, bad) for d in disks])
        done = sum(1 for o in evs.values() for x in o.values() if x[2] is not None)
        cycles.append(time.monotonic() - t0)
        after += "PC done" in log
        print("cut %d: boot %.1fs, cut %.2fs after ready (series %.2fs), %d edits returned, cycle %.1fs%s"
              % (c, ready, delay, series, done, cycles[-1], "" if ok else ", VIOLATION"), flush=True)
        if not ok:
            break
        if c % 25 == 0:
            print(table(disks), flush=True)
    os.rmdir(mnt)
    print()
    print(table(disks))
    print()
    print("boot to ready: mean %.1fs; cycle (boot, edits, cut, check): mean %.1fs over %d cuts"
          % (sum(boots) / len(boots), sum(cycles) / len(cycles), len(cycles)))
    print("%d of the %d cuts came after every edit had returned (the first one always does)"
          % (after, len(cycles)))
    fail = False
    for d in disks:
        for n in d.notes:
            print("%s: %s" % (d.name(), n))
        s = d.stats
        if s["torn"] or s["empty"] or s["failed_seen"] or s["misplanned"] or s["unknown"] \
                or s["fsck_bad"] or (d.fsync and s["lost"]):
            fail = True
        if not d.succeeded:
            # A series in which no edit succeeded tested nothing.
            print("%s: no edit succeeded in any cut" % d.name())
            fail = True
    for b in bad:
        print("kept for inspection: " + b)
    if fail:
        print("power-cut: FAILED")
        sys.exit(1)
    print("power-cut: passed")


if __name__ == "__main__":
    main()
