#!/usr/bin/env bash
# make bench: one table, every figure from this run, medians of interleaved rounds (the
# machine is shared and noisy: only ratios measured side by side mean anything).
# Usage: bench/run.sh [BUILD_DIR]   ROUNDS=N (default 5)   SPANS=N (default 200000)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
spans=${SPANS:-200000}
lp=$build/leanprofiler
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF); run sudo make bench" >&2
	exit 1
fi

# The span loop, built twice: the default probe site and the nop5 site (LP_FAST_PROBES).
cc -O2 -Iinclude examples/span_cost.c -o "$work/span_default"
cc -O2 -Iinclude -DLP_FAST_PROBES examples/span_cost.c -o "$work/span_fast"

# ns per span (enter + exit) as the loop itself measured it.
ns_of() { sed -n 's/.*spans, \([0-9.]*\) ns per span.*/\1/p'; }

# bpftrace programs on the same markers: empty (the kernel's uprobe floor), and the
# cheapest one that still records what a span needs (its start per thread, its duration).
for site in default fast; do
	bin=$work/span_$site
	printf 'usdt:%s:leanprofiler:span_enter { }\nusdt:%s:leanprofiler:span_exit { }\n' \
		"$bin" "$bin" >"$work/floor_$site.bt"
	printf 'usdt:%s:leanprofiler:span_enter { @s[tid] = nsecs; }\nusdt:%s:leanprofiler:span_exit { @d[tid] = nsecs - @s[tid]; }\n' \
		"$bin" "$bin" >"$work/bpftrace_$site.bt"
done

measure() { # measure SITE WHAT -> ns per span
	local bin=$work/span_$1
	case $2 in
	dormant) "$bin" $((spans * 50)) | ns_of ;;
	floor) bpftrace "$work/floor_$1.bt" -c "$bin $spans" 2>/dev/null | ns_of ;;
	bpftrace) bpftrace "$work/bpftrace_$1.bt" -c "$bin $spans" 2>/dev/null | ns_of ;;
	leanprofiler) "$lp" record -o "$work/out" -- "$bin" "$spans" 2>/dev/null | ns_of ;;
	esac
}

whats="dormant floor leanprofiler bpftrace"
for r in $(seq 1 "$rounds"); do
	for site in default fast; do
		for what in $whats; do
			echo "$site $what $(measure "$site" "$what")" >>"$work/results"
		done
	done
	echo "bench: round $r of $rounds done" >&2
done

median() { # median SITE WHAT
	awk -v s="$1" -v w="$2" '$1 == s && $2 == w { print $3 }' "$work/results" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo
echo "leanprofiler bench: $rounds interleaved rounds of $spans spans (enter + exit), median ns per span"
printf '%-46s %14s %14s\n' "" "default site" "LP_FAST_PROBES"
row() { printf '%-46s %14s %14s\n' "$1" "$(median default "$2")" "$(median fast "$2")"; }
row "1. not attached (the marker's dormant cost)" dormant
row "2. floor: empty BPF programs (bpftrace)" floor
row "3. leanprofiler record (trace + summary)" leanprofiler
row "4. bpftrace: start per tid, duration in a map" bpftrace
ratio() { awk -v a="$(median "$1" "$2")" -v b="$(median "$1" "$3")" 'BEGIN { printf "%.2f", a / b }'; }
printf '%-46s %14s %14s\n' "ratio 3/2 (target <= 1.2)" "$(ratio default leanprofiler floor)" \
	"$(ratio fast leanprofiler floor)"
printf '%-46s %14s %14s\n' "ratio 3/4 (target <= 0.7)" "$(ratio default leanprofiler bpftrace)" \
	"$(ratio fast leanprofiler bpftrace)"

# 6. The consumer without BPF: decode -> nest -> stats -> trace from a recorded stream
# (bench/pipeline.c), spans per second on one core, against write(2) of the same bytes.
pspans=${PIPELINE_SPANS:-2000000}
echo
echo "6. writer and builder, no BPF ($build/bench/pipeline $pspans $rounds, medians):"
"$build/bench/pipeline" "$pspans" "$rounds" 2>/dev/null | sed 's/^/   /'
