#!/usr/bin/env bash
# Makes sure a real Redis is there for the bot store's tests (test/store) and the cluster soak.
# REDIS_URL set: the tests use that server and nothing is installed. Otherwise `redis-server` must be
# on PATH (the tests start their own, one per test file, on a free loopback port with no persistence):
# CI runs as root with Debian's package registry reachable, so install Debian's `redis-server` package
# where it is missing. Fails loudly (exit 1) when it cannot, so the Redis tests are never silently absent.
set -euo pipefail

if [ -n "${REDIS_URL:-}" ]; then
  echo "ensure-redis: using REDIS_URL (a server already running)"
  exit 0
fi

if command -v redis-server >/dev/null 2>&1; then
  echo "ensure-redis: $(redis-server --version | cut -d' ' -f1-3) already installed"
  exit 0
fi

# shellcheck source=apt-root.sh
source "$(dirname "$0")/apt-root.sh"
apt_root ensure-redis "redis-server is missing" "install Redis or set REDIS_URL"

echo "ensure-redis: installing Debian's redis-server package"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# The package's own service is not wanted: the tests start their own servers. policy-rc.d (exit 101)
# keeps the package's postinst from starting one where no init system runs (containers, CI).
POLICY=/usr/sbin/policy-rc.d
CREATED_POLICY=""
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
  $SUDO chmod +x "$POLICY"
  CREATED_POLICY=1
fi
$SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null || {
  [ -n "$CREATED_POLICY" ] && $SUDO rm -f "$POLICY"
  echo "ensure-redis: apt-get install redis-server failed" >&2
  exit 1
}
[ -n "$CREATED_POLICY" ] && $SUDO rm -f "$POLICY"

if ! command -v redis-server >/dev/null 2>&1; then
  echo "ensure-redis: apt-get finished but redis-server is still missing" >&2
  exit 1
fi
echo "ensure-redis: $(redis-server --version | cut -d' ' -f1-3) installed"
