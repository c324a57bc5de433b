# SPDX-License-Identifier: Apache-2.0
# Headers that most translation units include, parsed once per target rather
# than once per file: parsing them is about half of compiling a typical file,
# and a full CI run compiles every file three times (release, ASan+UBSan, TSan).
set(COMMITLOG_STD_PCH
  <algorithm> <atomic> <chrono> <cstdint> <cstring> <filesystem> <functional> <map> <memory>
  <mutex> <optional> <span> <string> <string_view> <thread> <vector>)

# commitlog_precompile(TARGET [HEADER...]): the standard headers above and the
# given ones. A file that must see a macro before a header (doctest's main)
# opts out with the SKIP_PRECOMPILE_HEADERS source property.
function(commitlog_precompile target)
  target_precompile_headers(${target} PRIVATE ${COMMITLOG_STD_PCH} ${ARGN})
endfunction()

# commitlog_compile_in_batches(TARGET): compiles the target's files eight at a
# time as one unit (a unity build), so that what a header costs beyond parsing
# is paid once per batch: CLI11's above all, whose validators are objects that
# every file including it constructs (seconds of code generation per file at
# -O2), and doctest's and the test helpers' templates once per batch. Names
# in a file's anonymous namespace must then be unique in its target: a
# helper two test files need lives in tests/support/, and a file's own
# fixtures take names of their own.
function(commitlog_compile_in_batches target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
endfunction()
