#!/usr/bin/env bash
# Tests for the public marker header, include/leanprofiler.h.
#
# Usage: tests/header/run.sh   (from any directory; the attach checks need root)
#
# Prints "ok - ..." or "not ok - ..." per check, "SKIPPED: <reason>" for checks
# that cannot run on this machine (counted as neither), "#" lines with details
# under a failed check, and finally "N passed, M failed". Exits 1 if any failed.
#
#  1. The header compiles without a single warning as C99/C11/GNU11/C2x and
#     C++11/C++17, with gcc/g++ and clang/clang++, at -O0 and -O2.
#  2. Several translation units link into one executable, or into a shared
#     library plus an executable, and each ELF object carries two span_enter and
#     two span_exit USDT notes: a nop5 site at the entry of lp__probe_KIND and a
#     1-byte nop at the entry of lp__probe_KIND_forked (one 1-byte nop each with
#     LP_SDT_SITES), all sharing one semaphore in a writable .probes section; a
#     forked child (and grandchild) selects the 1-byte nop sites, the parent not.
#  3. Not attached, markers are inert: LP_ACTIVE() is 0 and marker arguments
#     with side effects are not evaluated.
#  4. bpftrace lists the probes.
#  5. Attached by bpftrace, LP_ACTIVE() is 1, every marker fires exactly once
#     with the right name, flags and counter, and every module (executable or
#     shared library) has its own semaphore, shared by all its translation units.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" # so that "-I include" and the source paths are relative to the repo root
src=tests/header
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- reporting: begin, expect, complain, end, skip ------------------------------
# shellcheck source=tests/checks.sh
. tests/checks.sh

# value FILE KEY: the value of a "KEY=value" line printed by a test program.
value() { sed -n "s/^$2=//p" "$1"; }

# --- ELF helpers ----------------------------------------------------------------

# sdt_notes ELF: one line per USDT note: "provider name location base semaphore args".
sdt_notes() {
	readelf -n "$1" | awk '
		/^ *Provider:/  { provider = $2 }
		/^ *Name:/      { name = $2 }
		/^ *Location:/  { gsub(",", ""); loc = $2; base = $4; sem = $6 }
		/^ *Arguments:/ { sub(/^ *Arguments: */, ""); print provider, name, loc, base, sem, $0 }'
}

# section_at ELF ADDR: "name type flags address offset" of the allocated section
# holding virtual address ADDR (nothing if none does).
section_at() {
	local addr=$(($2)) name type vaddr off size flags rest
	while read -r name type vaddr off size _ flags rest; do
		[[ $vaddr =~ ^[0-9a-f]+$ && $size =~ ^[0-9a-f]+$ ]] || continue
		if ((16#$vaddr != 0 && addr >= 16#$vaddr && addr < 16#$vaddr + 16#$size)); then
			echo "$name $type $flags $vaddr $off"
			return
		fi
	done < <(readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] //p')
}

# bytes_at ELF ADDR COUNT: the file's bytes at virtual address ADDR, as hex.
# Done from the section table rather than with objdump, so the check reads
# exactly what the kernel will map at the probe site.
bytes_at() {
	local name type flags vaddr off
	read -r name type flags vaddr off <<<"$(section_at "$1" "$2")" || true
	[[ -n ${off:-} && $type != NOBITS ]] || return 0
	od -An -tx1 -v -j $(($2 - 16#$vaddr + 16#$off)) -N "$3" "$1" | tr -d ' \n'
}

# symbol_value ELF NAME: the symbol-table value of NAME, as 0x-prefixed hex.
symbol_value() {
	# Reads all of readelf's output: exiting early would kill it with SIGPIPE.
	readelf -sW "$1" | awk -v n="$2" '$8 == n && !done { print "0x" $2; done = 1 }'
}

# check_notes ELF LABEL: check 2 for one linked ELF object.
check_notes() {
	local elf=$1 label=$2 mode=${3:-default} notes=$tmp/notes
	local site probe fn want_site addr loc base sem args want_args per sites
	local section type flags vaddr exported first_sem=""
	sdt_notes "$elf" >"$notes"
	# By default each probe has two sites: the nop5 the kernel turns into a
	# trampoline call, and the 1-byte nop a forked child uses (see the
	# header's comment); with -DLP_SDT_SITES only the 1-byte nop.
	if [[ $mode == sdt ]]; then
		per=1
		sites="span_enter:lp__probe_enter:90c3 span_exit:lp__probe_exit:90c3"
	else
		per=2
		sites="span_enter:lp__probe_enter:0f1f440000c3 span_enter:lp__probe_enter_forked:90c3"
		sites+=" span_exit:lp__probe_exit:0f1f440000c3 span_exit:lp__probe_exit_forked:90c3"
	fi

	begin
	expect "span_enter notes" "$(grep -c '^leanprofiler span_enter ' "$notes" || true)" $per
	expect "span_exit notes" "$(grep -c '^leanprofiler span_exit ' "$notes" || true)" $per
	expect "leanprofiler notes in all" "$(grep -c '^leanprofiler ' "$notes" || true)" $((2 * per))
	end "$label: $per span_enter and $per span_exit note(s), provider leanprofiler"

	for site in $sites; do
		IFS=: read -r probe fn want_site <<<"$site"
		addr=$(symbol_value "$elf" "$fn")
		read -r _ _ loc base sem args \
			<<<"$(awk -v p="$probe" -v a="$addr" \
				'$1 == "leanprofiler" && $2 == p && $3 == a { print; exit }' "$notes")" || true

		# enter: name, meta, counter, flags; exit: name, counter, flags.
		if [[ $probe == span_enter ]]; then
			want_args="8@%rdi 8@%rsi 8@%rdx 8@%rcx"
		else
			want_args="8@%rdi 8@%rsi 8@%rdx"
		fi
		begin
		expect arguments "${args:-}" "$want_args"
		end "$label: $probe arguments are \"$want_args\""

		# The probe site is the first instruction of the probe function, then ret.
		begin
		expect "bytes at Location ${loc:-?}" \
			"$(bytes_at "$elf" "${loc:-0}" $((${#want_site} / 2)))" "$want_site"
		expect "$fn address" "$addr" "${loc:-?}"
		end "$label: $probe has a site $want_site at the entry of $fn"

		# The kernel raises the semaphore while a probe is attached, so it
		# must exist (non-zero address) and be writable data.
		begin
		if [[ -z ${sem:-} ]] || ((sem == 0)); then
			complain "semaphore address is '${sem:-}'"
		else
			read -r section type flags _ <<<"$(section_at "$elf" "$sem")" || true
			expect "section of semaphore $sem" "${section:-none}" .probes
			expect "type of ${section:-none}" "${type:-}" PROGBITS
			[[ ${flags:-} == *W* ]] || complain "${section:-none} flags '${flags:-}' lack W"
		fi
		if [[ -z $first_sem ]]; then
			first_sem=${sem:-none}
		else
			expect "semaphore shared by every site" "${sem:-}" "$first_sem"
		fi
		end "$label: $probe site in $fn: semaphore is non-zero, in a writable PROGBITS .probes"

		# Tools add (actual .stapsdt.base address - Base) to Location and
		# Semaphore to undo prelinking; a wrong Base moves the probe.
		begin
		read -r section _ _ vaddr _ <<<"$(section_at "$elf" "${base:-0}")" || true
		expect "section at Base ${base:-?}" "${section:-none}" .stapsdt.base
		expect "Base" "$((${base:-0}))" "$((16#${vaddr:-0}))"
		end "$label: $probe site in $fn: Base is the address of .stapsdt.base"
	done

	# Hidden: a library must never bind to another module's probe functions or
	# semaphore, so none of them may be exported.
	begin
	exported=$(readelf --dyn-syms -W "$elf" | awk '$8 ~ /^(lp__|_\.stapsdt)/ { print $8 }')
	expect "exported lp__ symbols" "${exported//$'\n'/ }" ""
	end "$label: probe functions and semaphore are not exported"
}

# --- 1. compiles warning-free everywhere ----------------------------------------
echo "# 1. header compiles with zero warnings"
warn=(-Wall -Wextra -Werror -Wpedantic)
variants=()
for cc in gcc clang; do
	for std in c99 c11 gnu11 c2x; do
		for opt in -O0 -O2; do variants+=("$cc $std $opt"); done
	done
done
for cc in g++ clang++; do
	for std in c++11 c++17; do
		for opt in -O0 -O2; do variants+=("$cc $std $opt"); done
	done
done

built=()          # every markers binary that built, for checks 3 and 5
declare -A variant_of # binary -> "compiler -std=... -O..."
for variant in "${variants[@]}"; do
	read -r cc std opt <<<"$variant"
	# No "+" in file names: bpftrace probe specs name the binary by path.
	bin=$tmp/markers-$(tr + x <<<"$cc-$std$opt")
	lang=()
	if [[ $std == c++* ]]; then lang=(-x c++); fi # markers.c doubles as C++
	begin
	if ! "$cc" -std="$std" "$opt" "${warn[@]}" -I include "${lang[@]}" \
		"$src/markers.c" -o "$bin" 2>"$tmp/cc.log"; then
		complain "compilation failed"
	fi
	# -Werror turns warnings into errors, but anything at all on stderr
	# (notes, linker warnings) also means the header is not clean.
	if [[ -s $tmp/cc.log ]]; then
		complain "compiler output:"
		cat "$tmp/cc.log" >>"$errs"
	fi
	end "compiles warning-free: $cc -std=$std $opt ${warn[*]}"
	if [[ -x $bin ]]; then
		built+=("$bin")
		variant_of[$bin]="$cc -std=$std $opt"
	fi
done

# Disabled markers must stay warning-free too: values used only by markers
# remain "used", and no probe note is emitted.
for cc in gcc clang g++; do
	lang=()
	if [[ $cc == g++ ]]; then lang=(-x c++); fi
	bin=$tmp/markers-disabled-$cc
	begin
	if ! "$cc" -O2 "${warn[@]}" -DLP_DISABLE -I include "${lang[@]}" \
		"$src/markers.c" -o "$bin" 2>"$tmp/cc.log" || [[ -s $tmp/cc.log ]]; then
		complain "compilation with -DLP_DISABLE failed or warned:"
		cat "$tmp/cc.log" >>"$errs"
	elif readelf -n "$bin" | grep -q leanprofiler; then
		complain "-DLP_DISABLE build still has leanprofiler notes"
	fi
	end "-DLP_DISABLE compiles warning-free and emits no probes: $cc"
done

# --- 2. multi-TU links, one note per probe per ELF object -----------------------
echo "# 2. multi-TU executables and shared libraries"
for cc in gcc clang; do
	d=$tmp/multi-$cc
	mkdir "$d"
	cflags=(-std=c11 -O2 "${warn[@]}" -I include)
	begin
	# Three TUs in one executable; the same two library TUs in a shared
	# library; and an executable with markers of its own linked against it.
	"$cc" "${cflags[@]}" "$src/tu_main.c" "$src/tu_b.c" "$src/tu_c.c" -o "$d/exe" \
		>>"$errs" 2>&1 || complain "linking exe failed"
	"$cc" "${cflags[@]}" -fPIC -shared "$src/tu_b.c" "$src/tu_c.c" -o "$d/libbc.so" \
		>>"$errs" 2>&1 || complain "linking libbc.so failed"
	"$cc" "${cflags[@]}" "$src/tu_main.c" -o "$d/exe_lib" -L"$d" -lbc -Wl,-rpath,"$d" \
		>>"$errs" 2>&1 || complain "linking exe_lib failed"
	end "$cc: tu_main+tu_b+tu_c link into exe; tu_b+tu_c into libbc.so; tu_main+libbc.so into exe_lib"

	for elf in exe libbc.so exe_lib; do
		if [[ -f $d/$elf ]]; then check_notes "$d/$elf" "$cc $elf"; fi
	done

	# The opt-out: one 1-byte nop site per probe, as <sys/sdt.h> makes.
	begin
	"$cc" "${cflags[@]}" -DLP_SDT_SITES "$src/tu_main.c" "$src/tu_b.c" "$src/tu_c.c" \
		-o "$d/exe_sdt" >>"$errs" 2>&1 || complain "linking exe_sdt failed"
	end "$cc: -DLP_SDT_SITES links"
	if [[ -f $d/exe_sdt ]]; then check_notes "$d/exe_sdt" "$cc exe_sdt" sdt; fi
done

# After fork() the child (and its children) switch to the 1-byte nop sites; the
# parent keeps the fast ones. Through a shared library too: each binary registers
# its own handler and has its own flag.
for cc in gcc clang; do
	d=$tmp/fork-$cc
	mkdir -p "$d"
	begin
	"$cc" -O2 "${warn[@]}" -I include "$src/forkflag.c" -o "$d/forkflag" >>"$errs" 2>&1 ||
		complain "building forkflag failed"
	if [[ -x $d/forkflag ]]; then
		"$d/forkflag" >"$d/out" 2>&1 || complain "forkflag exit status $?"
		expect "flags" "$(sort "$d/out" | tr '\n' ' ')" \
			"child 2 grandchild 2 parent-after 0 parent-before 0 "
	fi
	end "$cc: a forked child and grandchild use the fork-safe sites, the parent the fast ones"
done

# --- 3. not attached: inert -----------------------------------------------------
echo "# 3. not attached: LP_ACTIVE() is 0, arguments not evaluated"
for bin in "${built[@]}"; do
	begin
	"$bin" 1000 >"$tmp/out" 2>&1 || complain "exit status $?"
	expect "expected_enters (program ran)" "$(value "$tmp/out" expected_enters)" 5000
	for key in active_start active_end name_calls meta_calls counter_calls; do
		expect "$key" "$(value "$tmp/out" "$key")" 0
	done
	end "${variant_of[$bin]}: LP_ACTIVE() is 0 and 5000 markers evaluate no name/meta/counter argument"
done
for cc in gcc clang; do
	for exe in exe exe_lib; do
		bin=$tmp/multi-$cc/$exe
		[[ -x $bin ]] || continue
		begin
		"$bin" >"$tmp/out" 2>&1 || complain "exit status $?"
		expect "bc_enters (program ran)" "$(value "$tmp/out" bc_enters)" 30
		for key in main_active b_active c_active; do
			expect "$key" "$(value "$tmp/out" "$key")" 0
		done
		end "$cc $exe: LP_ACTIVE() is 0 in every translation unit"
	done
done

# --- 4. bpftrace lists the probes -----------------------------------------------
echo "# 4. bpftrace -l"
# One markers build stands for all: the notes do not depend on the dialect.
listed=("$tmp/markers-gcc-c11-O2" "$tmp/multi-gcc/exe" "$tmp/multi-gcc/libbc.so"
	"$tmp/multi-clang/exe" "$tmp/multi-clang/libbc.so")
# bpftrace 0.17 refuses to run at all, even just to list probes, unless root;
# only that exact refusal counts as a skip, any other bpftrace error fails.
refuses_user() {
	[[ $(id -u) -ne 0 && $(bpftrace -l "usdt:${listed[0]}:*" 2>&1 || true) == \
		*"only supports running as the root user"* ]]
}
if ! command -v bpftrace >/dev/null; then
	skip "bpftrace -l checks: bpftrace is not installed"
elif refuses_user; then
	skip "bpftrace -l checks: needs root (this bpftrace refuses to run as another user)"
else
	for bin in "${listed[@]}"; do
		[[ -f $bin ]] || continue
		begin
		bpftrace -l "usdt:$bin:*" >"$tmp/list" 2>"$tmp/list.err" ||
			complain "bpftrace -l failed: $(cat "$tmp/list.err")"
		expect "probes listed" "$(sort "$tmp/list" | tr '\n' ' ')" \
			"usdt:$bin:leanprofiler:span_enter usdt:$bin:leanprofiler:span_exit "
		end "bpftrace lists leanprofiler:span_enter and span_exit in ${bin#"$tmp"/}"
	done
fi

# --- 5. attached by bpftrace ----------------------------------------------------
echo "# 5. attached by bpftrace"

# trace OUT BPFTRACE-ARGS...: run bpftrace, program and map output to OUT.
# bpftrace's own exit status is not trusted either way: on this kernel it may
# report "failed to detach probe ... uprobe_events" errors at exit that are
# harmless, and a real failure shows up as missing output. timeout only guards
# against a hang; it is not a delay.
trace() {
	local out=$1
	shift
	timeout 120 bpftrace "$@" >"$out" 2>&1 || true
}

# map OUT NAME: the value bpftrace printed for the scalar map @NAME (0 if the
# map was never updated, which bpftrace shows by not printing it).
map() { sed -n "s/^@$2: //p" "$1" | grep . || echo 0; }

# expected_events N: the @enter/@exit lines markers.c must produce for N
# iterations (N divisible by 4), as "kind name flags count", sorted.
# flags = marker ABI 1 << 8 | 0x1 name literal | 0x2 meta literal or NULL | 0x4 counter.
# Exits reuse the enter's name literalness and always count meta as NULL.
expected_events() {
	local n=$1 k
	{
		echo "enter loop $((0x103)) $n"  # LP_SPAN_ENTER("loop", "phase=...")
		echo "enter outer $((0x103)) $n" # LP_SPAN_SCOPE("outer", "scope=outer")
		echo "exit loop $((0x103)) $n"   # LP_SPAN_EXIT("loop")
		echo "exit outer $((0x103)) $n"  # end of the "outer" scope
		for k in 0 1 2 3; do
			echo "enter step.$k $((0x102)) $((n / 4))"  # LP_SPAN_ENTER(name, NULL)
			echo "enter step.$k $((0x104)) $((n / 4))"  # ENTER_COUNTER(f(name), f("k=v"), c)
			echo "enter scope.$k $((0x100)) $((n / 4))" # SCOPE(static buffer, f(NULL))
			echo "exit step.$k $((0x106)) $((n / 4))"   # EXIT_COUNTER(f(name), c)
			echo "exit step.$k $((0x102)) $((n / 4))"   # LP_SPAN_EXIT(name)
			echo "exit scope.$k $((0x102)) $((n / 4))"  # end of the static-buffer scope
		done
	} | sort
}

if ! command -v bpftrace >/dev/null; then
	skip "bpftrace attach checks: bpftrace is not installed"
elif [[ $(id -u) -ne 0 ]]; then
	skip "bpftrace attach checks: needs root"
else
	n=1000
	expected_events $n >"$tmp/expected"
	# Every build of markers.c: literal detection (__builtin_constant_p)
	# depends on compiler, dialect and optimisation, so all are checked.
	for bin in "${built[@]}"; do
		trace "$tmp/out" -c "$bin $n" -e "
			usdt:$bin:leanprofiler:span_enter / (arg3 & 8) == 0 / {
				@enters = count(); @enter_counters = sum(arg2);
				@enter[str(arg0), arg3] = count();
			}
			usdt:$bin:leanprofiler:span_exit / (arg2 & 8) == 0 / {
				@exits = count(); @exit_counters = sum(arg1);
				@exit[str(arg0), arg2] = count();
			}
			usdt:$bin:leanprofiler:span_enter / arg3 & 8 / { @warm_enters = count(); }
			usdt:$bin:leanprofiler:span_exit / arg2 & 8 / { @warm_exits = count(); }"
		begin
		expect active_start "$(value "$tmp/out" active_start)" 1
		expect active_end "$(value "$tmp/out" active_end)" 1
		expect "span_enter events" "$(map "$tmp/out" enters)" $((5 * n))
		expect "span_exit events" "$(map "$tmp/out" exits)" $((5 * n))
		# The first marker hits both sites once with LP_MARKER_WARMUP (flag 8).
		expect "warm-up span_enter events" "$(map "$tmp/out" warm_enters)" 1
		expect "warm-up span_exit events" "$(map "$tmp/out" warm_exits)" 1
		# Attached, each side-effect argument runs exactly once per marker:
		# 2 names, 2 metas, 2 counters per iteration.
		expect name_calls "$(value "$tmp/out" name_calls)" $((2 * n))
		expect meta_calls "$(value "$tmp/out" meta_calls)" $((2 * n))
		expect counter_calls "$(value "$tmp/out" counter_calls)" $((2 * n))
		# The counter markers pass work = i (enter) and i + 1 (exit); all
		# other markers pass 0.
		expect "sum of span_enter counters" "$(map "$tmp/out" enter_counters)" $((n * (n - 1) / 2))
		expect "sum of span_exit counters" "$(map "$tmp/out" exit_counters)" $((n * (n + 1) / 2))
		sed -n 's/^@\(enter\|exit\)\[\(.*\), \([0-9]*\)\]: \([0-9]*\)$/\1 \2 \3 \4/p' \
			"$tmp/out" | sort >"$tmp/events"
		if ! diff "$tmp/expected" "$tmp/events" >"$tmp/diff"; then
			complain "events by (kind, recorded name, flags), < wanted > got:"
			grep '^[<>]' "$tmp/diff" >>"$errs" || true
		fi
		[[ ! -s $errs ]] || { complain "bpftrace output:"; grep -v '^@e[a-z]*\[' "$tmp/out" >>"$errs"; }
		end "${variant_of[$bin]}: attached, LP_ACTIVE() is 1 and $((5 * n)) enters/exits carry the right names, flags, counters"
	done

	# Semaphores are per module: the probes of an executable and those of a
	# shared library are attached separately, and attaching one must
	# activate all translation units of that module and nothing else.
	for cc in gcc clang; do
		d=$tmp/multi-$cc
		[[ -x $d/exe && -x $d/exe_lib ]] || continue

		# exe: tu_main, tu_b and tu_c share the executable's semaphore.
		trace "$tmp/out" -c "$d/exe" \
			-e "usdt:$d/exe:leanprofiler:span_enter / (arg3 & 8) == 0 / { @enters = count(); }"
		begin
		expect main_active "$(value "$tmp/out" main_active)" 1
		expect b_active "$(value "$tmp/out" b_active)" 1
		expect c_active "$(value "$tmp/out" c_active)" 1
		expect "span_enter events" "$(map "$tmp/out" enters)" 31
		[[ ! -s $errs ]] || { complain "bpftrace output:"; cat "$tmp/out" >>"$errs"; }
		end "$cc exe attached: all three translation units active, 31 enters"

		# exe_lib attached: only tu_main (in the executable) is active.
		trace "$tmp/out" -c "$d/exe_lib" \
			-e "usdt:$d/exe_lib:leanprofiler:span_enter / (arg3 & 8) == 0 / { @enters = count(); }"
		begin
		expect main_active "$(value "$tmp/out" main_active)" 1
		expect "b_active (in libbc.so)" "$(value "$tmp/out" b_active)" 0
		expect "c_active (in libbc.so)" "$(value "$tmp/out" c_active)" 0
		expect "span_enter events" "$(map "$tmp/out" enters)" 1
		[[ ! -s $errs ]] || { complain "bpftrace output:"; cat "$tmp/out" >>"$errs"; }
		end "$cc exe_lib attached: executable active, libbc.so not, 1 enter"

		# libbc.so attached: both library TUs active, the executable not.
		# bpftrace 0.17 cannot resolve a library's USDT probes for -c before
		# the library is loaded, so the probe is attached to the file (any
		# process) and the program started from BEGIN, which runs once all
		# probes are attached; the kernel raises the library's semaphore when
		# the program maps it. exit() is processed after system() returns.
		trace "$tmp/out" --unsafe -e "
			usdt:$d/libbc.so:leanprofiler:span_enter / (arg3 & 8) == 0 / { @enters = count(); }
			BEGIN { system(\"$d/exe_lib\"); exit(); }"
		begin
		expect main_active "$(value "$tmp/out" main_active)" 0
		expect "b_active (in libbc.so)" "$(value "$tmp/out" b_active)" 1
		expect "c_active (in libbc.so)" "$(value "$tmp/out" c_active)" 1
		expect "span_enter events" "$(map "$tmp/out" enters)" 30
		[[ ! -s $errs ]] || { complain "bpftrace output:"; cat "$tmp/out" >>"$errs"; }
		end "$cc libbc.so attached: both library translation units active, executable not, 30 enters"
	done
fi

echo "$passed passed, $failed failed"
((failed == 0))
