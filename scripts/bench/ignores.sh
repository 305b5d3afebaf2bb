#!/bin/sh
# Peak RSS and wall time of walks under large ignore files:
#   nested: eight nested 1 MiB .gitignore files, `glob` with gitignore:true
#           (and three, within the bound on the rules held for one path);
#   many:   one 1 MiB .gitignore over 3,000 files in a repository: protocol
#           `grep` with gitignore:true, the toolset's `grep`, and `rg`.
# The rules mix the kinds a real file holds: literal names, `*.ext`,
# directories (`d/`), anchored paths and wildcards (a few per cent).
# Usage: scripts/bench/ignores.sh [BIN]...   (default target/release/as-edit)
set -eu
[ $# -gt 0 ] || set -- target/release/as-edit
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
rules() { # $1 tag: 1 MiB of rules
    awk -v t="$1" 'BEGIN { n = 0; s = 0; while (s < 1048576) {
        k = n % 10
        if (k < 4) l = sprintf("%s_name_%d.txt", t, n)
        else if (k < 6) l = sprintf("*.%s%d", t, n)
        else if (k < 8) l = sprintf("%s_dir_%d/", t, n)
        else if (k < 9) l = sprintf("/%s/anchored/%d.o", t, n)
        else l = sprintf("%s_%d_*_[ab]?.log", t, n)
        if (s + length(l) + 1 > 1048576) break
        print l; s += length(l) + 1; n++ } }'
}
for n in 8 3; do
    d="$W/nested$n"
    for i in $(seq 1 $n); do
        mkdir -p "$d"; rules "n$i" > "$d/.gitignore"; echo x > "$d/f$i.txt"; d="$d/d"
    done
done
mkdir -p "$W/many/.git"
rules m > "$W/many/.gitignore"
i=0
while [ $i -lt 3000 ]; do
    mkdir -p "$W/many/s$((i % 30))"
    echo "needle $i" > "$W/many/s$((i % 30))/f_$i.txt"
    i=$((i + 1))
done
run() { # label, then the command
    label=$1; shift
    /usr/bin/time -f "%e s %M KiB" -o "$W/t" "$@" > "$W/out" 2>&1 || true
    printf '%-34s %-22s %s\n' "$label" "$(cat "$W/t")" "$(head -c 100 "$W/out" | tr '\n' ' ')"
}
for b in "$@"; do
    echo "== $b"
    for n in 8 3; do
        echo "{\"op\":\"glob\",\"pattern\":\"**\",\"path\":\"$W/nested$n\",\"gitignore\":true}" > "$W/r1"
        run "nested $n: glob gitignore:true" "$b" --stdin < "$W/r1"
    done
    echo "{\"op\":\"grep\",\"pattern\":\"needle\",\"path\":\"$W/many\",\"gitignore\":true,\"output\":\"count\"}" > "$W/r2"
    run "many: grep gitignore:true" "$b" --stdin < "$W/r2"
    echo '{"name":"grep","input":{"pattern":"needle"}}' > "$W/r3"
    b=$(realpath "$b")
    (cd "$W/many" && run "many: toolset grep" "$b" --toolset agent_toolset_20260401 --stdin < "$W/r3")
done
if command -v rg > /dev/null; then
    echo "== rg"
    run "many: rg -c" rg -c --no-config needle "$W/many"
fi
