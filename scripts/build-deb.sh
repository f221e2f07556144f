#!/usr/bin/env bash
# Packs the tree `make install PREFIX=/usr` put into WORK/debian/leanprofiler as
# OUT/leanprofiler_VERSION_ARCH.deb (make deb runs it). Adds what Debian asks of a package
# beyond the files: the copyright file (machine-readable, the GPL pointing to
# /usr/share/common-licenses), a changelog, md5sums and the control file, whose Depends
# dpkg-shlibdeps computes from the libraries the binary links.
# Usage: scripts/build-deb.sh WORK VERSION OUT
# DEB_MAINTAINER="Name <address>" names the maintainer (default: the author of the git HEAD).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 WORK VERSION OUT" >&2; exit 2; }
work=$1 version=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
stage=$work/debian/leanprofiler
doc=$stage/usr/share/doc/leanprofiler
die() { echo "build-deb: $*" >&2; exit 1; }

[ -x "$stage/usr/bin/leanprofiler" ] ||
	die "no $stage/usr/bin/leanprofiler: run 'make deb', which installs it there first"
for tool in dpkg-deb dpkg-shlibdeps; do
	command -v "$tool" >/dev/null ||
		die "$tool not found: install dpkg-dev (scripts/deps.sh test does)"
done
arch=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-$(git -C "$src" log -1 --format='%an <%ae>' 2>/dev/null || true)}
[ -n "$maintainer" ] || die "no maintainer: set DEB_MAINTAINER='Name <address>'"
# One date for the changelog and the files, so that the same commit packs the same way.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)}
# The copyright years: of the first and the last commit.
years=$(git -C "$src" log --format=%cd --date=format:%Y 2>/dev/null | sort -u | sed -n '1p;$p' | uniq |
	paste -sd-)
years=${years:-$(date -u -d "@$epoch" +%Y)}

# Debian installs manual pages compressed (man-db reads both).
[ ! -d "$stage/usr/share/man" ] || find "$stage/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9n {} +

# Debian keeps the licenses in one copyright file, and the GPL's text once for every
# package in /usr/share/common-licenses; the copies make install puts next to it go.
rm -rf "$doc/LICENSES" "$doc/LICENSE"
{
	cat <<-EOF
	Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
	Upstream-Name: leanprofiler

	Files: *
	Copyright: $years The leanprofiler authors
	License: MIT

	Files: bpf/*.bpf.c bench/*.bpf.c
	Copyright: $years The leanprofiler authors
	License: GPL-2
	Comment: The BPF programs; /usr/bin/leanprofiler carries bpf/leanprofiler.bpf.c compiled.

	License: MIT
	EOF
	# The MIT text of LICENSE after its copyright line, as continuation lines ("." for
	# an empty one).
	awk 'body { if ($0 != "" || started) print ($0 == "" ? " ." : " " $0); started = started || $0 != ""; next }
		/^MIT License$/ { mit = 1 } mit && /^Copyright/ { body = 1 }' "$src/LICENSE"
	cat <<-EOF

	License: GPL-2
	 On Debian systems the full text of the GNU General Public License version 2 is
	 in /usr/share/common-licenses/GPL-2.
	EOF
} >"$doc/copyright"
grep -q 'Permission is hereby granted' "$doc/copyright" ||
	die "no MIT text found in $src/LICENSE after its 'MIT License' line"

# A native package (the version has no Debian revision): changelog.gz, one entry.
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
printf 'leanprofiler (%s) unstable; urgency=medium\n\n  * Built from the leanprofiler sources, commit %s.\n\n -- %s  %s\n' \
	"$version" "$commit" "$maintainer" "$(date -R -u -d "@$epoch")" | gzip -9n >"$doc/changelog.gz"

# dpkg-shlibdeps reads debian/control of the "source" it is run in, and takes the
# directory holding DEBIAN/ for the package's root.
mkdir -p "$stage/DEBIAN"
printf 'Source: leanprofiler\n\nPackage: leanprofiler\nArchitecture: any\n' >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O debian/leanprofiler/usr/bin/leanprofiler |
	sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies of usr/bin/leanprofiler"

(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
cat >"$stage/DEBIAN/control" <<EOF
Package: leanprofiler
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $depends
Section: devel
Priority: optional
Description: span profiler for Linux built on eBPF
 Programs mark the regions of their work with USDT span markers (the
 header-only leanprofiler.h, found with pkg-config); leanprofiler record
 attaches BPF uprobes to a command it launches, a running process or every
 process of a binary, and writes a Chrome Trace Event file (Perfetto), a
 summary JSON and a table of spans. It also makes spans of any pair of USDT
 probes, with presets for PostgreSQL, the JVM, libstdc++ and CPython.
 report prints a recording again or draws it; diff compares two recordings.
EOF
chmod -R u+rwX,go+rX,go-w "$stage"
find "$stage" -newermt "@$epoch" -exec touch -h -d "@$epoch" {} +
deb=$out/leanprofiler_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
