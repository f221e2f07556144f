#!/usr/bin/env bash
# Show that tests/consumer/check-trace passes a good trace and really fails on broken ones.
# Usage: tests/consumer/selftest.sh     (runs setup.sh first; it is a no-op once installed)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$here/setup.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect NAME RC PATTERN: run check-trace on $tmp/NAME.json; want exit code RC and PATTERN
# (grep -E) somewhere in its output, so a failure counts only if it fails for the right reason.
expect() {
	local name=$1 want=$2 pattern=$3 rc=0
	"$here/check-trace" "$tmp/$name.json" >"$tmp/$name.out" 2>&1 || rc=$?
	if [ "$rc" -eq "$want" ] && grep -Eq -- "$pattern" "$tmp/$name.out"; then
		echo "ok   $name (exit $rc)"
	else
		echo "FAIL $name: exit $rc (want $want), output must match /$pattern/:"
		sed 's/^/     | /' "$tmp/$name.out"
		fails=$((fails + 1))
	fi
}

# What our writer emits: metadata, then X events in completion order (children first),
# ts/dur in us with 3 decimals. One thread: root 0..18440 holding 3 x (input.load, model.forward).
cat >"$tmp/good.json" <<'EOF'
{"displayTimeUnit":"ns","traceEvents":[
{"ph":"M","name":"process_name","pid":4242,"tid":4242,"args":{"name":"nested"}},
{"ph":"M","name":"thread_name","pid":4242,"tid":4243,"args":{"name":"nested"}},
{"ph":"X","name":"input.load","cat":"span","pid":4242,"tid":4243,"ts":10.000,"dur":2000.000,"args":{"phase":"load","module":"data","counter":1}},
{"ph":"X","name":"model.forward","cat":"span","pid":4242,"tid":4243,"ts":2030.000,"dur":4051.123,"args":{"phase":"forward","module":"encoder","counter":2}},
{"ph":"X","name":"input.load","cat":"span","pid":4242,"tid":4243,"ts":6140.000,"dur":2000.000,"args":{"phase":"load","module":"data","counter":3}},
{"ph":"X","name":"model.forward","cat":"span","pid":4242,"tid":4243,"ts":8160.000,"dur":4051.123,"args":{"phase":"forward","module":"encoder","counter":4}},
{"ph":"X","name":"input.load","cat":"span","pid":4242,"tid":4243,"ts":12270.000,"dur":2000.000,"args":{"phase":"load","module":"data","counter":5}},
{"ph":"X","name":"model.forward","cat":"span","pid":4242,"tid":4243,"ts":14290.000,"dur":4051.123,"args":{"phase":"forward","module":"encoder","counter":6}},
{"ph":"X","name":"train.step","cat":"span","pid":4242,"tid":4243,"ts":0.000,"dur":18440.000,"args":{"phase":"step","module":"main","counter":7}}
],"otherData":{"tool":"leanprofiler"}}
EOF
expect good 0 '7 calls, max depth 2.*total 18440 microseconds'

# Legal corner cases: a child starting with its parent, a zero-length span, two threads.
cat >"$tmp/good-edges.json" <<'EOF'
{"displayTimeUnit":"ns","traceEvents":[
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"a"}},
{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"b"}},
{"ph":"X","name":"child","cat":"span","pid":1,"tid":1,"ts":100.000,"dur":50.000,"args":{}},
{"ph":"X","name":"empty","cat":"span","pid":1,"tid":1,"ts":170.000,"dur":0.000,"args":{}},
{"ph":"X","name":"parent","cat":"span","pid":1,"tid":1,"ts":100.000,"dur":200.000,"args":{}},
{"ph":"X","name":"other","cat":"span","pid":1,"tid":2,"ts":0.000,"dur":500.000,"args":{}}
]}
EOF
expect good-edges 0 '2 profile'

# An end with no begin.
cat >"$tmp/bad-e-without-b.json" <<'EOF'
{"traceEvents":[
{"ph":"X","name":"ok","pid":1,"tid":1,"ts":0.000,"dur":10.000,"args":{}},
{"ph":"E","name":"orphan","pid":1,"tid":1,"ts":20.000}
]}
EOF
expect bad-e-without-b 1 'Tried to end frame "orphan'

# A child X ending after its parent (children-before-parents order, as our writer emits).
cat >"$tmp/bad-child-outlives-parent.json" <<'EOF'
{"traceEvents":[
{"ph":"X","name":"child","pid":1,"tid":1,"ts":50.000,"dur":100.000,"args":{}},
{"ph":"X","name":"parent","pid":1,"tid":1,"ts":0.000,"dur":100.000,"args":{}}
]}
EOF
expect bad-child-outlives-parent 1 'Tried to end "parent'

# A begin that is never closed.
cat >"$tmp/bad-unclosed-b.json" <<'EOF'
{"traceEvents":[
{"ph":"B","name":"forever","pid":1,"tid":1,"ts":0.000},
{"ph":"X","name":"ok","pid":1,"tid":1,"ts":5.000,"dur":10.000,"args":{}}
]}
EOF
expect bad-unclosed-b 1 'Frame "forever.*still open at end of profile'

# Writer pitfall: a child ending at the same microsecond as its parent. speedscope computes
# ts+dur in doubles, and here 53206.675+700.103 > 52360.060+1546.718 by one ulp, so the
# parent's end comes first and the nesting breaks. A writer must keep child ends <= parent ends
# after that addition.
cat >"$tmp/bad-same-end-rounding.json" <<'EOF'
{"traceEvents":[
{"ph":"X","name":"first","pid":1,"tid":1,"ts":0.000,"dur":1.000,"args":{}},
{"ph":"X","name":"child","pid":1,"tid":1,"ts":53206.675,"dur":700.103,"args":{}},
{"ph":"X","name":"parent","pid":1,"tid":1,"ts":52360.060,"dur":1546.718,"args":{}}
]}
EOF
expect bad-same-end-rounding 1 'Tried to end "parent'

# Valid JSON that is no trace at all must not pass as "no warnings".
echo '{"events":[]}' >"$tmp/bad-not-a-trace.json"
expect bad-not-a-trace 1 'want Trace Event Format'

if [ "$fails" -ne 0 ]; then
	echo "consumer selftest: $fails case(s) failed"
	exit 1
fi
echo "consumer selftest: all cases behave as expected"
