#!/usr/bin/env bash
# make bench, row 17: PostgreSQL 15 recorded with --preset postgresql, on a throwaway cluster
# (its own data directory and socket in a temporary directory, run as the postgres user,
# stopped by PID at the end):
#   a. what `record -p` of one idle backend costs the rest of the server: pgbench's TPS
#      (PGBENCH_SECONDS per run, default 3, 2 clients, select-only) alone, while an idle
#      psql session's backend is recorded with the probes linked to it alone (the default),
#      and with links for every process (LEANPROFILER_PID_FILTER=0); ROUNDS interleaved
#      rounds, medians. Target: pid-filtered within 2% of alone;
#   b. the end of a recording of the whole server: `record -p POSTMASTER --preset postgresql`
#      while pgbench runs (4 clients, each a backend the postmaster forks: paused at its fork
#      and linked by itself), stopped by SIGINT: the summary's profiler.end_to_figures_ns
#      (target < 0.2 s), and the time from the signal to leanprofiler's exit (the probes
#      detached last), medians of ROUNDS runs.
# Usage: bench/postgres.sh [BUILD_DIR [LEANPROFILER]]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lp=${2:-$build/leanprofiler}
rounds=${ROUNDS:-5}
seconds=${PGBENCH_SECONDS:-3}
pgbin=/usr/lib/postgresql/15/bin
work=$(mktemp -d)
postmaster=""
session=""
recorder=""
cleanup() {
	[ -n "$recorder" ] && kill -INT "$recorder" 2>/dev/null && wait "$recorder" 2>/dev/null
	[ -n "$session" ] && kill "$session" 2>/dev/null && wait "$session" 2>/dev/null
	if [ -n "$postmaster" ]; then
		# Fast shutdown, to the server itself: runuser, its parent, passes no SIGINT on.
		if [ -s "$work/data/postmaster.pid" ]; then
			kill -INT "$(head -1 "$work/data/postmaster.pid")" 2>/dev/null || true
		else
			kill "$postmaster" 2>/dev/null || true
		fi
		wait "$postmaster" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF); run sudo make bench" >&2
	exit 1
fi
chown postgres: "$work"
as_pg() { runuser -u postgres -- "$@"; }
as_pg mkdir "$work/sock"
as_pg "$pgbin/initdb" -D "$work/data" -U lp -A trust --no-sync >"$work/initdb.log" 2>&1 ||
	{ echo "bench: row 17: initdb failed: $(cat "$work/initdb.log")" >&2; exit 1; }
runuser -u postgres -- "$pgbin/postgres" -D "$work/data" -c listen_addresses= -k "$work/sock" \
	-c fsync=off -c autovacuum=off >"$work/postgres.log" 2>&1 &
postmaster=$!
for _ in $(seq 1 600); do
	"$pgbin/pg_isready" -q -h "$work/sock" -U lp -d postgres && break
	kill -0 "$postmaster" 2>/dev/null || { echo "bench: row 17: postgres exited: $(cat "$work/postgres.log")" >&2; exit 1; }
	sleep 0.1 # polling the server's start, bounded: 60 s
done
# runuser's child is the postmaster: record that one.
postmaster_pid=$(head -1 "$work/data/postmaster.pid")
pgbench -i -q -s 4 -h "$work/sock" -U lp postgres >"$work/pgbench-init.log" 2>&1 ||
	{ echo "bench: row 17: pgbench -i failed: $(cat "$work/pgbench-init.log")" >&2; exit 1; }

tps() { # tps CLIENTS -> transactions per second of a select-only pgbench run
	pgbench -n -S -c "$1" -j "$1" -T "$seconds" -h "$work/sock" -U lp postgres 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p' | head -1
}

# An idle session: psql reading from a FIFO held open here; its backend's PID.
mkfifo "$work/psql.in"
psql -X -q -A -t -h "$work/sock" -U lp -d postgres <"$work/psql.in" >"$work/psql.out" 2>&1 &
session=$!
exec 3>"$work/psql.in"
echo "select pg_backend_pid();" >&3
for _ in $(seq 1 600); do
	[ -s "$work/psql.out" ] && break
	sleep 0.1
done
backend=$(head -1 "$work/psql.out" | tr -d ' ')
[ -n "$backend" ] && kill -0 "$backend" ||
	{ echo "bench: row 17: no idle backend: $(cat "$work/psql.out")" >&2; exit 1; }

start_recording() { # start_recording PID_FILTER PID
	: >"$work/rec.err" # here, before the recording's own shell could open it
	rm -rf "$work/out"
	LEANPROFILER_PID_FILTER=$1 "$lp" record --preset postgresql --summary-only \
		-o "$work/out" -p "$2" >/dev/null 2>"$work/rec.err" &
	recorder=$!
	for _ in $(seq 1 2000); do
		grep -q 'recording PID' "$work/rec.err" && return 0
		kill -0 "$recorder" 2>/dev/null || break
		sleep 0.01
	done
	echo "bench: row 17: record -p did not start: $(cat "$work/rec.err")" >&2
	exit 1
}

# Sets exit_ms: from SIGINT to leanprofiler's exit. (Not in a $(...): wait needs this shell.)
stop_recording() {
	local t0 t1
	t0=$(date +%s%N)
	kill -INT "$recorder"
	wait "$recorder" || true
	t1=$(date +%s%N)
	recorder=""
	exit_ms=$(((t1 - t0) / 1000000))
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: >"$work/tps"
: >"$work/end"
for ((i = 0; i < rounds; i++)); do
	echo "alone $(tps 2)" >>"$work/tps"
	for mode in pid file; do
		start_recording "$([ $mode = pid ] && echo 1 || echo 0)" "$backend"
		echo "$mode $(tps 2)" >>"$work/tps"
		stop_recording
	done
	# The whole server: its backends forked while recording.
	start_recording 1 "$postmaster_pid"
	pgbench -n -S -c 4 -j 4 -t 2000 -h "$work/sock" -U lp postgres >/dev/null 2>&1
	stop_recording
	if [ ! -s "$work/out/leanprofiler-summary.json" ]; then
		echo "bench: row 17: the recording of the server wrote no summary: $(cat "$work/rec.err")" >&2
		exit 1
	fi
	echo "$exit_ms $(jq '.profiler.end_to_figures_ns' "$work/out/leanprofiler-summary.json") \
$(jq '.profiler.processes_paused' "$work/out/leanprofiler-summary.json") \
$(jq '[.rows[] | .calls] | add' "$work/out/leanprofiler-summary.json")" >>"$work/end"
done
exec 3>&-

alone=$(awk '$1 == "alone" { print $2 }' "$work/tps" | median)
echo "17. PostgreSQL 15, --preset postgresql, a throwaway cluster; medians of $rounds interleaved rounds"
echo "   a. pgbench -S, 2 clients, ${seconds} s, while record -p records one idle backend"
printf '   %-52s %12s %10s\n' "" "TPS" "/alone"
for mode in alone pid file; do
	case $mode in
	alone) label="nothing recorded" ;;
	pid) label="an idle backend recorded, probes linked to it alone" ;;
	file) label="the same, file-wide links (PID_FILTER=0)" ;;
	esac
	m=$(awk -v m=$mode '$1 == m { print $2 }' "$work/tps" | median)
	printf '   %-52s %12.0f %10s\n' "$label" "$m" \
		"$(awk -v a="$m" -v b="$alone" 'BEGIN { printf "%.3f", a / b }')"
done
echo "   target: pid-filtered /alone >= 0.98"
echo "   b. record -p POSTMASTER while pgbench -S -c 4 -t 2000 (backends forked, paused, linked), SIGINT"
printf '   %-52s %12.1f\n' "end_to_figures_ns (target < 0.2 s), ms" \
	"$(awk '{ print $2 / 1e6 }' "$work/end" | median)"
printf '   %-52s %12s\n' "SIGINT to leanprofiler's exit (probes detached), ms" \
	"$(awk '{ print $1 }' "$work/end" | median)"
printf '   %-52s %12s\n' "processes paused at their fork, per run" \
	"$(awk '{ print $3 }' "$work/end" | median)"
printf '   %-52s %12s\n' "spans recorded, per run" "$(awk '{ print $4 }' "$work/end" | median)"
