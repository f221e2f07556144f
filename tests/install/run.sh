#!/usr/bin/env bash
# Tests of installing leanprofiler: make install/uninstall, the bash completion, make deb.
#
# Usage: tests/install/run.sh [BUILD_DIR]   (after make; recording and the package need root)
#
# Prints "ok - ..." or "not ok - ..." per check (with "#" lines saying what was wrong),
# "SKIPPED: <reason>" for checks that cannot run here, and finally "N passed, M failed".
#
#  1. make install PREFIX=TMP puts exactly the expected files there and builds nothing;
#     DESTDIR stages the same tree under DESTDIR with the prefix left out of its files.
#  2. A copy of examples/nested.c compiles with `pkg-config --cflags leanprofiler` of the
#     prefix and nothing else, and the installed binary records it from another directory,
#     into -o DIR and by default into the current directory (or ./build).
#  3. man finds every installed man page; bash-completion loads the installed completion.
#  4. The completion, sourced in bash and called as readline would: commands, options (each
#     once), preset names, report --sort keys, export --compress modes, help's commands,
#     --span probe names of a program named after --, --all-processes or -p (names that
#     are shell code neither offered nor run), PIDs, directories.
#  5. make uninstall leaves no file under the prefix (nor under DESTDIR).
#  6. make deb: lintian finds no error; dpkg -i installs it, pkg-config finds the header
#     with no PKG_CONFIG_PATH, /usr/bin/leanprofiler records; dpkg -r removes every file
#     dpkg -L listed. Skipped when a leanprofiler the package would overwrite is there.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
build=${1:-build}
tmp=$(mktemp -d)
waiter_pid="" deb_installed=""
cleanup() {
	if [[ -n $waiter_pid ]]; then
		kill "$waiter_pid" 2>/dev/null
		wait "$waiter_pid" 2>/dev/null
	fi
	[[ -z $deb_installed ]] || dpkg -r leanprofiler >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# --- reporting: begin, expect, complain, end, skip ------------------------------
# shellcheck source=tests/checks.sh
. "$root/tests/checks.sh"
# run LOG CMD...: runs CMD with its output in LOG; on failure complains with LOG's tail.
run() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 || { complain "'$*' failed: $(tail -n 5 "$log" | tr '\n' ' ')"; return 1; }
}

[[ -x $build/leanprofiler ]] || { echo "not ok - no $build/leanprofiler: run make first"; echo "0 passed, 1 failed"; exit 1; }
version=$(sed -n 's/^#define LP_VERSION "\([^"]*\)".*/\1/p' user/*.c user/*/*.c | head -n 1)
mk() { make -C "$root" --no-print-directory OUT="$build" "$@"; }
is_root() { [[ $(id -u) -eq 0 ]]; }

# The files install puts under a prefix, from the tree: the fixed ones and man/'s pages.
expected_files() {
	local page
	printf '%s\n' bin/leanprofiler include/leanprofiler.h share/pkgconfig/leanprofiler.pc \
		share/bash-completion/completions/leanprofiler share/doc/leanprofiler/LICENSE \
		share/doc/leanprofiler/LICENSES/GPL-2.0
	for page in man/*.1 man/*.3; do
		[[ -f $page ]] && echo "share/man/man${page##*.}/${page##*/}"
	done
	# The Python module, which make builds where /usr/bin/python3 has its headers.
	if [[ -d $build/python/leanprofiler ]]; then
		printf '%s\n' "$py_site/leanprofiler/__init__.py" \
			"$py_site/leanprofiler/$(cd "$build/python/leanprofiler" && ls _native*.so)"
	fi
}
# Where make install puts it under a prefix other than /usr and /usr/local (python/sitedir.py).
py_site=$(/usr/bin/python3 -c 'import sys; print("lib/python%d.%d/site-packages" % sys.version_info[:2])' 2>/dev/null)
files_under() { (cd "$1" && find . ! -type d | sed 's|^\./||' | sort); }

# The span names examples/nested.c marks, read from its source.
nested_spans=$(grep -oE 'LP_SPAN_ENTER[A-Z_]*\("[^"]+"' examples/nested.c | sed 's/.*("//; s/"$//' |
	sort -u | paste -sd' ')
# check_recording WHAT DIR: DIR holds the trace and summary of one run of the nested copy.
check_recording() {
	local what=$1 dir=$2
	for f in leanprofiler-trace.json leanprofiler-summary.json; do
		[[ -s $dir/$f ]] || complain "$what: no $dir/$f"
	done
	[[ -s $dir/leanprofiler-summary.json ]] || return
	expect "$what: summary rows" \
		"$(jq -r '.rows[].name' "$dir/leanprofiler-summary.json" | sort -u | paste -sd' ')" "$nested_spans"
	expect "$what: trace's span names" \
		"$(jq -r '.traceEvents[] | select(.ph == "B" or .ph == "X") | .name' "$dir/leanprofiler-trace.json" |
			sort -u | paste -sd' ')" "$nested_spans"
}

# --- 1. make install, PREFIX and DESTDIR -----------------------------------------
prefix=$tmp/prefix
begin
touch "$tmp/stamp"
if run "$tmp/install.log" mk install PREFIX="$prefix"; then
	expect "files under PREFIX" "$(files_under "$prefix" | paste -sd' ')" "$(expected_files | sort | paste -sd' ')"
	expect "mode of bin/leanprofiler" "$(stat -c %a "$prefix/bin/leanprofiler")" 755
	expect "mode of the header" "$(stat -c %a "$prefix/include/leanprofiler.h")" 644
	cmp -s include/leanprofiler.h "$prefix/include/leanprofiler.h" || complain "installed header differs from include/"
	expect "what make install built" "$(cd "$build" && find . -newer "$tmp/stamp" ! -type d | paste -sd' ')" \
		./leanprofiler.pc
fi
if [[ -d $build/python/leanprofiler && -d $prefix/$py_site ]]; then
	expect "the installed Python module imports" \
		"$(cd / && PYTHONPATH=$prefix/$py_site /usr/bin/python3 -c 'import leanprofiler; print(leanprofiler.__file__, leanprofiler.active())' 2>&1)" \
		"$prefix/$py_site/leanprofiler/__init__.py False"
fi
end "make install PREFIX=... installs the expected files, modes, and builds nothing else"

begin
stage=$tmp/stage
if [[ -e /opt/leanprofiler-install-test ]]; then
	complain "/opt/leanprofiler-install-test exists: remove it, the test uses that name as a prefix"
elif run "$tmp/destdir.log" mk install PREFIX=/opt/leanprofiler-install-test DESTDIR="$stage"; then
	expect "files under DESTDIR/PREFIX" "$(files_under "$stage/opt/leanprofiler-install-test" | paste -sd' ')" \
		"$(expected_files | sort | paste -sd' ')"
	expect "only PREFIX under DESTDIR" "$(ls "$stage")" opt
	[[ ! -e /opt/leanprofiler-install-test ]] || complain "make install wrote /opt/leanprofiler-install-test outside DESTDIR"
	expect "prefix= of the pc file" \
		"$(sed -n 's/^prefix=//p' "$stage/opt/leanprofiler-install-test/share/pkgconfig/leanprofiler.pc")" \
		/opt/leanprofiler-install-test
	run "$tmp/destdir-un.log" mk uninstall PREFIX=/opt/leanprofiler-install-test DESTDIR="$stage" &&
		expect "files left under DESTDIR after uninstall" "$(files_under "$stage")" ""
fi
end "make install DESTDIR=... PREFIX=... stages the tree; make uninstall with both removes it"

# --- 2. compile with pkg-config, record with the installed binary ---------------
work=$tmp/work
mkdir -p "$work" "$tmp/run"
cp examples/nested.c tests/install/waiter.c tests/install/evilprobe.c "$work/"
begin
export PKG_CONFIG_PATH=$prefix/share/pkgconfig
expect "pkg-config --cflags" "$(pkg-config --cflags leanprofiler 2>&1 | sed 's/ *$//')" "-I$prefix/include"
expect "pkg-config --modversion" "$(pkg-config --modversion leanprofiler 2>&1)" "$version"
expect "pkg-config --libs (header-only)" "$(pkg-config --libs leanprofiler 2>&1)" ""
if (cd "$work" && cc -c nested.c -o /dev/null 2>/dev/null); then
	complain "nested.c compiles without the pkg-config flags: the header came from elsewhere"
fi
(cd "$work" && run "$tmp/cc.log" cc $(pkg-config --cflags leanprofiler) nested.c -o nested &&
	run "$tmp/cc.log" cc $(pkg-config --cflags leanprofiler) waiter.c -o waiter &&
	run "$tmp/cc.log" cc $(pkg-config --cflags leanprofiler) evilprobe.c -o evilprobe)
unset PKG_CONFIG_PATH
[[ -x $work/nested ]] && expect "probes of the compiled copy" \
	"$("$prefix/bin/leanprofiler" list "$work/nested" | awk '{print $1}' | sort | paste -sd' ')" \
	"leanprofiler:span_enter leanprofiler:span_exit"
end "a copy of examples/nested.c compiles with the prefix's pkg-config --cflags and nothing else"

if ! is_root; then
	skip "recording with the installed binary needs root (BPF)"
elif [[ ! -x $work/nested ]]; then
	begin; complain "no compiled copy of nested.c"; end "the installed leanprofiler records"
else
	begin
	if (cd "$tmp/run" && run "$tmp/record.log" "$prefix/bin/leanprofiler" record -o out -- ../work/nested); then
		check_recording "record -o out" "$tmp/run/out"
		expect "files beside out/" "$(ls "$tmp/run")" out
	fi
	end "the installed leanprofiler records the copy from another directory into -o DIR"

	begin
	mkdir -p "$tmp/run-default"
	if (cd "$tmp/run-default" && run "$tmp/record-default.log" "$prefix/bin/leanprofiler" record -- ../work/nested); then
		# The default directory moves from ./build to the current directory: either is right.
		if [[ -f $tmp/run-default/leanprofiler-summary.json ]]; then
			check_recording "record without -o" "$tmp/run-default"
		elif [[ -f $tmp/run-default/build/leanprofiler-summary.json ]]; then
			check_recording "record without -o" "$tmp/run-default/build"
		else
			complain "record without -o: no leanprofiler-summary.json in the current directory nor in ./build"
		fi
	fi
	end "without -o it records into the current directory (or ./build)"
fi

# --- 3. man pages, bash-completion's loader -------------------------------------
pages=$(expected_files | grep '^share/man/' || true)
if [[ -z $pages ]]; then
	skip "no man pages in man/ yet: nothing for man to find"
else
	begin
	for page in $pages; do
		file=${page##*/} section=${page##*.}
		expect "man -M PREFIX/share/man -w $section ${file%.*}" \
			"$(man -M "$prefix/share/man" -w "$section" "${file%.*}" 2>&1)" "$prefix/$page"
	done
	expect "man -M PREFIX/share/man -w leanprofiler" \
		"$(man -M "$prefix/share/man" -w leanprofiler 2>&1)" "$prefix/share/man/man1/leanprofiler.1"
	end "man finds every installed page under PREFIX/share/man"
fi

begin
if [[ ! -f /usr/share/bash-completion/bash_completion ]]; then
	complain "no /usr/share/bash-completion/bash_completion: install bash-completion (scripts/deps.sh test)"
else
	expect "complete -p after bash-completion's loader" \
		"$(XDG_DATA_DIRS=$prefix/share PATH=$prefix/bin:$PATH bash -c \
			'source /usr/share/bash-completion/bash_completion; __load_completion leanprofiler; complete -p leanprofiler' 2>&1)" \
		"complete -F _leanprofiler leanprofiler"
fi
end "bash-completion loads the installed completion from PREFIX/share (XDG_DATA_DIRS)"

# --- 4. the completion, as readline calls it ------------------------------------
# comp LINE [REST]: the completions with the cursor at the end of LINE, REST after it,
# from the installed script and binary. COMP_WORDS are split as bash splits them: at
# blanks, and around the ":" and "=" of COMP_WORDBREAKS.
cat >"$tmp/complete.bash" <<'EOF'
source /usr/share/bash-completion/bash_completion
source "$PREFIX_DIR/share/bash-completion/completions/leanprofiler"
PATH=$PREFIX_DIR/bin:$PATH
compopt() { :; } # outside readline there is nothing to set
split_words() {
	local w
	for w in $1; do
		while [[ $w =~ ^([^:=]*)([:=]+)(.*)$ ]]; do
			[[ -n ${BASH_REMATCH[1]} ]] && printf '%s\n' "${BASH_REMATCH[1]}"
			printf '%s\n' "${BASH_REMATCH[2]}"
			w=${BASH_REMATCH[3]}
		done
		[[ -n $w ]] && printf '%s\n' "$w"
	done
}
line=$1 rest=${2-}
mapfile -t COMP_WORDS < <(split_words "$line")
[[ $line == *[\ :=] ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
mapfile -t more < <(split_words "$rest")
COMP_WORDS+=("${more[@]}")
COMP_LINE=$line$rest COMP_POINT=${#line}
COMPREPLY=()
_leanprofiler
# RAW=1: every word as offered, in order, twice if twice.
if [[ -n ${RAW-} ]]; then
	printf '%s\n' "${COMPREPLY[@]}" | paste -sd' '
else
	printf '%s\n' "${COMPREPLY[@]}" | sort -u | paste -sd' '
fi
EOF
comp() { PREFIX_DIR=$prefix bash "$tmp/complete.bash" "$@" 2>&1; }

if [[ ! -f /usr/share/bash-completion/bash_completion || ! -x $work/waiter || ! -x $work/evilprobe ]]; then
	begin; complain "needs bash-completion and the compiled tests/install/waiter.c"; end "the completion"
else
	begin
	commands=$("$prefix/bin/leanprofiler" --help | awk '/^Commands:/ {c = 1; next} c && NF {print $1} c && !NF {exit}' |
		sort | paste -sd' ')
	for c in record list report diff; do
		[[ " $commands " == *" $c "* ]] || complain "leanprofiler --help does not list $c"
	done
	expect "leanprofiler <TAB>" "$(comp 'leanprofiler ')" "$commands"
	expect "leanprofiler re<TAB>" "$(comp 'leanprofiler re')" "record report"
	expect "leanprofiler --<TAB>" "$(comp 'leanprofiler --')" "--help --version"
	end "commands, from leanprofiler --help"

	begin
	expect "record --o<TAB>" "$(comp 'leanprofiler record --o')" "--off-cpu --output="
	expect "record --pr<TAB>" "$(comp 'leanprofiler record --pr')" "--preset="
	expect "record --trace<TAB>" "$(comp 'leanprofiler record --trace')" "--trace-last= --trace-max-size="
	expect "diff --<TAB>" "$(comp 'leanprofiler diff --')" "--help --json --threshold= --usage --version"
	expect "list -<TAB> has -p and -P" "$(comp 'leanprofiler list -' | tr ' ' '\n' | grep -cxE -- '-p|-P')" 2
	# Every option record --help shows is offered.
	for opt in $("$prefix/bin/leanprofiler" record --help | grep -oE '^ {2,6}(-., )?--[a-z-]+' | grep -oE -- '--[a-z-]+'); do
		[[ " $(comp 'leanprofiler record --') " == *" $opt"[\ =]* ]] || complain "record --<TAB> lacks $opt"
	done
	# Each option once, with "=" or without: an example line of --help ("      --span
	# 'python:...'") is no option.
	for c in record report diff list export; do
		dups=$(RAW=1 comp "leanprofiler $c --" | tr ' ' '\n' | sed 's/=$//' | sort | uniq -d |
			paste -sd' ')
		expect "$c --<TAB> offers each option once" "$dups" ""
	done
	end "options, from leanprofiler CMD --help (long ones that take a value end in =)"

	begin
	keys=$(comp 'leanprofiler report --sort ')
	[[ " $keys " == *" total "* && " $keys " == *" p95 "* ]] ||
		complain "report --sort <TAB> offers '$keys', not the keys of report --help"
	for k in $keys; do
		"$prefix/bin/leanprofiler" report --sort "$k" "$tmp/no-recording" 2>&1 |
			grep -q "invalid --sort" && complain "report --sort <TAB> offers $k, which report refuses"
	done
	expect "report --sort=ca<TAB>" "$(comp 'leanprofiler report --sort=ca')" calls
	# export --compress: the modes, each one export takes (it says so before needing a server).
	expect "export --compress <TAB>" "$(comp 'leanprofiler export --compress ')" "auto gzip none"
	expect "export --compress=g<TAB>" "$(comp 'leanprofiler export --compress=g')" gzip
	for m in auto gzip none; do
		"$prefix/bin/leanprofiler" export --compress "$m" 2>&1 | grep -q "invalid --compress" &&
			complain "export --compress <TAB> offers $m, which export refuses"
	done
	expect "help <TAB>" "$(comp 'leanprofiler help ')" "$commands"
	expect "help re<TAB>" "$(comp 'leanprofiler help re')" "record report"
	expect "help record <TAB>" "$(comp 'leanprofiler help record ')" ""
	end "report --sort keys, export --compress modes, from the commands' own lists; help's commands"

	begin
	presets=$("$prefix/bin/leanprofiler" list --presets | grep -oE '^[a-z0-9_-]+:' | tr -d : | sort | paste -sd' ')
	[[ -n $presets ]] || complain "list --presets shows no preset"
	expect "record --preset <TAB>" "$(comp 'leanprofiler record --preset ')" "$presets"
	expect "record --preset=cp<TAB>" "$(comp 'leanprofiler record --preset=cp')" cpython
	end "preset names, from list --presets"

	begin
	# Only the part after the last ":" is replaced (":" is a word break).
	expect "--span leanprofiler:sp<TAB> -- PROG" \
		"$(comp 'leanprofiler record --span leanprofiler:sp' " -- $work/nested")" "span_enter, span_exit,"
	expect "--span=leanprofiler:span_enter,lean<TAB> -- PROG" \
		"$(comp 'leanprofiler record --span=leanprofiler:span_enter,lean' " -- $work/nested")" \
		"span_enter,leanprofiler:span_enter span_enter,leanprofiler:span_exit"
	expect "--all-processes PROG --span leanprofiler:span_en<TAB>" \
		"$(comp "leanprofiler record --all-processes $work/nested --span leanprofiler:span_en")" "span_enter,"
	expect "--span <TAB> with no target" "$(comp 'leanprofiler record --span ')" ""
	coproc WAITER { exec "$work/waiter"; }
	waiter_pid=$WAITER_PID
	if read -r -t 10 ready <&"${WAITER[0]}" && [[ $ready == ready ]]; then
		expect "-p PID --span <TAB>" "$(comp "leanprofiler record -p $waiter_pid --span ")" \
			"leanprofiler:span_enter, leanprofiler:span_exit,"
		expect "-p ${waiter_pid:0:${#waiter_pid}-1}<TAB> offers PID" \
			"$(comp "leanprofiler record -p ${waiter_pid:0:${#waiter_pid}-1}" | tr ' ' '\n' | grep -cx "$waiter_pid")" 1
	else
		complain "the waiter did not say ready within 10 s"
	fi
	kill "$waiter_pid" 2>/dev/null
	wait "$waiter_pid" 2>/dev/null
	waiter_pid=""
	end "probe names for --span, from list of the target (after --, --all-processes, -p), and PIDs"

	begin
	# Probe names are any bytes an ELF file's author chose: completing them runs nothing,
	# whoever completes (a root shell completing -p PID of another user's program).
	mkdir -p "$tmp/cwd"
	pwned() { ls "$tmp/cwd" | paste -sd' '; }
	# The harness gives an empty word as " ": each probe's first letters are typed.
	expect "--span ok:n<TAB> -- EVIL (\$(...) and \`...\` in probe names)" \
		"$(cd "$tmp/cwd" && comp 'leanprofiler record --span ok:n' " -- $work/evilprobe")" ""
	expect "--span ok:s<TAB> -- EVIL" \
		"$(cd "$tmp/cwd" && comp 'leanprofiler record --span ok:s' " -- $work/evilprobe")" "safe_probe,"
	expect "--span p<TAB> -- EVIL" \
		"$(cd "$tmp/cwd" && comp 'leanprofiler record --span p' " -- $work/evilprobe")" ""
	expect "--all-processes EVIL --span o<TAB>" \
		"$(cd "$tmp/cwd" && comp "leanprofiler record --all-processes $work/evilprobe --span o")" \
		"ok:safe_probe,"
	expect "--span=ok:safe_probe,<TAB> -- EVIL" \
		"$(cd "$tmp/cwd" && comp 'leanprofiler record --span=ok:safe_probe,' " -- $work/evilprobe")" \
		"safe_probe,leanprofiler:span_enter safe_probe,leanprofiler:span_exit safe_probe,ok:safe_probe"
	coproc EVIL { exec "$work/evilprobe"; }
	waiter_pid=$EVIL_PID
	if read -r -t 10 ready <&"${EVIL[0]}" && [[ $ready == ready ]]; then
		expect "-p EVIL --span o<TAB>" \
			"$(cd "$tmp/cwd" && comp "leanprofiler record -p $waiter_pid --span o")" "ok:safe_probe,"
		expect "-p EVIL --span p<TAB>" \
			"$(cd "$tmp/cwd" && comp "leanprofiler record -p $waiter_pid --span p")" ""
	else
		complain "evilprobe did not say ready within 10 s"
	fi
	kill "$waiter_pid" 2>/dev/null
	wait "$waiter_pid" 2>/dev/null
	waiter_pid=""
	expect "files the completions made in their directory" "$(pwned)" ""
	end "probe names that are shell code are not offered and never run"

	begin
	mkdir -p "$tmp/files/outdir"
	touch "$tmp/files/outfile"
	expect "record -o $tmp/files/out<TAB> (directories)" \
		"$(comp "leanprofiler record -o $tmp/files/out")" "$tmp/files/outdir"
	expect "report $tmp/files/out<TAB>" "$(comp "leanprofiler report $tmp/files/out")" \
		"$tmp/files/outdir $tmp/files/outfile"
	expect "record -- $work/nes<TAB>" "$(comp "leanprofiler record -- $work/nes")" "$work/nested"
	# The COMMAND is a program: waiter.c is not.
	expect "record --duration 1 $work/wai<TAB>" "$(comp "leanprofiler record --duration 1 $work/wai")" \
		"$work/waiter"
	end "directories for -o, files for report, programs for record's COMMAND"
fi

# --- 5. make uninstall ----------------------------------------------------------
begin
if run "$tmp/uninstall.log" mk uninstall PREFIX="$prefix"; then
	expect "files left under PREFIX" "$(files_under "$prefix" | paste -sd' ')" ""
	[[ ! -e $prefix/share/doc/leanprofiler ]] || complain "PREFIX/share/doc/leanprofiler is left"
fi
end "make uninstall leaves no file under PREFIX, nor its doc directory"

# --- 6. make deb ----------------------------------------------------------------
deb=$build/leanprofiler_${version}_$(dpkg --print-architecture).deb
begin
run "$tmp/deb.log" mk deb && [[ -f $deb ]] || complain "make deb made no $deb"
if [[ -f $deb ]]; then
	dpkg-deb -c "$deb" >"$tmp/deb-contents"
	expect "Package" "$(dpkg-deb -f "$deb" Package)" leanprofiler
	expect "Version" "$(dpkg-deb -f "$deb" Version)" "$version"
	expect "Architecture" "$(dpkg-deb -f "$deb" Architecture)" "$(dpkg --print-architecture)"
	# Every library the binary links (NEEDED) is a dependency, through its package.
	for lib in $(readelf -d "$build/leanprofiler" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(ldd "$build/leanprofiler" | awk -v l="$lib" '$1 == l {print $3}')
		pkg=$({ dpkg -S "$path" || dpkg -S "$(realpath "$path")"; } 2>/dev/null | head -n 1 | cut -d: -f1)
		[[ -n $pkg ]] && [[ " $(dpkg-deb -f "$deb" Depends | tr -d ',') " == *" $pkg "* ]] ||
			complain "Depends '$(dpkg-deb -f "$deb" Depends)' lacks the package of $lib ($path: '$pkg')"
	done
	expect "owners of the files" "$(awk '{print $2}' "$tmp/deb-contents" | sort -u)" root/root
	grep -q ' ./usr/share/bash-completion/completions/leanprofiler$' "$tmp/deb-contents" ||
		complain "no /usr/share/bash-completion/completions/leanprofiler in the package"
fi
end "make deb: control fields, Depends covering every linked library, root:root files"

if ! command -v lintian >/dev/null; then
	skip "lintian is not installed (scripts/deps.sh test installs it)"
elif [[ -f $deb ]]; then
	begin
	lintian --fail-on error "$deb" >"$tmp/lintian.log" 2>&1 ||
		complain "lintian: $(grep '^E:' "$tmp/lintian.log" | paste -sd';')"
	end "lintian finds no error in the package"
fi

# The package must not replace what the admin installed: a leanprofiler package, or any
# file the package holds.
why_not=""
if ! is_root; then
	why_not="dpkg -i needs root"
elif [[ ! -f $deb ]]; then
	why_not="no package was built"
elif dpkg-query -W -f='${db:Status-Status}' leanprofiler 2>/dev/null | grep -qx installed; then
	why_not="a leanprofiler package is installed here already: not replacing it"
else
	for f in $(awk '$1 !~ /^d/ {print substr($6, 2)}' "$tmp/deb-contents"); do
		[[ -e $f ]] && why_not="$f exists (not from our package): dpkg -i would overwrite it" && break
	done
fi
if [[ -n $why_not ]]; then
	skip "installing the package: $why_not"
else
	begin
	if run "$tmp/dpkg-i.log" dpkg -i "$deb"; then
		deb_installed=1
		expect "pkg-config --modversion, no PKG_CONFIG_PATH" \
			"$(env -u PKG_CONFIG_PATH pkg-config --modversion leanprofiler 2>&1)" "$version"
		env -u PKG_CONFIG_PATH pkg-config --cflags leanprofiler >/dev/null 2>&1 ||
			complain "pkg-config --cflags leanprofiler fails"
		mkdir -p "$tmp/deb-run"
		(cd "$work" && run "$tmp/cc-deb.log" cc $(env -u PKG_CONFIG_PATH pkg-config --cflags leanprofiler) \
			nested.c -o nested-deb) &&
			(cd "$tmp/deb-run" && run "$tmp/record-deb.log" /usr/bin/leanprofiler record -o out -- ../work/nested-deb) &&
			check_recording "/usr/bin/leanprofiler record" "$tmp/deb-run/out"
		expect "man -w leanprofiler" "$(man -w leanprofiler 2>/dev/null | grep -c '^/usr/share/man/man1/leanprofiler.1')" \
			"$(ls man/leanprofiler.1 2>/dev/null | wc -l)"
	fi
	end "dpkg -i: pkg-config finds the header without PKG_CONFIG_PATH, /usr/bin/leanprofiler records"

	begin
	dpkg -L leanprofiler >"$tmp/deb-files" 2>&1 || complain "dpkg -L leanprofiler failed"
	if run "$tmp/dpkg-r.log" dpkg -r leanprofiler; then
		deb_installed=""
		while read -r f; do
			[[ -e $f && ! -d $f ]] && complain "$f is left"
		done <"$tmp/deb-files"
		[[ ! -e /usr/share/doc/leanprofiler ]] || complain "/usr/share/doc/leanprofiler is left"
		dpkg-query -W -f='${db:Status-Status}' leanprofiler 2>/dev/null | grep -qx installed &&
			complain "dpkg still says leanprofiler is installed"
		env -u PKG_CONFIG_PATH pkg-config --exists leanprofiler && complain "pkg-config still finds leanprofiler"
	fi
	end "dpkg -r removes every file dpkg -L listed ($(grep -c . "$tmp/deb-files") paths)"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
