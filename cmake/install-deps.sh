#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages commitlog needs. Idempotent and non-interactive:
# packages already present are left alone; nothing is asked, and nothing it
# installs starts a service.
#   install-deps.sh        what building the library and tools and showing the
#                          log (cmake/main.sh) need
#   install-deps.sh package  that, and what cmake/package.sh needs to make the
#                            Debian packages
#   install-deps.sh test     all of that, and the test toolchain (cmake/test.sh)
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libboost-fiber-dev libboost-context-dev   # fibers: producers that suspend instead of blocking
  libxxhash-dev                             # XXH3-64 checksums of headers, markers, entries
  liblz4-dev                                # LZ4 compression of sync sections
  libssl-dev                                # libcrypto: AES-256-GCM and key wrap of encrypted segments
  libyaml-cpp-dev                           # conf/commitlog.yaml and cassandra.yaml reader
  libcli11-dev                              # the commitlog CLI's argument parsing
  libfmt-dev                                # formatting of messages and reports
  nlohmann-json3-dev                        # JSON output of the tools
  librocksdb-dev                            # RocksDB: commitlog-kv's engine, and the peer engine of commitlog-bench
  redis-tools                               # redis-benchmark and redis-cli: the first command's load and checks
)
packaging=(
  dpkg-dev                                  # dpkg-shlibdeps and dpkg-deb: the packages' Depends and files
  help2man                                  # the tools' man pages, from their --help
)
case "${1:-main}" in
  main) ;;
  package) packages+=("${packaging[@]}") ;;
  test)
    packages+=(
      "${packaging[@]}"
      doctest-dev                           # the test framework
      clang-14 libclang-rt-14-dev           # libFuzzer targets and sanitizer runtimes
      e2fsprogs                             # mkfs.ext4: the full-disk test's small file system
      lintian                               # the packages' check against Debian policy
      mmdebstrap                            # the clean-machine test's Debian 12 tree
      python3-redis libhiredis-dev          # commitlog-kv's tests with clients nobody here wrote
    )
    ;;
  *) echo "usage: $0 [main|package|test]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
