# shellcheck shell=bash
# The reporting of the shell suites (tests/header, tests/man, tests/install), sourced once $tmp
# exists. A check collects mismatches with expect/complain between begin and end; it passes if
# there were none. Collecting (rather than stopping at the first problem) shows everything that
# is wrong in one run. The suite ends with: echo "$passed passed, $failed failed".
passed=0
failed=0
errs=$tmp/errs

begin() { : >"$errs"; }
complain() { printf '%s\n' "$*" >>"$errs"; }
expect() { # expect WHAT ACTUAL WANTED
	[[ "$2" == "$3" ]] || complain "$1: got '$2', want '$3'"
}
end() { # end DESCRIPTION
	if [[ -s $errs ]]; then
		echo "not ok - $1"
		sed 's/^/#   /' "$errs"
		failed=$((failed + 1))
	else
		echo "ok - $1"
		passed=$((passed + 1))
	fi
}
skip() { echo "SKIPPED: $1"; }
