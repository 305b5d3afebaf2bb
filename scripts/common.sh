# Shared by the scripts: install what a fresh machine lacks, loudly.
# shellcheck shell=bash

die() { echo "error: $*" >&2; exit 1; }

# apt_need PKG... : installs the Debian packages that are missing (root
# only), never changing one the machine has: a package installed in any
# version counts as present (no reinstall, no upgrade of it), and the install
# may neither remove nor downgrade anything. apt would otherwise make room:
# bookworm's qemu-system-x86 removes a qemu-utils from bookworm-backports
# (its Breaks: qemu-system-common << 8.0). Such a plan is refused, naming
# what it would remove or downgrade and why; the script fails there.
# scripts/no-remove.sh checks every apt-get install line for --no-remove.
apt_need() {
  local missing=() p plan
  for p in "$@"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  [ "$(id -u)" = 0 ] || die "missing Debian packages: ${missing[*]} (run as root, or install them with apt-get)"
  command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get to install them"
  apt_update
  # The plan first (-s changes nothing): refused if it removes anything.
  plan=$(LC_ALL=C DEBIAN_FRONTEND=noninteractive apt-get install -s --no-remove \
    -o Debug::pkgProblemResolver=1 "${missing[@]}" 2>&1) || apt_refuse "${missing[*]}" "$plan"
  apt_downgrades "$plan"
  echo "installing: ${missing[*]} ($(grep -E '^[0-9]+ upgraded' <<<"$plan" || echo 'no summary'))" >&2
  # --no-remove again, and no --allow-downgrades: apt itself aborts a plan
  # that changed since the simulation rather than remove or downgrade.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-remove "${missing[@]}" >&2 \
    || die "apt-get install --no-remove ${missing[*]} failed (see apt's message above)"
}

# apt_update : apt-get update once per run (the lists may be absent or stale).
apt_update() {
  [ -z "${AS_EDIT_APT_UPDATED:-}" ] || return 0
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
  export AS_EDIT_APT_UPDATED=1
}

# apt_can PKG... : true when apt_need PKG... would install them without
# removing or downgrading anything (or they are all installed); changes
# nothing but apt's lists. Lets a script choose another way (power-cut.sh's
# private qemu) instead of failing.
apt_can() {
  local missing=() p plan
  for p in "$@"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
  apt_update
  plan=$(LC_ALL=C apt-get install -s --no-remove "${missing[@]}" 2>&1) || return 1
  (apt_downgrades "$plan") 2>/dev/null
}

# apt_refuse PKGS PLAN : dies naming what apt would remove and the conflicts
# its resolver reported.
apt_refuse() {
  local removed why
  removed=$(sed -n '/^The following packages will be REMOVED:/,/^[^ ]/{/^  /p}' <<<"$2" | xargs)
  why=$(sed -n 's/^ *Broken \([^ ]*\) \([A-Za-z]*\) on \([^ ]*\) .*> *\((.*)\)\?$/\1 \2 \3 \4/p' <<<"$2" | sort -u | paste -sd ';' -)
  [ -n "$removed" ] || die "apt-get cannot install $1 without changing the machine: $(grep '^E:' <<<"$2" | paste -sd ' ' -)"
  local r vers=()
  for r in $removed; do vers+=("$r $(dpkg-query -W -f='${Version}' "$r" 2>/dev/null)"); done
  die "installing $1 would remove $(printf '%s, ' "${vers[@]}" | sed 's/, $//')${why:+ (apt: $why)};" \
    "nothing was changed. Install $1 yourself in versions that fit what you have" \
    "(apt-get install -s --no-remove $1 shows apt's plan), then run this again"
}

# apt_downgrades PLAN : dies if the simulated plan installs an older version
# of a package the machine has ("Inst pkg [old] (new suite ...)").
apt_downgrades() {
  local pkg old new down=()
  while read -r pkg old new; do
    dpkg --compare-versions "$new" lt "$old" && down+=("$pkg $old -> $new")
  done < <(sed -n 's/^Inst \([^ ]*\) \[\([^]]*\)\] (\([^ ]*\) .*/\1 \2 \3/p' <<<"$1")
  ((${#down[@]})) || return 0
  die "installing would downgrade $(printf '%s, ' "${down[@]}" | sed 's/, $//'); nothing was changed"
}

# rust_target_need TRIPLE... : adds rustup targets when missing.
rust_target_need() {
  local have
  have=$(rustup target list --installed 2>/dev/null) || die "rustup not found"
  for t in "$@"; do
    grep -qx "$t" <<<"$have" || rustup target add "$t" >&2 || die "rustup target add $t failed"
  done
}

pkg_version() { sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1; }
