#!/usr/bin/env bash
# Row 19 of make bench: what a Python span costs (the leanprofiler module, python/), not
# attached and recorded, beside the C markers' cost measured in the same rounds.
# Usage: sudo bench/python.sh [BUILD_DIR]   (after make: build/python)   ROUNDS=N (default 5)
#        PY_SPANS=N (recorded spans per run, default 200000; not attached: 20x as many)
#        PYTHON=/usr/bin/python3
# Goals (issue 31): a dormant `with span(...)` within 1.5x of the same `with` of a no-op
# context manager written in C (bench/pynoop.c); recorded, a span within 10% of the C
# marker's recorded cost (runtime strings, as Python's are: bench/span_runtime.c) plus the
# interpreter's own cost of that `with` (the dormant span's).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
spans=${PY_SPANS:-200000}
py=${PYTHON:-/usr/bin/python3}
lp=$build/leanprofiler
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "bench/python.sh: needs root (BPF); run it with sudo" >&2
	exit 1
fi
if [ ! -f "$build/python/leanprofiler/__init__.py" ]; then
	echo "bench/python.sh: no $build/python/leanprofiler: run make python" >&2
	exit 1
fi
inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
cc -O2 -fPIC -shared -I"$inc" bench/pynoop.c -o "$work/pynoop$suffix"
cc -O2 -Iinclude bench/span_runtime.c -o "$work/span_runtime"
cc -O2 -Iinclude examples/span_cost.c -o "$work/span_literal"
export PYTHONPATH="$(cd "$build/python" && pwd):$work"

ns_of() { sed -n 's/.*spans, \(-\{0,1\}[0-9.]*\) ns per span.*/\1/p'; }
pycost() { "$py" bench/pyspan_cost.py "$@" | ns_of; }
recorded() { "$lp" record --summary-only -o "$work/out" -- "$@" 2>/dev/null | ns_of; }

for r in $(seq 1 "$rounds"); do
	{
		echo "noop $(pycost noop $((spans * 20)))"
		echo "span $(pycost span $((spans * 20)))"
		echo "call $(pycost call $((spans * 20)))"
		echo "spanned $(pycost spanned $((spans * 20)))"
		echo "span_rec $(recorded "$py" bench/pyspan_cost.py span "$spans")"
		echo "spanned_rec $(recorded "$py" bench/pyspan_cost.py spanned "$spans")"
		echo "c_runtime_rec $(recorded "$work/span_runtime" "$spans")"
		echo "c_literal_rec $(recorded "$work/span_literal" "$spans")"
	} >>"$work/results"
	echo "bench/python.sh: round $r of $rounds done" >&2
done

median() {
	awk -v w="$1" '$1 == w { print $2 }' "$work/results" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
m() { median "$1"; }
echo "19. Python spans ($py, the leanprofiler module): medians of $rounds interleaved rounds,"
echo "    ns per span, the bare loop's cost subtracted (bench/pyspan_cost.py)"
printf '   %-60s %10s\n' "not attached: with noop(name, **meta) (a C no-op, pynoop.c)" "$(m noop)"
printf '   %-60s %10s\n' "not attached: with span(name, **meta)" "$(m span)"
printf '   %-60s %10s\n' "not attached: a call of an empty function" "$(m call)"
printf '   %-60s %10s\n' "not attached: the same call, @spanned(name, **meta)" "$(m spanned)"
printf '   %-60s %10s\n' "recorded: C markers, literal texts (examples/span_cost)" "$(m c_literal_rec)"
printf '   %-60s %10s\n' "recorded: C markers, runtime texts (bench/span_runtime.c)" "$(m c_runtime_rec)"
printf '   %-60s %10s\n' "recorded: with span(name, **meta)" "$(m span_rec)"
printf '   %-60s %10s\n' "recorded: @spanned call" "$(m spanned_rec)"
awk -v s="$(m span)" -v n="$(m noop)" -v r="$(m span_rec)" -v c="$(m c_runtime_rec)" 'BEGIN {
	printf "   %-60s %10.2f\n", "dormant span / noop (goal <= 1.5)", s / n
	printf "   %-60s %10.2f\n", "recorded span / (C runtime recorded + dormant span) (goal <= 1.10)", r / (c + s)
}'
