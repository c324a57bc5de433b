#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every doctest test case is a CTest test of the same name. Discovery lists
# the binary's test cases when it is built, leaving out any case that skips
# itself then, and CTest splits a name at each ';' into tests that match
# nothing and pass.
#   registration_test.sh BUILD_DIR TEST_BINARY
set -euo pipefail
build_dir=$1
binary=$2
cases=$("$binary" --list-test-cases --no-skip | grep -v -e '^\[doctest\] ' -e '^=\{10,\}$' | sort)
registered=$(cd "$build_dir" && ctest -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort)
missing=$(comm -23 <(echo "$cases") <(echo "$registered"))
if [[ -n $missing ]]; then
  echo "test cases CTest does not run (a ';' in the name, or skipped at discovery):" >&2
  echo "$missing" >&2
  exit 1
fi
echo "all $(wc -l <<< "$cases") test cases are CTest tests"
