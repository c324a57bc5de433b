#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The packages of cmake/package.sh: what each holds and depends on, lintian
# without errors, then the consumers of consumers.sh built against the
# library and -dev packages extracted into a scratch root.
#   deb_test.sh PACKAGES_DIR
set -euo pipefail
packages=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "deb test: $*" >&2; exit 1; }
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

deb() { find "$packages" -maxdepth 1 -name "${1}_*.deb" | sed -n 1p; }
lib=$(deb libcommitlog0) dev=$(deb libcommitlog-dev) tools=$(deb commitlog-tools)
[[ -f $lib && -f $dev && -f $tools ]] || fail "missing packages in $packages: $(ls "$packages")"
contents() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./|/|'; }
holds() { contents "$1" | grep -x "$2" > /dev/null || fail "$(basename "$1") lacks $2"; }

# The shared library alone, in the multiarch directory, with its SONAME and
# the ldconfig trigger.
holds "$lib" "/usr/lib/$multiarch/libcommitlog.so.0"
[[ -z $(contents "$lib" | grep -e '\.a$' -e '/include/' -e '/bin/' -e 'libcommitlog\.so$') ]] ||
  fail "libcommitlog0 holds more than the shared library"
dpkg-deb --ctrl-tarfile "$lib" | tar -xO ./triggers | grep -x "activate-noawait ldconfig" > /dev/null ||
  fail "libcommitlog0 does not trigger ldconfig"
dpkg-deb --ctrl-tarfile "$lib" | tar -xO ./shlibs | grep "^libcommitlog 0 libcommitlog0" > /dev/null ||
  fail "libcommitlog0 has no shlibs file"

# The -dev package: headers, archive, link, pkg-config and CMake files, and a
# dependency on each -dev package the archive links.
for f in /usr/include/commitlog/commit_log.h /usr/include/commitlog/export.h \
  "/usr/lib/$multiarch/libcommitlog.a" "/usr/lib/$multiarch/libcommitlog.so" \
  "/usr/lib/$multiarch/pkgconfig/commitlog.pc" "/usr/lib/$multiarch/cmake/commitlog/commitlogConfig.cmake"; do
  holds "$dev" "$f"
done
[[ -z $(contents "$dev" | grep -e '/include/commitlog/.*/' -e '/include/segment') ]] || fail "internal headers packaged"
depends=$(dpkg-deb -f "$dev" Depends)
for p in "libcommitlog0 (= $(dpkg-deb -f "$lib" Version))" libboost-fiber-dev libboost-context-dev libyaml-cpp-dev \
  libfmt-dev libxxhash-dev liblz4-dev libssl-dev; do
  [[ $depends == *"$p"* ]] || fail "libcommitlog-dev does not depend on $p: $depends"
done

# The tools: both binaries, the conffile, the unit (installed, not enabled:
# no maintainer script), man pages; a dependency on librocksdb only if a
# binary links it.
for f in /usr/bin/commitlog /usr/bin/commitlog-kv /etc/commitlog/commitlog.yaml \
  /lib/systemd/system/commitlog-kv.service /usr/share/man/man1/commitlog.1.gz /usr/share/man/man1/commitlog-kv.1.gz \
  /usr/share/bash-completion/completions/commitlog /usr/share/bash-completion/completions/commitlog-kv; do
  holds "$tools" "$f"
done
[[ -z $(contents "$tools" | grep -e 'bench' -e '\.so' -e '/include/') ]] || fail "commitlog-tools holds more than the tools"
dpkg-deb --ctrl-tarfile "$tools" | tar -xO ./conffiles | grep -x /etc/commitlog/commitlog.yaml > /dev/null ||
  fail "/etc/commitlog/commitlog.yaml is not a conffile"
[[ -z $(dpkg-deb --ctrl-tarfile "$tools" | tar -t | grep -e postinst -e prerm -e postrm) ]] ||
  fail "commitlog-tools has maintainer scripts"
dpkg-deb -x "$tools" "$work/tools"
needed=$(readelf -d "$work/tools/usr/bin/"* | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | sort -u)
tools_depends=$(dpkg-deb -f "$tools" Depends)
if grep -q librocksdb <<< "$needed"; then
  [[ $tools_depends == *librocksdb* ]] || fail "a tool links librocksdb but the package does not depend on it"
else
  [[ $tools_depends != *rocksdb* ]] || fail "commitlog-tools depends on librocksdb, which no tool links"
fi
[[ $needed != *libcommitlog* ]] || fail "a tool links libcommitlog.so (the tools link the archive)"
"$work/tools/usr/bin/commitlog" --help > /dev/null
"$work/tools/usr/bin/commitlog-kv" --help > /dev/null

lintian --fail-on error --suppress-tags-from-file /dev/null "$lib" "$dev" "$tools" > "$work/lintian.log" 2>&1 ||
  { cat "$work/lintian.log" >&2; fail "lintian reports errors"; }

root=$work/root
dpkg-deb -x "$lib" "$root"
dpkg-deb -x "$dev" "$root"
source "$here/consumers.sh"
consumers_against "$root/usr" "$work"
echo "deb test: three packages, their files, Depends and conffile; lintian: no error, $(grep -c '^[WI]:' "$work/lintian.log") warnings and notes; consumers built against them"
