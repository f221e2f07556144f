#!/usr/bin/env bash
# Install the independent trace consumer used by tests/consumer/check-trace:
# speedscope's own Trace Event importer, taken from its pinned npm release and
# run in Node (no browser needed).
#
# Usage: tests/consumer/setup.sh        (idempotent; needs root only if Node is missing)
# Installs into build/consumer/ at the repo root (override: LEANPROF_CONSUMER_DIR).
set -euo pipefail

SPEEDSCOPE_VERSION=1.25.0 # check-trace patches this exact bundle: bump both together

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${LEANPROF_CONSUMER_DIR:-$root/build/consumer}

# Node runs the importer; npm fetches it. Debian 12 ships Node 18, which is new enough.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	"$root/scripts/apt-ensure.sh" nodejs npm
fi

# Skip the network entirely when the pinned version is already there.
pkg=$dir/node_modules/speedscope/package.json
if [ -f "$pkg" ] && node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' \
	"$pkg" "$SPEEDSCOPE_VERSION"; then
	exit 0
fi

mkdir -p "$dir"
# --ignore-scripts: we only need the files in dist/; nothing of the package has to run at install time.
npm install --prefix "$dir" --save-exact --ignore-scripts --no-audit --no-fund --loglevel=error \
	"speedscope@$SPEEDSCOPE_VERSION" >/dev/null
echo "consumer: installed speedscope@$SPEEDSCOPE_VERSION in $dir" >&2
