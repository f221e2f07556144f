#!/usr/bin/env bash
# Installs what building (deps.sh build), make deb (deps.sh deb), testing (deps.sh test) or
# make bench needs, if missing.
# Debian 12 package names; run as root (sudo make ... does). zlib1g-dev: libbpf needs it, and
# export compresses its rows with it (user/export/client/batch.c).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# libncurses-dev: top's full screen (ncursesw).
# libdeflate-dev: the Perfetto trace's packets (user/core/pfzout.c), in a quarter of zlib's CPU.
build=(clang libbpf-dev bpftool libelf-dev zlib1g-dev libdeflate-dev libjson-c-dev libcurl4-openssl-dev
	libssl-dev libncurses-dev pkg-config make gcc
	# make python (python/): Debian's CPython and its headers.
	python3 python3-dev)
test=(libcmocka-dev binutils g++ bpftrace libclang-rt-14-dev util-linux python3.11-minimal
	postgresql-15 postgresql-client-15 libpq-dev openjdk-17-jdk-headless chromium libxml2-utils librsvg2-bin
	clickhouse-server clickhouse-client openssl groff-base sudo
	# tests/perfetto: the Perfetto trace decoded independently of our reader.
	protobuf-compiler
	# test_top drives top in a real terminal.
	tmux)
# The Rust crate (make rust, test_rust) needs cargo, which is no Debian package here (Debian 12's
# rustc 1.63 is older than the crate's 1.66): rustup's, found on PATH or in ~/.cargo/bin.
# dpkg-shlibdeps (the Depends) and dpkg-deb.
deb=(dpkg-dev)
# tests/install: bash-completion's helpers, man -w, lintian on the package, jq on recordings.
test+=("${deb[@]}" bash-completion man-db lintian jq)
# tests: pip install ./python --no-build-isolation uses Debian's setuptools and pip.
test+=(python3-setuptools python3-pip)
# valgrind: bench row 6 counts the consumer's instructions per span (callgrind).
bench=(jq time valgrind)
case "${1:-build}" in
build) "$here/apt-ensure.sh" "${build[@]}" ;;
deb) "$here/apt-ensure.sh" "${build[@]}" "${deb[@]}" ;;
test) "$here/apt-ensure.sh" "${build[@]}" "${test[@]}" ;;
bench) "$here/apt-ensure.sh" "${build[@]}" "${test[@]}" "${bench[@]}" ;;
*) echo "usage: $0 build|deb|test|bench" >&2; exit 2 ;;
esac
