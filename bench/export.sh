#!/usr/bin/env bash
# make bench row 13: `leanprofiler export` of a trace into a throwaway ClickHouse server on a
# loopback port (its own data directory, stopped by PID at the end), each recording exported twice
# in the same run, rows sent plain (--compress=none) and compressed (--compress=auto: gzip):
# bytes sent per span and per trace byte, throughput (spans/s, MB/s of the trace read), the
# exporter's CPU time and peak RSS (GNU time), then the ratios, for EXPORT_SPANS spans (default
# "100000 1000000": the RSS of the two sizes shows memory bounded).
# Usage: sudo bench/export.sh [BUILD_DIR]   (after make; records bench/producer.c with BPF)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lp=$build/leanprofiler
sizes=${EXPORT_SPANS:-"100000 1000000"}
work=$(mktemp -d)
server=
cleanup() {
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
http=$(free_port)
tcp=$(free_port)
mkdir -p "$work/ch"
cat >"$work/ch/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
 <logger><level>warning</level><log>$work/ch/server.log</log><errorlog>$work/ch/error.log</errorlog></logger>
 <http_port>$http</http_port><tcp_port>$tcp</tcp_port><listen_host>127.0.0.1</listen_host>
 <path>$work/ch/data/</path><tmp_path>$work/ch/data/tmp/</tmp_path>
 <user_files_path>$work/ch/data/user_files/</user_files_path>
 <format_schema_path>$work/ch/data/format_schemas/</format_schema_path>
 <users_config>$work/ch/users.xml</users_config>
 <default_profile>default</default_profile><default_database>default</default_database>
 <mark_cache_size>67108864</mark_cache_size><uncompressed_cache_size>67108864</uncompressed_cache_size>
 <timezone>UTC</timezone>
</yandex>
EOF
cat >"$work/ch/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
 <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
 <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
  <profile>default</profile><quota>default</quota></default></users>
 <quotas><default></default></quotas>
</yandex>
EOF
/usr/sbin/clickhouse-server --config-file="$work/ch/config.xml" >"$work/ch/stdout.log" 2>&1 &
server=$!
ch() { clickhouse-client --host 127.0.0.1 --port "$tcp" --query "$1"; }
for _ in $(seq 1 600); do
	ch "SELECT 1" >/dev/null 2>&1 && break
	kill -0 "$server" 2>/dev/null || { echo "bench: clickhouse-server exited: $(cat "$work/ch/stdout.log")" >&2; exit 1; }
	sleep 0.1 # polling the server's start, bounded: 60 s
done

cc -O2 -Iinclude -pthread bench/producer.c -o "$work/producer"
echo "13. export to ClickHouse 18.16 on loopback (leanprofiler export, one run each, plain then gzip)"
printf '   %-9s %-6s %9s %9s %9s %7s %10s %9s %8s %10s %11s %15s\n' spans "sent as" "trace MB" \
	"rows MB" "sent MB" B/span "sent/trace" "wall (s)" "CPU (s)" spans/s "trace MB/s" "peak RSS (KiB)"
for n in $sizes; do
	rec=$work/rec_$n
	"$lp" record --rows 1 -o "$rec" -- "$work/producer" 2 $((n / 2)) >/dev/null 2>&1
	spans=$(jq '[.rows[].calls] | add' "$rec/leanprofiler-summary.json")
	trace_b=$(stat -c %s "$rec/leanprofiler-trace.json")
	for compress in none auto; do
		/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$lp" export --clickhouse \
			"http://127.0.0.1:$http/" --host bench --compress=$compress "$rec" 2>"$work/err"
		read -r wall user sys rss <"$work/time"
		# "..., R MB of rows, S MB sent (gzip) in T s": the recording's last line.
		read -r rows sent how < <(sed -n 's/.* spans, \([0-9.]*\) MB of rows, \([0-9.]*\) MB sent (\([a-z]*\).* in .*/\1 \2 \3/p' \
			"$work/err" | tail -1) || true
		want=$([ "$compress" = none ] && echo plain || echo gzip)
		[ "$how" = "$want" ] || { echo "bench: --compress=$compress sent '$how', not $want: $(cat "$work/err")" >&2; exit 1; }
		stored=$(ch "SELECT count() FROM leanprofiler.spans WHERE host = 'bench'")
		[ "$stored" -eq "$spans" ] || { echo "bench: $stored spans stored, not $spans" >&2; exit 1; }
		# The next export is not the same run's second one ("already there"): a fresh database.
		ch "DROP DATABASE leanprofiler"
		awk -v n="$spans" -v h="$how" -v t="$trace_b" -v r="$rows" -v s="$sent" -v w="$wall" \
			-v c="$user $sys" -v m="$rss" 'BEGIN { split(c, u, " ")
			printf "   %-9s %-6s %9.1f %9s %9s %7.1f %10.3f %9s %8.2f %10.0f %11.1f %15s\n",
				n, h, t / 1e6, r, s, s * 1e6 / n, s * 1e6 / t, w, u[1] + u[2], n / w, t / 1e6 / w, m }' |
			tee -a "$work/rows_$n"
	done
	awk '{ sent[$2] = $5; cpu[$2] = $9; rate[$2] = $10 } END {
		printf "   %-9s with gzip: %.1f times fewer bytes sent, %.2f times the spans/s, %.2f times the exporter'"'"'s CPU\n",
			$1, sent["plain"] / sent["gzip"], rate["gzip"] / rate["plain"], cpu["gzip"] / cpu["plain"] }' "$work/rows_$n"
	rm -rf "$rec"
done
