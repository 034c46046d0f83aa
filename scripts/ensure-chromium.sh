#!/usr/bin/env bash
# Makes sure /usr/bin/chromium exists for the emulator's end-to-end test (test/emulator).
# CI runs as root with Debian's package registry reachable: install Debian's `chromium` package
# where it is missing. Fails loudly (exit 1) when it cannot, so the e2e test is never silently absent.
set -euo pipefail

# CHROMIUM_PATH points at a browser already installed elsewhere (the test reads it too).
CHROMIUM=${CHROMIUM_PATH:-/usr/bin/chromium}

if [ -x "$CHROMIUM" ]; then
  echo "ensure-chromium: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM") already installed"
  exit 0
fi

# shellcheck source=apt-root.sh
source "$(dirname "$0")/apt-root.sh"
apt_root ensure-chromium "$CHROMIUM is missing" "install Chromium and set CHROMIUM_PATH to it"

if [ -n "${CHROMIUM_PATH:-}" ]; then
  echo "ensure-chromium: CHROMIUM_PATH=$CHROMIUM_PATH does not exist or is not executable" >&2
  exit 1
fi

echo "ensure-chromium: installing Debian's chromium package"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Fonts: readable text and emoji (reactions) in screenshots on a machine with no fonts yet.
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core fonts-noto-color-emoji >/dev/null

if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing" >&2
  exit 1
fi
echo "ensure-chromium: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM") installed"
