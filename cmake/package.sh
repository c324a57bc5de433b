#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian packages into build/packages/, as Debian ships a library:
#   libcommitlog0     the shared library, in the multiarch directory
#   libcommitlog-dev  the public headers, the archive, the .so link, the
#                     pkg-config and CMake files; it depends on the -dev
#                     packages the archive links
#   commitlog-tools   the commitlog CLI and commitlog-kv (both link the
#                     archive), /etc/commitlog/commitlog.yaml as a conffile,
#                     a systemd unit for commitlog-kv that is not enabled,
#                     and man pages made from --help
# The build tree is build/deb (prefix /usr, Debian's hardening flags). Each
# package's Depends on shared libraries comes from dpkg-shlibdeps.
#   package.sh [--lintian]   with --lintian, also runs lintian on the packages
#                            and fails on any error it reports
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD
bash cmake/install-deps.sh package

version=$(sed -n 's/^project(commitlog VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
revision=1
deb_version=$version-$revision
soversion=${version%%.*}
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
maintainer="commitlog developers <commitlog@packages.invalid>"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2> /dev/null || date +%s)}

first_year=$(git log --reverse --format=%cd --date=format:%Y 2> /dev/null | sed -n 1p || true)
last_year=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)
years=${first_year:-$last_year}
[[ $years == "$last_year" ]] || years=$years-$last_year

build=$source_dir/build/deb
out=$source_dir/build/packages
stage=$build/stage
export DEB_CXXFLAGS_MAINT_STRIP=-g  # stripped anyway; no debug packages
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=None -DCMAKE_INSTALL_PREFIX=/usr \
  -DCMAKE_INSTALL_LIBDIR="lib/$multiarch" \
  -DCOMMITLOG_BUILD_TESTS=OFF -DCOMMITLOG_BUILD_TOOLS=ON \
  -DCMAKE_CXX_FLAGS="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS) -DNDEBUG" \
  -DCMAKE_EXE_LINKER_FLAGS="$(dpkg-buildflags --get LDFLAGS)" \
  -DCMAKE_SHARED_LINKER_FLAGS="$(dpkg-buildflags --get LDFLAGS)" > "$build.configure.log" ||
  { cat "$build.configure.log" >&2; exit 1; }
cmake --build "$build" -j"$(nproc)" --target commitlog commitlog_shared commitlog_cli commitlog-kv

rm -rf "$stage" "$out"
mkdir -p "$out"

# stage PACKAGE COMPONENT: the component installed under the package's root,
# stripped, with its copyright and changelog.
stage() {
  local package=$1 component=$2 root=$stage/$1
  DESTDIR=$root cmake --install "$build" --component "$component" > /dev/null
  find "$root" -type f \( -name '*.so.*' -o -path '*/usr/bin/*' \) -exec \
    strip --remove-section=.comment --remove-section=.note --strip-unneeded {} +
  find "$root" -type f -name '*.a' -exec \
    strip --strip-debug --remove-section=.comment --enable-deterministic-archives {} +
  install -d -m 755 "$root/DEBIAN"
  local doc=$root/usr/share/doc/$package
  install -d "$doc"
  sed "s/@YEARS@/$years/" cmake/debian/copyright > "$doc/copyright"
  # Not an upload to Debian, so there is no bug for the changelog to close.
  install -d "$root/usr/share/lintian/overrides"
  echo "$package: initial-upload-closes-no-bugs" > "$root/usr/share/lintian/overrides/$package"
  printf '%s (%s) unstable; urgency=medium\n\n  * Built from the upstream source by cmake/package.sh.\n\n -- %s  %s\n' \
    commitlog "$deb_version" "$maintainer" "$(date -R -u -d "@$SOURCE_DATE_EPOCH")" |
    gzip -9n > "$doc/changelog.Debian.gz"
}

# control PACKAGE SECTION DEPENDS SUMMARY DESCRIPTION [EXTRA FIELD LINES]: the
# control file and md5sums; DEPENDS joins dpkg-shlibdeps's findings.
control() {
  local package=$1 section=$2 depends=$3 summary=$4 description=$5 extra=${6:-} root=$stage/$1
  local shlibs binaries
  mapfile -t binaries < <(find "$root" -type f \( -name '*.so.*' -o -path '*/usr/bin/*' \))
  if ((${#binaries[@]})); then
    # dpkg-shlibdeps reads debian/control of a source package; it is given a minimal one.
    local work=$build/shlibdeps/$package
    mkdir -p "$work/debian"
    printf 'Source: commitlog\n\nPackage: %s\nArchitecture: any\n' "$package" > "$work/debian/control"
    shlibs=$(cd "$work" && dpkg-shlibdeps -O -l"$stage/libcommitlog$soversion/usr/lib/$multiarch" \
      "${binaries[@]/#/-e}" 2> "$work/warnings" | sed -n 's/^shlibs:Depends=//p')
    depends=${depends:+$depends, }$shlibs
  fi
  find "$root/DEBIAN" -type f -exec chmod 644 {} +
  {
    echo "Package: $package"
    echo "Source: commitlog"
    echo "Version: $deb_version"
    echo "Architecture: $arch"
    echo "Maintainer: $maintainer"
    echo "Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)"
    [[ -n $depends ]] && echo "Depends: $depends"
    echo "Section: $section"
    echo "Priority: optional"
    [[ -n $extra ]] && echo "$extra"
    echo "Description: $summary"
    sed 's/^$/./; s/^/ /' <<< "$description"
  } > "$root/DEBIAN/control"
  (cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 -r md5sum) \
    > "$root/DEBIAN/md5sums"
  find "$root" -type d -exec chmod 755 {} +
  dpkg-deb --root-owner-group -Zxz --build "$root" "$out/${package}_${deb_version}_$arch.deb" > /dev/null
}

about="commitlog is a write-ahead commit log for key-value stores, in the style of
Apache Cassandra's commit log: producers (Boost.Fiber fibers or plain threads)
append mutations, a sync policy decides when the log fsyncs, and after a crash
a replayer hands back every intact mutation."

lib=libcommitlog$soversion
stage "$lib" runtime
echo "libcommitlog $soversion $lib (>= $version)" > "$stage/$lib/DEBIAN/shlibs"
echo "activate-noawait ldconfig" > "$stage/$lib/DEBIAN/triggers"
control "$lib" libs "" "write-ahead commit log for key-value stores (shared library)" \
  "$about
.
This package holds the shared library." "Multi-Arch: same"

stage libcommitlog-dev dev
control libcommitlog-dev libdevel \
  "$lib (= $deb_version), libboost-fiber-dev (>= 1.74), libboost-context-dev (>= 1.74), libyaml-cpp-dev, libfmt-dev, libxxhash-dev, liblz4-dev, libssl-dev" \
  "write-ahead commit log for key-value stores (development files)" \
  "$about
.
This package holds the C++20 headers, the static library, and the pkg-config
and CMake files (pkg-config commitlog, find_package(commitlog))." "Multi-Arch: same"

tools=$stage/commitlog-tools
stage commitlog-tools tools
install -d "$tools/etc/commitlog" "$tools/lib/systemd/system" "$tools/usr/share/man/man1"
mv "$tools/usr/share/commitlog/commitlog.yaml" "$tools/etc/commitlog/commitlog.yaml"
rmdir "$tools/usr/share/commitlog"
install -m 644 cmake/debian/commitlog-kv.service "$tools/lib/systemd/system/commitlog-kv.service"
help2man --no-info --no-discard-stderr --name="inspect, verify, replay and tail a commit log" \
  "$build/bin/commitlog" | gzip -9n > "$tools/usr/share/man/man1/commitlog.1.gz"
help2man --no-info --no-discard-stderr --name="a Redis-protocol key-value server on a commit log" \
  "$build/bin/commitlog-kv" | gzip -9n > "$tools/usr/share/man/man1/commitlog-kv.1.gz"
chmod 644 "$tools"/usr/share/man/man1/*
echo /etc/commitlog/commitlog.yaml > "$tools/DEBIAN/conffiles"
control commitlog-tools utils "" "write-ahead commit log for key-value stores (tools)" \
  "$about
.
This package holds the commitlog command (dump, verify, replay, stat, tail and
config of a log directory) and commitlog-kv, a Redis-protocol key-value server
on the log, with a systemd unit that is installed but not enabled."

ls "$out"
if [[ ${1:-} == --lintian ]]; then
  lintian --fail-on error "$out"/*.deb
fi
