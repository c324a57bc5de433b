#!/usr/bin/env bash
# Installs the Debian packages commitlog needs. Idempotent and non-interactive:
# packages already present are left alone; nothing is asked.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libboost-fiber-dev libboost-context-dev   # fibers: producers that suspend instead of blocking
  libxxhash-dev                             # XXH3-64 checksums of headers, markers, entries
  liblz4-dev                                # LZ4 compression of sync sections
  libyaml-cpp-dev                           # conf/commitlog.yaml and cassandra.yaml reader
  doctest-dev                               # the test framework
  libcli11-dev                              # the commitlog CLI's argument parsing
  libfmt-dev                                # formatting of messages and reports
  nlohmann-json3-dev                        # JSON output of the tools
  libbenchmark-dev                          # micro-benchmarks of the append path
  librocksdb-dev                            # the peer engine in `commitlog bench`
  gnuplot-nox                               # the plots of `commitlog bench --plot`
  clang-14 libclang-rt-14-dev               # libFuzzer targets and sanitizer runtimes
  redis-tools                               # redis-benchmark and redis-cli: the first command's load and checks
  redis-server                              # the peer of commitlog-kv in scripts/kv-bench.sh
  dpkg-dev                                  # dpkg-shlibdeps: the Depends of `cpack -G DEB`
  file                                      # cpack -G DEB reads binaries' types with it for their Depends
)

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
