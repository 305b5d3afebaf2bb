#!/bin/sh
# The guest side of scripts/power-cut.sh: /init of the initramfs (busybox sh).
# Loads the modules, mounts each work disk, creates its files on the first
# boot, prints "PC ready", then runs one loop of edits per disk (in
# parallel) and prints every edit's begin and result line to the console,
# which the host holds the disk against after it cuts the power.
#
# Console lines (one per line, all start with "PC "):
#   PC b DISK SEQ KIND F1 [F2]   before an edit starts (F2: a transaction's second file)
#   PC e DISK SEQ RC RESULT      when it returns: as-edit's exit code and result line
# SEQ is the edit's number, unique over the whole series; every line of a
# file edited by it carries it, so the content names the edit that wrote it.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
say() { echo "PC $*"; }
fatal() { say "fatal $*"; exec sleep 100000; }

for m in $(cat /lib/modules/order); do
  # crc32c-intel needs SSE4.2; crc32c_generic stands in where it is missing.
  insmod "/lib/modules/$m" 2>/dev/null || say "note: insmod $m failed"
done

for w in $(cat /proc/cmdline); do
  case "$w" in
    pc_base=*) base=${w#pc_base=} ;;
    pc_ops=*) ops=${w#pc_ops=} ;;
    pc_disks=*) disks=$(echo "${w#pc_disks=}" | tr , ' ') ;;
  esac
done
# The accelerator probe: reaching this line is all it asks.
grep -q pc_probe /proc/cmdline && { say "probe ok"; exec sleep 100000; }
[ -n "$base" ] && [ -n "$ops" ] && [ -n "$disks" ] || fatal "missing pc_ parameters"

proto=$(as-edit --version | sed -n 's/.*(protocol \([0-9]*\);.*/\1/p')
[ -n "$proto" ] || fatal "as-edit --version: no protocol"
say "protocol $proto"

LINES=250
# content ID SEQ: the one valid content of file ID as written by edit SEQ.
content() {
  printf 'power-cut file %s op %s\n' "$1" "$2"
  l=1
  while [ $l -le $LINES ]; do
    printf '%s %s line %03d abcdefghijklmnopqrstuvwxyz0123456789\n' "$1" "$2" $l
    l=$((l + 1))
  done
}
tok() { printf 'o%08d' "$1"; }
b64() { printf %s "$1" | base64; }

i=0
for d in $disks; do
  fs=${d%%:*}
  dev=/dev/vd$(echo abcdefgh | cut -c $((i + 1)))
  mkdir -p /mnt/$i
  mount -t "$fs" "$dev" /mnt/$i || fatal "mount $fs $dev"
  if [ ! -d /mnt/$i/w ]; then
    mkdir /mnt/$i/w
    for f in 0 1 2 3; do content f$f "$(tok 0)" > /mnt/$i/w/f$f; done
    sync
    say "init $i"
  fi
  i=$((i + 1))
done

# loop DISK FSYNC: OPS edits to the disk's four files, seven kinds in turn.
loop() {
  n=$1
  dir=/mnt/$n/w
  flag=
  [ "$2" = 1 ] && flag=--fsync
  for f in 0 1 2 3; do
    read -r hdr < $dir/f$f || fatal "read $dir/f$f"
    set -- $hdr
    eval cur_$f=\$5
  done
  k=1
  while [ $k -le "$ops" ]; do
    seq=$((base + k))
    new=$(tok $seq)
    f=$(((k + k / 7) % 4))
    g=$(((f + 1) % 4))
    eval old=\$cur_$f
    eval oldg=\$cur_$g
    kind=$((k % 7))
    [ $kind = 4 ] && [ "$proto" -lt 3 ] && kind=0
    if [ $kind = 4 ]; then say "b $n $seq $kind $f $g"; else say "b $n $seq $kind $f"; fi
    p=$dir/f$f
    case $kind in
      0 | 2 | 6) # one edit in argv, every occurrence
        r=$(as-edit $flag -- "$p" "$(b64 "$old")" "$(b64 "$new")" true) ;;
      1) # a batch over --stdin: the header once, then the body
        r=$(printf '{"path":"%s","edits":[{"old":"op %s\\n","new":"op %s\\n"},{"old":" %s ","new":" %s ","replace_all":true}]}' \
          "$p" "$old" "$new" "$old" "$new" | as-edit $flag --stdin) ;;
      3) # a batch whose second edit is refused: nothing may be written
        r=$(printf '{"path":"%s","edits":[{"old":" %s ","new":" %s ","replace_all":true},{"old":"absent %s","new":"x"}]}' \
          "$p" "$old" "$new" "$new" | as-edit $flag --stdin) ;;
      4) # a transaction over two files (protocol 3)
        r=$(printf '{"files":[{"op":"edit","path":"%s","edits":[{"old":"%s","new":"%s","replace_all":true}]},{"op":"edit","path":"%s","edits":[{"old":"%s","new":"%s","replace_all":true}]}]}' \
          "$p" "$old" "$new" "$dir/f$g" "$oldg" "$new" | as-edit $flag --stdin) ;;
      5) # exact-once over 251 occurrences: refused, nothing may be written
        r=$(as-edit $flag -- "$p" "$(b64 "$old")" "$(b64 "$new")" false) ;;
    esac
    rc=$?
    say "e $n $seq $rc $r"
    if [ $rc = 0 ]; then
      eval cur_$f=$new
      [ $kind = 4 ] && eval cur_$g=$new
    fi
    k=$((k + 1))
  done
}

say ready
i=0
for d in $disks; do
  loop $i "${d#*:}" &
  i=$((i + 1))
done
wait
say done
# Never a clean shutdown: the host cuts the power, after the loops or during them.
exec sleep 100000
