#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A full disk on a small real file system never leaves a log that will not
# open: `commitlog stress` (batch, so every ack is durable) fills a
# loop-mounted ext4 image, or a tmpfs where loop devices are not to be had,
# in each access mode, plain and LZ4; then, with room again, `commitlog
# verify` exits 0, `stress --check` finds every acknowledged mutation, and
# stress starts on the log again. The fault-file-system version of this is
# tests/full_disk_test.cc.
#   full_disk_test.sh COMMITLOG_CLI
# Exits 77 (CTest: skipped), saying why, when this machine lets it mount
# neither.
set -euo pipefail
cli=$1
work=$(mktemp -d)
mnt=$work/mnt
mkdir "$mnt"
cleanup() {
  mountpoint -q "$mnt" && umount "$mnt"
  rm -rf "$work"
}
trap cleanup EXIT

fs=
if command -v mkfs.ext4 >/dev/null && truncate -s 24M "$work/ext4.img" &&
   mkfs.ext4 -q -F -m 0 "$work/ext4.img" >/dev/null 2>&1 &&
   mount -o loop "$work/ext4.img" "$mnt" 2>/dev/null; then
  fs=ext4
elif mount -t tmpfs -o size=16m tmpfs "$mnt" 2>/dev/null; then
  fs=tmpfs
else
  echo "SKIPPED: this machine lets this test mount neither a loop ext4 image nor a tmpfs (not root, or in a container without CAP_SYS_ADMIN)"
  exit 77
fi
echo "on $fs"
modes=(mmap standard)
[[ $fs == ext4 ]] && modes+=(direct)  # tmpfs has no O_DIRECT

failed=0
fail() { echo "FAILED: $*"; failed=1; }

for mode in "${modes[@]}"; do
  for compression in none lz4; do
    [[ $mode == mmap && $compression == lz4 ]] && continue  # refused: mmap writes plain segments only
    name=$mode-$compression
    log=$mnt/$name
    config=$work/$name.yaml
    acks=$work/$name.acks
    echo "commitlog_disk_access_mode: $mode" > "$config"
    [[ $compression == lz4 ]] && printf 'commitlog_compression:\n  class_name: LZ4Compressor\n' >> "$config"
    # A few MiB of room: the rest of the volume is ballast, removed to make room again.
    free_kib=$(df -k --output=avail "$mnt" | tail -1)
    fallocate -l $(((free_kib - 5 * 1024) * 1024)) "$mnt/ballast"
    stress=(--dir "$log" --config "$config" --policy batch --segment-size 2MiB --producers 2 --fibers 2
            --max-size 3000)
    status=0
    "$cli" stress "${stress[@]}" --acks "$acks" --duration 60 > "$work/$name.out" 2> "$work/$name.err" || status=$?
    acked=$(sed -n 's/.*acked=\([0-9]*\).*/\1/p' "$work/$name.out")
    echo "$name: stress exit $status, acked ${acked:-?}: $(tail -1 "$work/$name.err")"
    echo "$name: segment sizes: $(stat -c %s "$log"/CommitLog-* | tr '\n' ' ')"
    if [[ $status -eq 0 ]] || ! grep -q "no space" "$work/$name.err"; then
      fail "$name: stress did not stop on a full disk"
    fi
    rm "$mnt/ballast"
    if ! "$cli" verify "$log" > "$work/$name.verify" 2>&1; then
      fail "$name: verify exits non-zero with room again"
      cat "$work/$name.verify"
    fi
    if ! "$cli" stress --check --dir "$log" --acks "$acks" --max-size 3000; then
      fail "$name: stress --check does not find every acknowledged mutation"
    fi
    if ! "$cli" stress "${stress[@]}" --acks "$acks" --duration 0.2 > /dev/null ||
       ! "$cli" stress --check --dir "$log" --acks "$acks" --max-size 3000 > /dev/null; then
      fail "$name: stress does not start again on the log, or loses what it acknowledged there"
    fi
    rm -rf "$log"
  done
done
exit $failed
