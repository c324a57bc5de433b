#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `cmake --install` of the build into a scratch prefix: only the public
# headers (the list in commitlog/CMakeLists.txt), each compiling on its own
# and including only public headers; both libraries, the shared one with its
# SONAME; the tools and the config; then the consumers of consumers.sh.
#   install_test.sh BUILD_DIR PUBLIC_HEADER...
set -euo pipefail
build_dir=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" > /dev/null

# The headers: exactly the list, under one commitlog/ root.
expected=$(for h in "$@"; do basename "$h"; done | sort)
installed=$(cd "$prefix/include" && find . -type f | sed 's|^\./||' | sort)
[[ $installed == "$(sed 's|^|commitlog/|' <<< "$expected")" ]] ||
  fail "installed headers differ from the public list:"$'\n'"$(diff <(echo "$installed") <(sed 's|^|commitlog/|' <<< "$expected"))"
for h in "$source_dir"/include/commitlog/*.h "$source_dir"/commitlog/*.h; do
  if [[ $(grep -v -m1 '^// SPDX-License-Identifier' "$h") == "// Public API."* ]] && ! grep -qx "$(basename "$h")" <<< "$expected"; then
    fail "$(basename "$h") says it is public API but is not in COMMITLOG_PUBLIC_HEADERS"
  fi
done
for h in $expected; do
  while read -r included; do
    [[ -f $prefix/include/$included ]] || fail "commitlog/$h includes \"$included\", which is not installed"
  done < <(sed -n 's/^#include "\(.*\)".*/\1/p' "$prefix/include/commitlog/$h")
done
for h in $expected; do echo "$h"; done |
  xargs -P2 -I{} sh -c "echo '#include <commitlog/{}>' | c++ -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror -I'$prefix/include' -x c++ - || { echo 'commitlog/{} does not compile on its own' >&2; exit 255; }"

# A pre-C++20 compiler is told so, in one message.
c17=$(echo '#include <commitlog/commit_log.h>' | c++ -std=c++17 -fsyntax-only -I"$prefix/include" -x c++ - 2>&1) &&
  fail "commitlog/commit_log.h compiles with -std=c++17"
[[ $(grep -c 'error:' <<< "$c17") == 1 && $c17 == *"needs C++20"* ]] ||
  fail "-std=c++17 should give one error naming C++20, got:"$'\n'"$c17"

# The libraries, the tools, the config.
for f in lib/libcommitlog.a lib/libcommitlog.so bin/commitlog bin/commitlog-kv share/commitlog/commitlog.yaml \
  lib/pkgconfig/commitlog.pc lib/cmake/commitlog/commitlogConfig.cmake; do
  [[ -e $prefix/$f ]] || fail "$f is not installed"
done
soname=$(readelf -d "$prefix/lib/libcommitlog.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ $soname == libcommitlog.so.[0-9]* && $soname != *.*.*.* && -e $prefix/lib/$soname ]] || fail "SONAME '$soname' is not installed"
if grep -rq -e "$source_dir" -e "$build_dir" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"; then
  fail "the CMake or pkg-config files name the source or build tree"
fi
"$prefix/bin/commitlog" --help > /dev/null

source "$here/consumers.sh"
consumers_against "$prefix" "$work"
echo "install test: public headers only; static and shared library; find_package and pkg-config consumers built and ran"
