#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `cpack -G DEB` of the build, extracted into a scratch root: the package
# holds the library (static and shared), the public headers, the CMake and
# pkg-config files, both binaries and the config, and declares its Depends;
# then the consumers of consumers.sh build against the extracted tree.
#   deb_test.sh BUILD_DIR
set -euo pipefail
build_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "deb test: $*" >&2; exit 1; }

(cd "$work" && cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$work/package" > "$work/cpack.log") ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(find "$work/package" -maxdepth 1 -name '*.deb')
[[ -f $deb ]] || fail "cpack wrote no .deb"
[[ $(dpkg-deb -f "$deb" Package) == commitlog ]] || fail "package name"
depends=$(dpkg-deb -f "$deb" Depends)
for library in libboost-fiber libyaml-cpp libfmt libxxhash liblz4 libc6; do
  [[ $depends == *$library* ]] || fail "Depends lacks $library: $depends"
done

root=$work/root
dpkg-deb -x "$deb" "$root"
for f in usr/bin/commitlog usr/bin/commitlog-kv usr/include/commitlog/commit_log.h \
  usr/share/commitlog/commitlog.yaml; do
  [[ -e $root/$f ]] || fail "/$f is not in the package"
done
[[ -n $(find "$root/usr" -name 'libcommitlog.a') && -n $(find "$root/usr" -name 'libcommitlog.so.*') ]] ||
  fail "the package lacks a library"
[[ ! -e $root/usr/include/commitlog/segment && ! -e $root/usr/include/segment ]] || fail "internal headers packaged"
"$root/usr/bin/commitlog" --help > /dev/null
"$root/usr/bin/commitlog-kv" --help > /dev/null

source "$here/consumers.sh"
consumers_against "$root/usr" "$work"
echo "deb test: $(basename "$deb") holds the library, headers, tools and config; consumers built against it"
