#!/usr/bin/env bash
# make bench, row 18: the trace as Perfetto's protobuf (record --format perfetto) against the
# JSON trace, the same spans each time; medians of interleaved rounds (only the ratios of one
# run mean anything on a shared machine).
#  a. bench/pipeline (the pipeline alone, no BPF; PIPELINE_SPANS, default 1000000, 4 threads,
#     3 metadata items and a counter a span): wall and CPU seconds with each trace, bytes a span.
#  b. record -- bench/producer 2 PRODUCER_SPANS (default 1000000 a thread: 2 threads, 9 names,
#     "stage=N" metadata, one outer span with a counter): the trace's bytes a span, the
#     profiler's own CPU (summary profiler.user_cpu_ns + system_cpu_ns), end_to_figures_ns
#     (from the stop to the files written) and the producer's spans a second.
# The two walls differ by about as much as they vary from round to round on a shared
# machine, so (a) runs PIPELINE_ROUNDS times (default 7, ~2 s a round), (b) ROUNDS times.
# Usage: bench/pftrace.sh [BUILD_DIR]   ROUNDS=N (default 3)   PIPELINE_ROUNDS=N (default 7)
#        PIPELINE_SPANS   PRODUCER_SPANS
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lp=$build/leanprofiler
rounds=${ROUNDS:-3}
pl_rounds=${PIPELINE_ROUNDS:-7}
((pl_rounds >= rounds)) || pl_rounds=$rounds
pspans=${PIPELINE_SPANS:-1000000}
rspans=${PRODUCER_SPANS:-1000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }'; }

for ((i = 0; i < pl_rounds; i++)); do
	for f in json perfetto; do
		LP_PIPELINE_FORMAT=$f "$build/bench/pipeline" "$pspans" 1 "$work" 2>/dev/null |
			awk -v f="$f" '/^pipeline:/ { for (k = 1; k <= NF; k++) {
				if ($(k + 1) == "s," && $(k + 2) == "cpu") { print "pl_wall_" f, $k; print "pl_cpu_" f, $(k + 3) }
				if ($k == "thread'"'"'s") print "pl_tcpu_" f, $(k + 2)
				if ($k ~ /^[0-9.]+$/ && $(k + 1) == "bytes/span),") print "pl_bytes_" f, $k } }' \
			>>"$work/results"
		((i < rounds)) || continue
		rm -rf "$work/out"
		"$lp" record --format "$f" -o "$work/out" -- "$build/bench/producer" 2 "$rspans" \
			>"$work/rec.out" 2>/dev/null
		trace=$(ls "$work"/out/leanprofiler-trace.* | head -1)
		jq -r --arg f "$f" --argjson bytes "$(stat -c %s "$trace")" '
			"rec_bytes_\($f) \($bytes / .events)",
			"rec_cpu_\($f) \((.profiler.user_cpu_ns + .profiler.system_cpu_ns) / 1e9)",
			"rec_end_\($f) \(.profiler.end_to_figures_ns / 1e6)"' \
			"$work/out/leanprofiler-summary.json" >>"$work/results"
		awk -v f="$f" '/^producer:/ { print "rec_rate_" f, $(NF - 3) }' "$work/rec.out" >>"$work/results"
	done
done
m() { awk -v k="$1" '$1 == k { print $2 }' "$work/results" | median; }
echo "18. the trace as Perfetto's protobuf (--format perfetto) and as JSON, medians of" \
	"$pl_rounds (bench/pipeline) and $rounds (record)"
printf '   %-52s %12s %12s\n' "" json perfetto
printf '   %-52s %12s %12s\n' "bench/pipeline $pspans spans: wall s" "$(m pl_wall_json)" "$(m pl_wall_perfetto)"
# Each round's perfetto wall over the JSON's of the same round, their median.
paste <(awk '$1 == "pl_wall_json" { print $2 }' "$work/results") \
	<(awk '$1 == "pl_wall_perfetto" { print $2 }' "$work/results") |
	awk '$1 > 0 { print $2 / $1 }' | median >"$work/ratio"
printf '   %-52s %12s %12s\n' "bench/pipeline: wall / the JSON's (median of rounds)" 1 \
	"$(awk '{ printf "%.2f", $1 }' "$work/ratio")"
printf '   %-52s %12s %12s\n' "bench/pipeline: CPU s, all threads" "$(m pl_cpu_json)" "$(m pl_cpu_perfetto)"
printf '   %-52s %12s %12s\n' "bench/pipeline: CPU s, the pipeline's thread" "$(m pl_tcpu_json)" "$(m pl_tcpu_perfetto)"
printf '   %-52s %12s %12s\n' "bench/pipeline: trace bytes a span" "$(m pl_bytes_json)" "$(m pl_bytes_perfetto)"
printf '   %-52s %12s %12s\n' "record producer 2 x $rspans: trace bytes a span" "$(m rec_bytes_json)" "$(m rec_bytes_perfetto)"
printf '   %-52s %12s %12s\n' "record: leanprofiler's CPU s" "$(m rec_cpu_json)" "$(m rec_cpu_perfetto)"
printf '   %-52s %12s %12s\n' "record: stop to files written, ms" "$(m rec_end_json)" "$(m rec_end_perfetto)"
printf '   %-52s %12s %12s\n' "record: producer's spans/s (all threads)" "$(m rec_rate_json)" "$(m rec_rate_perfetto)"
echo "   goals: perfetto <= 20 trace bytes a span; its bench/pipeline wall <= the JSON's (ratio <= 1)"
