#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The house rules of the source tree, checked on every run of the suite.

Floors, lowest first. A file may include from its own folder or from a floor
below its own; two folders on the same floor do not include each other. The
public headers are the ground floor: they include only each other.

Also: no library file over 400 lines, no library folder over 25 files, and an
SPDX line in the first lines of every .h, .cc, .sh, .py and CMake file.

Usage: layering_test.py SOURCE_DIR (exit 1 naming every break).
"""
import os
import re
import sys

FLOORS = [
    ["include/commitlog"],
    ["segment/crypto"],
    ["segment"],
    ["segment/platform"],
    ["segment/storage"],
    ["policies"],
    ["commitlog/util"],
    ["commitlog/cdc"],
    ["commitlog/replay"],
    ["commitlog/lifecycle"],
    ["commitlog/lifecycle/retention"],
    ["commitlog/write"],
    ["commitlog/config"],
    ["commitlog"],
    ["tools/common"],
    ["tools/lab", "tools/lab/space_stall"],
    ["tools/cli", "tools/kv"],
]
FLOOR_OF = {folder: level for level, folders in enumerate(FLOORS) for folder in folders}
LIBRARY = ("include", "segment", "policies", "commitlog")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of_include(root, target):
    """The folder an #include "target" resolves to, or None for a foreign file."""
    for base in (os.path.join(root, "include"), root):
        if os.path.exists(os.path.join(base, target)):
            return os.path.relpath(os.path.dirname(os.path.join(base, target)), root)
    return None


def missing_spdx(root):
    skip = {".git", "build", "research"}
    missing = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.startswith(("build-", ".")))
        for name in sorted(files):
            if not (name.endswith((".h", ".cc", ".sh", ".py", ".cmake", ".cmake.in")) or name == "CMakeLists.txt"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                head = [next(f, "") for _ in range(3)]
            if not any("SPDX-License-Identifier:" in line for line in head):
                missing.append(f"{os.path.relpath(path, root)}: no SPDX-License-Identifier line in its first three lines")
    return missing


def main(root):
    breaks = []
    for folder, level in FLOOR_OF.items():
        path = os.path.join(root, folder)
        names = [n for n in os.listdir(path) if os.path.isfile(os.path.join(path, n))]
        if folder.split("/")[0] in LIBRARY and len(names) > 25:
            breaks.append(f"{folder}: {len(names)} files, more than 25: split it by job")
        for name in sorted(names):
            if not name.endswith((".h", ".cc")):
                continue
            file = os.path.join(folder, name)
            with open(os.path.join(root, file), encoding="utf-8") as f:
                lines = f.readlines()
            if folder.split("/")[0] in LIBRARY and name.endswith(".cc") and len(lines) > 400:
                breaks.append(f"{file}: {len(lines)} lines, more than 400")
            for number, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = folder_of_include(root, m.group(1))
                if target is None or target == folder:
                    continue
                if target not in FLOOR_OF:
                    breaks.append(f"{file}:{number}: includes {m.group(1)} from {target}, a folder with no floor")
                elif FLOOR_OF[target] >= level:
                    breaks.append(f"{file}:{number}: includes {m.group(1)} from {target}, "
                                  f"{'a folder on its own floor' if FLOOR_OF[target] == level else 'a floor above'}")
    breaks += missing_spdx(root)
    for b in breaks:
        print(b)
    return 1 if breaks else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
