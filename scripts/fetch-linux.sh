#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian's linux-source-7.3 (trixie-backports) into build/src/ without
# touching the system's apt configuration, and unpack it once.
#
# The mirror is read from this machine's own apt sources; no host name is
# written into the repository.
#
# usage: fetch-linux.sh <build-dir>       prints the unpacked tree's path
# env:   LINUX_TARBALL=/path/linux-source-7.3.tar.xz   use a local tarball
set -euo pipefail

B=${1:?usage: fetch-linux.sh <build-dir>}
mkdir -p "$B/src"
B=$(cd "$B" && pwd)
SRC="$B/src"
TREE="$SRC/linux-7.3"

die() { echo "fetch-linux: $*" >&2; exit 1; }

if [ -f "$TREE/Makefile" ] && [ -f "$SRC/.linux-7.3.unpacked" ]; then
	echo "$TREE"
	exit 0
fi

tarball=${LINUX_TARBALL:-}
if [ -z "$tarball" ]; then
	tarball=$(ls "$SRC"/deb/usr/src/linux-source-7.3.tar.* 2>/dev/null | head -n1 || true)
fi

if [ -z "$tarball" ]; then
	command -v apt-get >/dev/null || die "apt-get not found: pass LINUX_TARBALL=/path/linux-source-7.3.tar.xz or KDIR=/path/to/linux-7.3"
	# The first Debian mirror configured on this machine (deb822 or one-line).
	# MMKUNIT_APT_SOURCES: other apt source files to read the mirror from
	# (used by the host tests to simulate an unreachable mirror).
	srcfiles=${MMKUNIT_APT_SOURCES:-/etc/apt/sources.list.d/*.sources}
	uri=$(grep -hE '^URIs:' $srcfiles 2>/dev/null |
		awk '{print $2}' | grep -v -- '-security' | head -n1 || true)
	if [ -z "$uri" ] && [ -z "${MMKUNIT_APT_SOURCES:-}" ]; then
		uri=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null |
			awk '{for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' |
			grep -v -- '-security' | head -n1 || true)
	fi
	[ -n "$uri" ] || die "no Debian mirror in /etc/apt/sources.list{,.d}: pass LINUX_TARBALL= or KDIR="
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	A="$SRC/apt"
	mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/srcparts"
	echo "Types: deb
URIs: $uri
Suites: trixie-backports
Components: main
Signed-By: $keyring" > "$A/srcparts/backports.sources"
	opts=(-o Dir::Etc::SourceList=/dev/null
	      -o Dir::Etc::SourceParts="$A/srcparts"
	      -o Dir::State::Lists="$A/lists"
	      -o Dir::Cache="$A/cache"
	      -o Dir::State::status=/var/lib/dpkg/status
	      -o Acquire::Retries=2
	      -o Acquire::http::Timeout=30)
	echo "fetch-linux: apt-get update (trixie-backports from the machine's mirror)" >&2
	if ! timeout 300 apt-get "${opts[@]}" update >"$A/update.log" 2>&1 ||
	   grep -qE '^(Err|E):' "$A/update.log"; then
		tail -n 5 "$A/update.log" >&2
		die "cannot reach the Debian mirror $uri (log: $A/update.log); pass LINUX_TARBALL= or KDIR="
	fi
	pkg=$(apt-cache "${opts[@]}" policy linux-source-7.3 2>/dev/null |
		awk '/Candidate:/ {print $2}')
	[ -n "$pkg" ] && [ "$pkg" != "(none)" ] ||
		die "linux-source-7.3 is not in trixie-backports on $uri"
	echo "fetch-linux: downloading linux-source-7.3 $pkg" >&2
	(cd "$A" && timeout 900 apt-get "${opts[@]}" download linux-source-7.3 >"$A/download.log" 2>&1) ||
		{ tail -n 5 "$A/download.log" >&2; die "download of linux-source-7.3 failed"; }
	deb=$(ls "$A"/linux-source-7.3_*.deb | head -n1)
	rm -rf "$SRC/deb"
	dpkg-deb -x "$deb" "$SRC/deb"
	tarball=$(ls "$SRC"/deb/usr/src/linux-source-7.3.tar.* | head -n1)
fi

[ -f "$tarball" ] || die "tarball $tarball not found"
echo "fetch-linux: unpacking $tarball" >&2
rm -rf "$TREE" "$SRC/unpack" "$SRC/.linux-7.3.unpacked"
mkdir -p "$SRC/unpack"
tar -xf "$tarball" -C "$SRC/unpack"
top=$(ls "$SRC/unpack" | head -n1)
[ -f "$SRC/unpack/$top/Makefile" ] || die "$tarball does not hold a kernel tree"
mv "$SRC/unpack/$top" "$TREE"
rmdir "$SRC/unpack"
touch "$SRC/.linux-7.3.unpacked"
echo "$TREE"
