#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The packages on a clean machine: a Debian 12 minbase tree (mmdebstrap) with
# a compiler, cmake and pkg-config, into which apt installs the three .deb
# files of cmake/package.sh and whatever they depend on, from Debian's
# mirror, one package at a time so that each runs with only its own Depends:
# commitlog-kv from commitlog-tools starts and answers PING; with
# libcommitlog-dev the README's example is built with pkg-config and with
# find_package, each against the shared library and the archive, and run
# twice (the second run recovers the first); with libcommitlog0 alone the
# shared builds run again. A package that misses a dependency fails here, as
# it would for a user. So does an unreachable mirror.
# Runs as root with CI=true (a CI that is not root fails); elsewhere it is
# skipped, since it writes a few hundred MB and downloads from Debian.
#   clean_machine_test.sh PACKAGES_DIR SOURCE_DIR
set -euo pipefail
packages=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
fail() { echo "clean machine test: $*" >&2; exit 1; }
if [[ ${CI:-} != true ]]; then
  echo "clean machine test: skipped (runs with CI=true, as root: it builds a Debian tree from the network)"
  exit 77
fi
[[ $(id -u) == 0 ]] || fail "needs root for the chroot; CI runs it as root"
mirror=${COMMITLOG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${COMMITLOG_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
debs=("$packages"/libcommitlog0_*.deb "$packages"/libcommitlog-dev_*.deb "$packages"/commitlog-tools_*.deb)
for d in "${debs[@]}"; do [[ -f $d ]] || fail "no $d"; done

work=$source_dir/build/clean-machine
rm -rf "$work"
mkdir -p "$work/in"
trap 'rm -rf "$work"' EXIT
cp "${debs[@]}" "$source_dir/examples/embed.cc" "$work/in/"

# What runs inside the tree, as root in the chroot.
cat > "$work/in/inside.sh" << 'INSIDE'
set -euo pipefail
trap 'echo "inside: failed at line $LINENO: $BASH_COMMAND"' ERR
step() { echo "== $*"; }
install() { apt-get install -y -q --no-install-recommends "$@" > apt.log || { cat apt.log; exit 1; }; }
# Removes the packages and what apt installed only for them.
remove() { apt-get purge -y -q --autoremove "$@" > apt.log || { cat apt.log; exit 1; }; }
cd /tmp/in
multiarch=$(gcc -print-multiarch)

# Each package is tried with only its own Depends installed, so a dependency
# missing from one is not hidden by another's.
step "commitlog-tools alone: commitlog, and commitlog-kv answering PING"
install ./commitlog-tools_*.deb
test -e /etc/commitlog/commitlog.yaml
test ! -e /etc/systemd/system/multi-user.target.wants/commitlog-kv.service
commitlog --version
commitlog config /etc/commitlog/commitlog.yaml > /dev/null
commitlog-kv --config /etc/commitlog/commitlog.yaml --dir /tmp/kv --bind 127.0.0.1 --port 0 > kv.out 2>&1 &
kv=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\).*/\1/p' kv.out)
  [[ -n $port ]] && break
  kill -0 "$kv" 2> /dev/null || { cat kv.out; exit 1; }
  sleep 0.1
done
[[ -n $port ]] || { cat kv.out; echo "commitlog-kv did not start listening"; exit 1; }
exec 3<> "/dev/tcp/127.0.0.1/$port"
printf 'PING\r\n' >&3
IFS= read -r -t 10 reply <&3
exec 3>&-
kill "$kv"
wait "$kv" || true
[[ $reply == "+PONG"* ]] || { echo "PING got '$reply'"; exit 1; }
echo "commitlog-kv answered PING on port $port"
remove commitlog-tools

# run NAME: the example twice on a fresh directory; the second run recovers the first.
run() {
  "./$1" "/tmp/log-$1" | grep "^recovered 0 mutations" > /dev/null
  "./$1" "/tmp/log-$1" | grep "^recovered [1-9][0-9]* mutations" > /dev/null
  rm -rf "/tmp/log-$1"
  echo "$1 ran twice and recovered"
}
uses_shared() { ldd "$1" | grep -E "libcommitlog\.so\.0 => (/usr)?/lib/$multiarch/libcommitlog\.so\.0" > /dev/null; }

step "libcommitlog-dev: the example with pkg-config, shared and static"
install ./libcommitlog0_*.deb ./libcommitlog-dev_*.deb
c++ -std=c++20 embed.cc -o pc-shared $(pkg-config --cflags --libs commitlog)
uses_shared pc-shared
run pc-shared
static_libs=$(pkg-config --static --libs commitlog)
c++ -std=c++20 embed.cc -o pc-static $(pkg-config --cflags commitlog) ${static_libs/-lcommitlog/-l:libcommitlog.a}
if ldd pc-static | grep libcommitlog; then echo "pc-static links the shared library"; exit 1; fi
run pc-static

step "libcommitlog-dev: the example with find_package, shared and static"
mkdir -p cmake-project
cat > cmake-project/CMakeLists.txt << 'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(embed CXX)
find_package(commitlog REQUIRED COMPONENTS static)
add_executable(cmake-shared /tmp/in/embed.cc)
target_link_libraries(cmake-shared PRIVATE commitlog::commitlog_shared)
add_executable(cmake-static /tmp/in/embed.cc)
target_link_libraries(cmake-static PRIVATE commitlog::commitlog)
CMAKE
cmake -S cmake-project -B cmake-build > /dev/null
cmake --build cmake-build > /dev/null
cp cmake-build/cmake-shared cmake-build/cmake-static .
uses_shared cmake-shared
if ldd cmake-static | grep libcommitlog; then echo "cmake-static links the shared library"; exit 1; fi
run cmake-shared
run cmake-static

step "libcommitlog0 alone: the shared builds run"
apt-mark manual libcommitlog0 > /dev/null
remove libcommitlog-dev
test ! -e /usr/include/commitlog/commit_log.h
run pc-shared
run cmake-shared
echo "inside: all passed"
INSIDE

start=$SECONDS
# The tree is built, used and thrown away in one go: the hooks run inside it
# with /proc and /dev mounted by mmdebstrap. Its download cache stays in the tree.
mmdebstrap --mode=root --variant=minbase --format=directory \
  --include=g++,make,cmake,pkg-config,ca-certificates \
  --customize-hook='copy-in '"$work/in"' /tmp' \
  --customize-hook='chroot "$1" bash /tmp/in/inside.sh' \
  bookworm "$work/root" \
  "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
  "deb $security bookworm-security main" > "$work/mmdebstrap.log" 2>&1 ||
  { tail -60 "$work/mmdebstrap.log" >&2; fail "the Debian 12 tree or a step inside it failed (above)"; }
grep -q "^inside: all passed" "$work/mmdebstrap.log" || { tail -60 "$work/mmdebstrap.log" >&2; fail "inside did not finish"; }
grep -E "^(== |.* ran twice|commitlog-kv answered)" "$work/mmdebstrap.log"
echo "clean machine test: each package installed by apt on Debian 12 minbase with only its Depends; example built 4 ways and run; commitlog-kv answered PING ($((SECONDS - start)) s)"
