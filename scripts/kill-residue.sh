#!/usr/bin/env bash
# SIGKILL residue harness. On loop-mounted btrfs, ext4 and
# xfs images under /tmp, edits an 8 MiB CRLF file over and over and SIGKILLs
# each run at a random instant around its commit; after every kill the
# directory must hold the target alone and the target must be the old or the
# new bytes exactly. Then it times the commit window (linkat of the temp to
# the end of renameat, from tracefs syscall events) over uncut runs.
# Usage: scripts/kill-residue.sh [--kills N] [--windows N] [--max-residue N]
#          [--max-window-us N] [--fs "btrfs ext4 xfs"] [--bin PATH]
#   --kills N          random kills per file system (default 300)
#   --windows N        uncut runs traced for the commit window (default 40)
#   --max-residue N    residue tolerated per file system (default 0)
#   --max-window-us N  the largest median commit window accepted (default 500)
#   --bin PATH         the binary (default: the static release binary, built)
# Prints one table row per file system; exits nonzero on residue above
# --max-residue, on a median window above --max-window-us, on a target that
# is neither the old nor the new content, on kills that never straddled the
# commit, and when a file system cannot be made or mounted (never a silent
# skip). Every other kill is aimed at the process group. The link and the
# rename are made by a child of the edit that neither kill stops
# (src/fs/window.rs); this script, a subreaper, looks once it has ended.
# Before that child, the window (tens of microseconds) caught about one
# kill in 300 to 1,000: scripts/bench/README.md has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

kills=300 windows=40 max_residue=0 max_window_us=500 fss="btrfs ext4 xfs" bin=""
while (($#)); do
  case "$1" in
    --kills) kills=$2; shift ;;
    --windows) windows=$2; shift ;;
    --max-residue) max_residue=$2; shift ;;
    --max-window-us) max_window_us=$2; shift ;;
    --fs) fss=$2; shift ;;
    --bin) bin=$2; shift ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done

((windows > 0)) || die "--windows must be at least 1: the window is what this measures"
[ "$(id -u)" = 0 ] || die "kill-residue needs root: it loop-mounts btrfs, ext4 and xfs images (run as root, as CI does)"
apt_need btrfs-progs xfsprogs e2fsprogs python3 util-linux
if [ -z "$bin" ]; then
  scripts/build-static.sh x86_64-unknown-linux-musl >/dev/null
  bin="$PWD/dist/as-edit-$(pkg_version)-x86_64-unknown-linux-musl"
fi
bin=$(realpath "$bin")
[ -x "$bin" ] || die "no binary at $bin"

work=$(mktemp -d /tmp/as-edit-kill.XXXXXX)
cleanup() {
  local m
  for m in "$work"/mnt-*; do
    [ -d "$m" ] && mountpoint -q "$m" && umount "$m"
  done
  rm -rf "$work"
  [ -d "${trace:-}" ] && rmdir "$trace"
  [ -n "${mounted_tracefs:-}" ] && umount "$tracefs"
  return 0
}
trap cleanup EXIT

# A tracefs instance of our own for the window timings (kernel timestamps).
tracefs=/sys/kernel/tracing
if ! [ -e "$tracefs/instances" ]; then
  mount -t tracefs nodev "$tracefs" || die "cannot mount tracefs at $tracefs (needed to time the commit window)"
  mounted_tracefs=1
fi
trace="$tracefs/instances/as-edit-kill-$$"
mkdir "$trace" || die "cannot make the tracefs instance $trace"

# mount_fs FS DIR: a fresh sparse image of FS, loop-mounted at DIR.
mount_fs() {
  local fs=$1 dir=$2 img="$work/$1.img"
  # 512 MiB: above xfs's 300 MiB minimum; sparse, so it costs what is written.
  truncate -s 512M "$img"
  case "$fs" in
    btrfs) mkfs.btrfs -q -f "$img" >/dev/null ;;
    ext4) mkfs.ext4 -q -F "$img" >/dev/null ;;
    xfs) mkfs.xfs -q -f "$img" >/dev/null ;;
    *) die "unknown file system $fs" ;;
  esac || die "mkfs.$fs failed on $img"
  mkdir -p "$dir"
  mount -o loop "$img" "$dir" || die "cannot loop-mount the $fs image (needs root, loop devices and the $fs module: see dmesg)"
}

status=0
echo "| fs | kills | before the commit | after it | finished first | residue | commit window median | max |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for fs in $fss; do
  dir="$work/mnt-$fs"
  mount_fs "$fs" "$dir"
  KR_TRACE=$trace python3 - "$bin" "$dir" "$fs" "$kills" "$windows" "$max_residue" "$max_window_us" <<'PY' || status=1
import base64, os, random, re, signal, statistics, subprocess, sys, time

bin, mnt, fs = sys.argv[1:4]
kills, windows, max_residue, max_window_us = map(int, sys.argv[4:8])
work = os.path.join(mnt, "d")
os.mkdir(work)
target = os.path.join(work, "big.txt")
# 8 MiB of CRLF lines; the one match is on the first line, so the whole file
# is rewritten (CRLF to LF) into the temp after the first replacement.
line = b"a line of the big file, CRLF-terminated, to be copied into the temp\r\n"
old_bytes = b"NEEDLE here\r\n" + line * (8 * 1024 * 1024 // len(line))
new_bytes = old_bytes.replace(b"NEEDLE", b"REPLACED", 1).replace(b"\r\n", b"\n")
args = [bin, "--", target, base64.b64encode(b"NEEDLE").decode(), base64.b64encode(b"REPLACED").decode()]

def fail(msg):
    print(f"error: {fs}: {msg}", file=sys.stderr)
    sys.exit(1)

def restore():
    # A fresh, flushed target each time: the file an agent edits is on disk.
    for n in os.listdir(work):
        os.unlink(os.path.join(work, n))
    with open(target, "wb") as f:
        f.write(old_bytes)
        f.flush()
        os.fsync(f.fileno())

# as-edit makes the commit's two calls in a child that a SIGKILL to it does
# not stop (src/fs/window.rs): as a subreaper this script inherits that
# child, and looks once every process of the edit has ended.
import ctypes
PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    fail("prctl(PR_SET_CHILD_SUBREAPER) failed")

def reap_orphans():
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return

def run(delay, group=False):
    restore()
    t0 = time.monotonic()
    # Its own process group, so that a group kill reaches as-edit alone.
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    if delay is not None:
        time.sleep(delay)
        if group:
            os.killpg(p.pid, signal.SIGKILL)  # as `timeout` or job control does
        else:
            p.send_signal(signal.SIGKILL)
    rc = p.wait()
    reap_orphans()
    took = time.monotonic() - t0
    names = sorted(os.listdir(work))
    with open(target, "rb") as f:
        got = f.read()
    content = "old" if got == old_bytes else "new" if got == new_bytes else "mixed"
    return rc, [n for n in names if n != "big.txt"], content, took

# The run's length on this file system, uncut: kills are spread from a third
# of it to a quarter past it, so that they straddle the commit at its end.
# Measured again every 50 kills (the machine's load changes).
durs = []
def calibrate(n):
    for _ in range(n):
        rc, extra, content, took = run(None)
        durs.append(took)
        if rc != 0 or extra or content != "new":
            fail(f"an uncut edit failed: exit {rc}, extra {extra}, content {content}")
    return statistics.median(durs[-7:])
run(None)  # warm-up: the first run on a fresh file system is slower
d = calibrate(7)
ds = [d]

before = after = finished = residue = 0
names = []
for i in range(kills):
    if i and i % 50 == 0:
        d = calibrate(3)
        ds.append(d)
    # Every other kill is aimed at the process group.
    rc, extra, content, _ = run(random.uniform(d / 3, d * 1.25), group=i % 2 == 1)
    if content == "mixed":
        fail("the target is neither the old nor the new content")
    if extra:
        residue += 1
        names.append(f"{extra} ({content})")
    if rc == 0:
        finished += 1
    elif rc == -signal.SIGKILL:
        if content == "old":
            before += 1
        else:
            after += 1
    else:
        fail(f"exit {rc} from an edit that was not killed")

# The commit window: from the temp's linkat to the end of its renameat, as
# the kernel's own trace clock sees it (tracefs syscall events for this one
# pid: strace would stop the process at every syscall and widen it).
T = os.environ["KR_TRACE"]
def tw(name, value):
    with open(os.path.join(T, name), "w") as f:
        f.write(value)
events = ["sys_enter_linkat", "sys_exit_linkat", "sys_enter_renameat", "sys_exit_renameat",
          "sys_enter_renameat2", "sys_exit_renameat2"]
tw("trace_clock", "mono")
tw("options/event-fork", "1")  # the commit's child is traced too
for e in events:
    tw(f"events/syscalls/{e}/enable", "1")
win = []
for _ in range(windows):
    restore()
    tw("trace", "")
    # The child names itself before it execs, so the trace holds its syscalls only.
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   preexec_fn=lambda: tw("set_event_pid", str(os.getpid())))
    link = ren = None
    for l in open(os.path.join(T, "trace")):
        m = re.search(r" ([0-9]+\.[0-9]+): (sys_\w+)(\(| -> (0x[0-9a-f]+))", l)
        if not m:
            continue
        t, ev = float(m[1]), m[2]
        if ev == "sys_linkat" and m[3] == "(":
            link = t
        elif ev.startswith("sys_rename") and m[4] == "0x0" and link is not None:
            ren = t
    if link is None or ren is None:
        fail("no linkat and successful renameat in the trace of an uncut edit")
    win.append((ren - link) * 1e3)
for e in events:
    tw(f"events/syscalls/{e}/enable", "0")
tw("set_event_pid", "")
tw("options/event-fork", "0")
med = f"{statistics.median(win) * 1e3:.0f} µs"
mx = f"{max(win) * 1e3:.0f} µs"
print(f"| {fs} | {kills} | {before} | {after} | {finished} | {residue} | {med} | {mx} |", flush=True)
print(f"  ({fs}: uncut run {min(ds)*1e3:.1f}..{max(ds)*1e3:.1f} ms (median of the last 7, per 50 kills); kills at a third to 1.25 of it)", file=sys.stderr)
for n in names[:10]:
    print(f"  residue on {fs}: {n}", file=sys.stderr)
if residue > max_residue:
    fail(f"{residue} of {kills} kills left a temp (at most {max_residue} accepted)")
if statistics.median(win) * 1e3 > max_window_us:
    fail(f"the median commit window is {med}, over {max_window_us} µs")
# Kills that all landed on one side of the commit proved nothing about it.
if kills >= 20 and (before == 0 or after + finished == 0):
    fail(f"the kills did not straddle the commit ({before} before, {after + finished} after)")
PY
  umount "$dir"
done
exit "$status"
