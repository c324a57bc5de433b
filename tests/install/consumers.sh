# SPDX-License-Identifier: Apache-2.0
# Sourced by the install tests: consumers_against PREFIX WORK builds and runs,
# against the commitlog installed under PREFIX, the CMake consumers (static,
# shared, the README's example; the shared one again with Boost, yaml-cpp and
# fmt hidden from CMake) and two pkg-config consumers (shared, with no other
# .pc file visible; static). Scratch files go under WORK.
consumers_against() {
  local prefix=$1 work=$2 here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  local examples=$here/../../examples

  cmake -S "$here" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLES_DIR="$examples" \
    > "$work/consumer.log"
  cmake --build "$work/consumer" -j2 >> "$work/consumer.log"
  "$work/consumer/consumer_static" "$work/log-static" | grep "appended at" > /dev/null
  "$work/consumer/consumer_shared" "$work/log-shared" | grep "appended at" > /dev/null
  # The shared one runs on the installed library, not on the build's.
  ldd "$work/consumer/consumer_shared" > "$work/consumer_shared.ldd"
  grep -q "$prefix/.*libcommitlog\.so" "$work/consumer_shared.ldd"

  # A shared consumer needs none of the archive's dependencies.
  cmake -S "$here" -B "$work/shared-only" -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLES_DIR="$examples" \
    -DSHARED_ONLY=ON -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON -DCMAKE_DISABLE_FIND_PACKAGE_yaml-cpp=ON \
    -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON > "$work/shared-only.log" 2>&1
  grep -q "commitlog static not found, as expected: .*Boost.*yaml-cpp, fmt" "$work/shared-only.log"
  cmake --build "$work/shared-only" -j2 --target consumer_shared >> "$work/shared-only.log"
  "$work/shared-only/consumer_shared" "$work/log-shared-only" | grep "appended at" > /dev/null

  local pc_path
  pc_path=$(dirname "$(find "$prefix" -name commitlog.pc | head -1)")
  local cflags libs static_libs
  # Only commitlog.pc visible, as on a machine without the archive's -dev packages.
  cflags=$(PKG_CONFIG_LIBDIR=$pc_path pkg-config --cflags commitlog)
  libs=$(PKG_CONFIG_LIBDIR=$pc_path pkg-config --libs commitlog)
  static_libs=$(PKG_CONFIG_PATH=$pc_path pkg-config --static --libs commitlog)
  if [[ $cflags == *-std=* ]]; then
    echo "pkg-config --cflags commitlog sets the standard: $cflags" >&2
    return 1
  fi
  c++ -std=c++23 -DEXPECT_CXX23 "$here/consumer.cc" -o "$work/consumer-pc" $cflags $libs
  LD_LIBRARY_PATH=$(dirname "$(find "$prefix" -name 'libcommitlog.so' | head -1)") \
    "$work/consumer-pc" "$work/log-pc" | grep "appended at" > /dev/null
  c++ -std=c++20 "$here/consumer.cc" -o "$work/consumer-pc-static" $cflags \
    ${static_libs/-lcommitlog/-l:libcommitlog.a}
  "$work/consumer-pc-static" "$work/log-pc-static" | grep "appended at" > /dev/null

  # The example on a directory that does not exist yet, then again on what it left.
  "$work/consumer/embed" "$work/embed-log" > "$work/embed-1.out"
  grep -q "^recovered 0 mutations" "$work/embed-1.out"
  "$work/consumer/embed" "$work/embed-log" > "$work/embed-2.out"
  grep -q "^recovered [1-9][0-9]* mutations" "$work/embed-2.out"
}
