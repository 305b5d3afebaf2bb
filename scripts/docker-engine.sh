# Sourced by the Docker scripts: make sure a Docker engine answers, starting
# one if needed, and stop only the daemon started here (by its pid).
# shellcheck shell=bash

DOCKERD_PID=""
DOCKERD_LOG=""

# docker_up: as root installs docker.io when missing; uses a daemon that
# already answers, else starts dockerd in the background with a log file and
# polls `docker info` until it answers (or the daemon dies, or 120 s pass:
# a failure bound, not a synchronization).
docker_up() {
  [ "$(id -u)" = 0 ] && apt_need docker.io
  command -v docker >/dev/null || die "no docker CLI (install docker.io as root, or set AS_EDIT_SKIP_DOCKER=1)"
  docker info >/dev/null 2>&1 && return 0
  [ "$(id -u)" = 0 ] || die "no Docker daemon answers and only root can start one (or set AS_EDIT_SKIP_DOCKER=1)"
  command -v dockerd >/dev/null || die "no dockerd (install docker.io)"
  DOCKERD_LOG=$(mktemp /tmp/as-edit-dockerd.XXXXXX)
  # No bridge and no iptables rules: every container here runs with
  # --network none (the tests need no network), so the daemon needs neither
  # the iptables binary nor the bridge module, and leaves the host's
  # firewall alone.
  # setsid: its own session and process group, so a Ctrl-C in the terminal
  # reaches the script (whose EXIT trap removes containers and images, then
  # stops this daemon) but not the daemon those removals need. Without job
  # control the child is no group leader, so setsid does not fork: $! is
  # dockerd's pid.
  setsid dockerd --iptables=false --bridge=none >"$DOCKERD_LOG" 2>&1 </dev/null &
  DOCKERD_PID=$!
  echo "started dockerd (pid $DOCKERD_PID, log $DOCKERD_LOG)" >&2
  local deadline=$((SECONDS + 120))
  until docker info >/dev/null 2>&1; do
    if ! kill -0 "$DOCKERD_PID" 2>/dev/null || ((SECONDS > deadline)); then
      echo "dockerd did not come up; its last log lines:" >&2
      tail -n 20 "$DOCKERD_LOG" >&2
      die "cannot start the Docker engine"
    fi
    sleep 0.2
  done
  # A daemon in the caller's process group would die of the terminal's
  # SIGINT before the cleanup that needs it.
  # (Field 5 of /proc/PID/stat is the process group.)
  [ "$(cut -d' ' -f5 "/proc/$DOCKERD_PID/stat")" != "$(cut -d' ' -f5 /proc/$$/stat)" ] \
    || die "dockerd (pid $DOCKERD_PID) shares the script's process group"
}

# docker_down: stops the daemon docker_up started, if any.
docker_down() {
  [ -n "$DOCKERD_PID" ] || return 0
  kill "$DOCKERD_PID" 2>/dev/null || true
  wait "$DOCKERD_PID" 2>/dev/null || true
  rm -f "$DOCKERD_LOG"
  DOCKERD_PID=""
}
