#!/usr/bin/env bash
# Installs the built project into a temporary prefix, then builds and runs a
# consumer through find_package(commitlog) and through pkg-config.
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer" "$work/log-cmake" | grep -q "appended at"
c++ -std=c++20 "$source_dir/consumer.cc" -o "$work/consumer-pc" \
  $(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs commitlog)
"$work/consumer-pc" "$work/log-pc" | grep -q "appended at"
echo "install test: find_package and pkg-config consumers built and ran"
