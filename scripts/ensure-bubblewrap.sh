#!/usr/bin/env bash
# Make sure bubblewrap (`bwrap`) is present so the terminal tests exercise both of its
# launchers (bubblewrap and the standard-library fallback). Installs Debian's
# `bubblewrap` package when missing and we are root with apt-get; otherwise explains and
# leaves the bubblewrap-parametrized tests to skip (the fallback launcher still runs).
set -euo pipefail

if command -v bwrap >/dev/null; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "ensure-bubblewrap: installing Debian's bubblewrap package" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq bubblewrap >/dev/null
  command -v bwrap >/dev/null && exit 0
fi
echo "ensure-bubblewrap: bwrap not available; its terminal tests will be skipped" >&2
exit 0
