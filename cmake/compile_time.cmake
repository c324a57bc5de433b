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
