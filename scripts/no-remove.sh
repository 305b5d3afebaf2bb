#!/usr/bin/env bash
# The scripts never remove or downgrade a package the machine has (an apt
# install without --no-remove can: bookworm's qemu-system-x86 removes a
# qemu-utils from backports).
#  1. Every line under scripts/ that runs (or tells a user to run) an apt
#     install carries --no-remove; dpkg -i is not used at all. The rule is
#     first shown to catch a bad sample, so a broken pattern cannot pass.
#  2. apt_need (scripts/common.sh), run against stubs of apt-get, dpkg-query
#     and id: nothing is asked of apt when every package is installed in any
#     version; a plan that removes a package (the real qemu-utils case) or
#     downgrades one dies naming it and never reaches the real install; a
#     clean plan installs only the missing packages, with --no-remove;
#     apt_can (power-cut.sh's choice of a private qemu) says no to the same
#     removing and downgrading plans and yes to the clean one, simulating only.
# Usage: scripts/no-remove.sh   (no root, changes nothing; test.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "no-remove: FAIL: $*" >&2; exit 1; }

# offending DIR : lines that install through apt without --no-remove, or
# through dpkg (its -i, which would replace a version the machine has).
offending() {
  grep -rnE '(^|[^[:alnum:]_-])(apt-get|apt|aptitude)([[:space:]]+-[^[:space:]]+)*[[:space:]]+install([[:space:]]|$)|dpkg[[:space:]]+(-i|--install)' "$1" \
    | grep -v -- '--no-remove' || true
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The rule, on a sample it must catch (built here so this file holds
# no offending line itself), then on scripts/.
mkdir "$work/sample"
printf '  DEBIAN_FRONTEND=noninteractive apt-get %s -y -qq "$p"\n' install >"$work/sample/a.sh"
printf 'apt-get -y %s foo\n' install >>"$work/sample/a.sh"
printf 'dpkg %s foo.deb\n' -i >>"$work/sample/a.sh"
printf 'apt-get %s --no-remove -y foo\napt_need foo\n' install >>"$work/sample/a.sh"
[ "$(offending "$work/sample" | wc -l)" = 3 ] || fail "the rule does not catch the sample: $(offending "$work/sample")"
bad=$(offending scripts)
[ -z "$bad" ] || fail "apt installs without --no-remove under scripts/:
$bad"
echo "ok: every apt install line under scripts/ has --no-remove"

# 2. apt_need against stubs. STUB_INSTALLED: "pkg=version" words;
# STUB_PLAN/STUB_SIM_RC: what the simulation prints and exits with;
# every apt-get call is logged to $work/log.
mkdir "$work/bin"
cat >"$work/bin/id" <<'EOF'
#!/bin/sh
echo 0
EOF
cat >"$work/bin/dpkg-query" <<'EOF'
#!/bin/sh
# dpkg-query -W -f=FORMAT PKG
fmt=$2 pkg=$3
for kv in $STUB_INSTALLED; do
  [ "${kv%%=*}" = "$pkg" ] || continue
  case "$fmt" in *Status*) printf installed ;; *) printf '%s' "${kv#*=}" ;; esac
  exit 0
done
exit 1
EOF
cat >"$work/bin/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >>"$STUB_LOG"
case " $* " in
  *" -s "*) cat "$STUB_PLAN"; exit "$STUB_SIM_RC" ;;
esac
exit 0
EOF
chmod +x "$work/bin/"*
export STUB_LOG="$work/log" STUB_PLAN="$work/plan" PATH="$work/bin:$PATH"

# run_apt_need PKG... : apt_need in a subshell; sets rc and err.
run_apt_need() {
  : >"$STUB_LOG"
  rc=0
  err=$(AS_EDIT_APT_UPDATED=1 bash -c '. scripts/common.sh; apt_need "$@"' apt_need "$@" 2>&1) || rc=$?
}

export STUB_INSTALLED="e2fsprogs=1.47.0-2 qemu-utils=1:10.0.2+ds-2+deb13u1~bpo12+1" STUB_SIM_RC=0
: >"$STUB_PLAN"
run_apt_need e2fsprogs
[ "$rc" = 0 ] && [ ! -s "$STUB_LOG" ] || fail "all installed: rc $rc, apt-get called: $(cat "$STUB_LOG")"

# The plan apt made on this project's machine (bookworm, qemu-utils from
# bookworm-backports), trimmed.
cat >"$STUB_PLAN" <<'EOF'
Investigating (0) qemu-utils:amd64 < 1:10.0.2+ds-2+deb13u1~bpo12+1 @ii K NPb Ib >
Broken qemu-utils:amd64 Breaks on qemu-system-common:amd64 < none -> 1:7.2+dfsg-7+deb12u18+b3 @un puN > (< 1:8.0+dfsg-5~)
  Considering qemu-system-common:amd64 0 as a solution to qemu-utils:amd64 0
  Removing qemu-utils:amd64 rather than change qemu-system-common:amd64
The following packages will be REMOVED:
  qemu-utils
The following NEW packages will be installed:
  kmod qemu-system-common qemu-system-x86 xfsprogs
The following packages will be upgraded:
  libgbm1
1 upgraded, 4 newly installed, 1 to remove and 133 not upgraded.
E: Packages need to be removed but remove is disabled.
EOF
export STUB_SIM_RC=100
run_apt_need qemu-system-x86 e2fsprogs xfsprogs kmod
[ "$rc" = 1 ] || fail "a removing plan: exit $rc: $err"
want="error: installing qemu-system-x86 xfsprogs kmod would remove qemu-utils 1:10.0.2+ds-2+deb13u1~bpo12+1 (apt: qemu-utils:amd64 Breaks qemu-system-common:amd64 (< 1:8.0+dfsg-5~))"
[ "${err#"$want"}" != "$err" ] || fail "a removing plan: said '$err', not '$want…'"
[ "$(cat "$STUB_LOG")" = "apt-get install -s --no-remove -o Debug::pkgProblemResolver=1 qemu-system-x86 xfsprogs kmod" ] \
  || fail "a removing plan: apt-get was called as: $(cat "$STUB_LOG")"
echo "ok: a plan that removes qemu-utils is refused, naming it and the Breaks; only the simulation ran"
# apt_can (power-cut.sh's choice between installing qemu-system-x86 and a
# private copy) answers no to the same plan, running only the simulation.
: >"$STUB_LOG"
rc=0
AS_EDIT_APT_UPDATED=1 bash -c '. scripts/common.sh; apt_can "$@"' apt_can qemu-system-x86 e2fsprogs >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "apt_can on a removing plan: exit $rc"
[ "$(cat "$STUB_LOG")" = "apt-get install -s --no-remove qemu-system-x86" ] \
  || fail "apt_can on a removing plan: apt-get was called as: $(cat "$STUB_LOG")"
echo "ok: apt_can says no to a plan that removes qemu-utils, changing nothing"

cat >"$STUB_PLAN" <<'EOF'
The following packages will be DOWNGRADED:
  qemu-utils
Inst qemu-utils [1:10.0.2+ds-2+deb13u1~bpo12+1] (1:7.2+dfsg-7+deb12u18+b3 Debian:12.12/stable [amd64])
Inst kmod (30+20221128-1 Debian:12.12/stable [amd64])
EOF
export STUB_SIM_RC=0
run_apt_need kmod
[ "$rc" = 1 ] || fail "a downgrading plan: exit $rc: $err"
[ "$err" = "error: installing would downgrade qemu-utils 1:10.0.2+ds-2+deb13u1~bpo12+1 -> 1:7.2+dfsg-7+deb12u18+b3; nothing was changed" ] \
  || fail "a downgrading plan: said '$err'"
grep -q -- ' -y ' "$STUB_LOG" && fail "a downgrading plan reached the install: $(cat "$STUB_LOG")"
echo "ok: a plan that downgrades qemu-utils is refused, naming both versions"
rc=0
AS_EDIT_APT_UPDATED=1 bash -c '. scripts/common.sh; apt_can "$@"' apt_can kmod >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "apt_can on a downgrading plan: exit $rc"
echo "ok: apt_can says no to a plan that downgrades qemu-utils"

cat >"$STUB_PLAN" <<'EOF'
Inst libgbm1 [22.3.6-1+deb12u1] (22.3.6-1+deb12u2 Debian-Security:12/stable-security [amd64])
Inst kmod (30+20221128-1 Debian:12.12/stable [amd64])
Inst xfsprogs (6.1.0-1 Debian:12.12/stable [amd64])
1 upgraded, 2 newly installed, 0 to remove and 133 not upgraded.
EOF
run_apt_need e2fsprogs kmod xfsprogs
[ "$rc" = 0 ] || fail "a clean plan: exit $rc: $err"
[ "$(tail -n 1 "$STUB_LOG")" = "apt-get install -y -qq --no-remove kmod xfsprogs" ] \
  || fail "a clean plan: apt-get was called as: $(cat "$STUB_LOG")"
echo "ok: a clean plan installs only the missing packages, with --no-remove"
: >"$STUB_LOG"
rc=0
AS_EDIT_APT_UPDATED=1 bash -c '. scripts/common.sh; apt_can "$@"' apt_can e2fsprogs kmod xfsprogs >/dev/null 2>&1 || rc=$?
[ "$rc" = 0 ] && [ "$(cat "$STUB_LOG")" = "apt-get install -s --no-remove kmod xfsprogs" ] \
  || fail "apt_can on a clean plan: exit $rc, apt-get called as: $(cat "$STUB_LOG")"
: >"$STUB_LOG"
rc=0
AS_EDIT_APT_UPDATED=1 bash -c '. scripts/common.sh; apt_can "$@"' apt_can e2fsprogs qemu-utils >/dev/null 2>&1 || rc=$?
[ "$rc" = 0 ] && [ ! -s "$STUB_LOG" ] || fail "apt_can, all installed: exit $rc, apt-get called: $(cat "$STUB_LOG")"
echo "ok: apt_can says yes to a clean plan (simulated only) and to installed packages (apt not asked)"
