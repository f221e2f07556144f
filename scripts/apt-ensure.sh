#!/usr/bin/env bash
# Install the Debian packages named on the command line that are not installed yet.
# Usage: scripts/apt-ensure.sh PKG...   (needs root when something is missing)
set -euo pipefail
missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "leanprofiler: missing packages: ${missing[*]}; run as root (sudo make ...) or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "leanprofiler: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A stale or absent package list makes 'apt-get install' fail: refresh it once.
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
