#!/usr/bin/env bash
# Tests for the manual pages in man/.
#
# Usage: tests/man/run.sh [BUILD_DIR]   (from any directory; needs BUILD_DIR/leanprofiler)
#
# Prints "ok - ..." or "not ok - ..." per check, "#" lines with details under a
# failed check, and finally "N passed, M failed". Exits 1 if any failed.
#
# For every page:
#  1. groff renders it without a single warning (-ww), for the PostScript and
#     the UTF-8 terminal devices, and its source is ASCII (roff escapes for the rest).
#  2. It has NAME, SYNOPSIS and DESCRIPTION, and its .TH names the file's page and
#     section and the version 'leanprofiler --version' prints.
# For every man/leanprofiler-CMD.1, against 'leanprofiler CMD --help' (so that a
# page cannot go stale when an option is added, renamed or removed):
#  3. CMD is a command of 'leanprofiler --help', and --help exits 0.
#  4. The tags of its OPTIONS section are exactly the options --help prints, each
#     with its short options and its argument's name ("-o, --output=DIR",
#     "-h, -?, --help"); only argp's option block is read, not the examples.
#  5. Every --option the page mentions anywhere is an option of some command
#     (in examples, what follows a lone "--" is COMMAND's and not checked).
# For man/leanprofiler.1:
#  6. Every command of 'leanprofiler --help' has a tag in its COMMANDS section and a
#     page man/leanprofiler-CMD.1, and every COMMANDS tag is a command.
#  7. Every option of its OPTIONS section is accepted ('leanprofiler OPTION' exits 0).
# For man/leanprofiler.h.3:
#  8. Every public macro of include/leanprofiler.h (#define LP_..., not LP__...)
#     is named in it.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
build=${1:-build}
lp=$build/leanprofiler
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# argp's help layout is what is parsed below: the default one, whatever the caller set.
unset ARGP_HELP_FMT

# begin, complain, end
# shellcheck source=tests/checks.sh
. tests/checks.sh

if [[ ! -x $lp ]]; then
	echo "not ok - $lp is not built (make)"
	echo "0 passed, 1 failed"
	exit 1
fi

# --- roff to comparable text -----------------------------------------------------

# Text of roff source on stdin: font escapes gone, \- and \(aq made plain, a macro
# line's macro name, quotes and spaces dropped ("-o,--output=DIR").
tag_text() {
	sed -E 's/^\.[A-Za-z]+[[:space:]]*//; s/\\f(\[[A-Za-z]*\]|.)//g; s/\\-/-/g; s/\\\(aq/'\''/g; s/\\&//g; s/["[:space:]]//g'
}

# section PAGE NAME: the source lines of section NAME (.SH NAME up to the next .SH).
section() {
	awk -v want="$2" '
		/^\.SH / { name = substr($0, 5); gsub(/"/, "", name); inside = (name == want); next }
		inside' "$1"
}

# tags PAGE NAME: the tag line of every .TP and .TQ item of section NAME, as tag_text.
tags() {
	section "$1" "$2" | awk '/^\.(TP|TQ)/ { getline; print }' | tag_text
}

# help_options CMD: each option line of 'leanprofiler CMD --help', as tag_text makes a tag:
# "  -o, --output=DIR   text", "      --off-cpu   text" and, for an option with several
# short ones, "  -h, -?, --help   text" (argp's columns). Only argp's option block counts:
# it ends at the first line at column 0 after it ("Examples:", "Exit status:", argp's
# note), so an example continued on a line indented 6 ("      --span '...'") is no option.
help_options() {
	"$lp" "$1" --help 2>/dev/null |
		awk '/^  (-[^ ], |    )--[a-z0-9]/ { opts = 1 } opts && /^[^ ]/ { exit } opts' |
		sed -nE 's/^  ((-[^ ], )+|    )(--[a-z0-9][a-z0-9-]*(\[?=[^ ]+)?).*/\1\3/p' |
		tr -d ' '
}

# mentions PAGE: every --option the page's text names, once; in .EX blocks, what follows
# a lone "\-\-" on a line is the recorded COMMAND's.
mentions() {
	awk '
		/^\.EX/ { ex = 1; next }
		/^\.EE/ { ex = 0; next }
		/^\.\\"/ { next }
		{ line = $0; if (ex) sub(/ \\-\\- .*/, "", line); print line }' "$1" |
		sed 's/\\-/-/g' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

version=$("$lp" --version | awk '{ print $2 }')
commands=$("$lp" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
pages=(man/*.[1-9])

# Every long option of every command, and of leanprofiler itself (its page's OPTIONS).
for cmd in $commands; do
	help_options "$cmd"
done | grep -oE -- '--[a-z0-9-]+' >"$tmp/all-options"
tags man/leanprofiler.1 OPTIONS | grep -oE -- '--[a-z0-9-]+' >>"$tmp/all-options"
sort -u -o "$tmp/all-options" "$tmp/all-options"

# --- every page ------------------------------------------------------------------

for page in "${pages[@]}"; do
	base=$(basename "$page")
	name=${base%.*} sec=${base##*.}

	begin
	for dev in ps utf8; do
		out=$(groff -man -ww -z -T"$dev" "$page" 2>&1)
		rc=$?
		[[ $rc -eq 0 ]] || complain "groff -T$dev exited $rc"
		[[ -z $out ]] || complain "groff -T$dev: $out"
	done
	nonascii=$(LC_ALL=C grep -n '[^[:print:][:space:]]' "$page" | head -5)
	[[ -z $nonascii ]] || complain "not ASCII (use a roff escape): $nonascii"
	end "$page renders without a warning and is ASCII"

	begin
	for s in NAME SYNOPSIS DESCRIPTION; do
		grep -qE "^\.SH \"?$s\"?\$" "$page" || complain "no .SH $s"
	done
	th=$(grep -m1 '^\.TH ' "$page")
	want_title=$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]' | sed 's/-/\\-/g')
	[[ $th =~ ^\.TH\ ([^ ]+)\ ([0-9])\ [0-9-]+\ \"leanprofiler\ ([^\"]+)\" ]] ||
		complain "cannot read '$th' as .TH TITLE SECTION DATE \"leanprofiler VERSION\" ..."
	[[ ${BASH_REMATCH[1]:-} == "$want_title" ]] ||
		complain ".TH title '${BASH_REMATCH[1]:-}', want the page's name upper-cased ($want_title)"
	[[ ${BASH_REMATCH[2]:-} == "$sec" ]] || complain ".TH section '${BASH_REMATCH[2]:-}', want $sec"
	[[ ${BASH_REMATCH[3]:-} == "$version" ]] ||
		complain ".TH version '${BASH_REMATCH[3]:-}', but leanprofiler --version says $version"
	end "$page has NAME, SYNOPSIS, DESCRIPTION and a .TH of its name, section and version"
done

# --- leanprofiler-CMD.1 against 'leanprofiler CMD --help' -------------------------

for page in man/leanprofiler-*.1; do
	[[ -e $page ]] || continue
	cmd=$(basename "$page" .1)
	cmd=${cmd#leanprofiler-}

	begin
	grep -qx -- "$cmd" <<<"$commands" ||
		complain "'$cmd' is not a command of 'leanprofiler --help' ($(tr '\n' ' ' <<<"$commands"))"
	"$lp" "$cmd" --help >/dev/null 2>"$tmp/stderr"
	rc=$?
	[[ $rc -eq 0 ]] || complain "'leanprofiler $cmd --help' exited $rc: $(head -1 "$tmp/stderr")"
	end "$page: '$cmd' is a command and 'leanprofiler $cmd --help' exits 0"

	begin
	help_options "$cmd" | sort >"$tmp/help"
	tags "$page" OPTIONS | sort >"$tmp/tags"
	[[ -s $tmp/help ]] || complain "no option lines read from 'leanprofiler $cmd --help'"
	while read -r opt; do
		complain "'leanprofiler $cmd --help' prints $opt, the page's OPTIONS have no such tag"
	done < <(comm -23 "$tmp/help" "$tmp/tags")
	while read -r opt; do
		complain "the page's OPTIONS have $opt, 'leanprofiler $cmd --help' prints no such option"
	done < <(comm -13 "$tmp/help" "$tmp/tags")
	end "$page: OPTIONS are exactly the $(wc -l <"$tmp/help") options of 'leanprofiler $cmd --help'"

	begin
	while read -r opt; do
		grep -qx -- "$opt" "$tmp/all-options" ||
			complain "mentions $opt, which no command's --help has"
	done < <(mentions "$page")
	end "$page: every --option it mentions is an option of leanprofiler"
done

# --- leanprofiler.1 ----------------------------------------------------------------

page=man/leanprofiler.1
begin
tags "$page" COMMANDS | sort >"$tmp/listed"
for cmd in $commands; do
	grep -qx -- "$cmd" "$tmp/listed" || complain "command '$cmd' has no tag in COMMANDS"
	[[ -e man/leanprofiler-$cmd.1 ]] || complain "command '$cmd' has no page man/leanprofiler-$cmd.1"
done
while read -r cmd; do
	grep -qx -- "$cmd" <<<"$commands" || complain "COMMANDS has '$cmd', 'leanprofiler --help' has not"
done <"$tmp/listed"
end "$page: COMMANDS are the commands of 'leanprofiler --help', each with its page"

begin
tags "$page" OPTIONS | tr ',' '\n' | grep -E '^-' >"$tmp/top-options"
[[ -s $tmp/top-options ]] || complain "no options read from its OPTIONS"
while read -r opt; do
	"$lp" "$opt" >/dev/null 2>"$tmp/stderr"
	rc=$?
	[[ $rc -eq 0 ]] || complain "'leanprofiler $opt' exited $rc: $(head -1 "$tmp/stderr")"
done <"$tmp/top-options"
end "$page: every option in OPTIONS is accepted by leanprofiler"

begin
while read -r opt; do
	grep -qx -- "$opt" "$tmp/all-options" || complain "mentions $opt, which no command's --help has"
done < <(mentions "$page")
end "$page: every --option it mentions is an option of leanprofiler"

# --- leanprofiler.h.3 --------------------------------------------------------------

page=man/leanprofiler.h.3
begin
macros=$(sed -nE 's/^#[[:space:]]*define[[:space:]]+(LP_[A-Za-z0-9][A-Za-z0-9_]*).*/\1/p' \
	include/leanprofiler.h | grep -v '^LP__' | sort -u)
[[ -n $macros ]] || complain "no public macros read from include/leanprofiler.h"
text=$(sed 's/\\f\(\[[A-Za-z]*\]\|.\)//g' "$page")
for m in $macros; do
	grep -qw -- "$m" <<<"$text" || complain "$m (include/leanprofiler.h) is not in the page"
done
end "$page names every public macro of include/leanprofiler.h ($(wc -w <<<"$macros"))"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
