#include "tests/fuzz/fuzz_inputs.h"

#include <string>
#include <variant>

#include "commitlog/config.h"
#include "segment/segment_image.h"
#include "segment/segment_reader.h"

namespace commitlog::fuzzing {

size_t read_segment(std::span<const std::byte> file) {
  SegmentHeader header;
  if (decode_segment_header(file, &header) != HeaderProblem::kNone) return 0;
  const SegmentImage image = load_segment_image(file, header);
  SegmentReader reader(image, header);
  size_t entries = 0;
  // Skip mode: keep going after damage, as far as the reader can.
  while (true) {
    SegmentItem item = reader.next();
    if (std::holds_alternative<SegmentEnd>(item)) return entries;
    if (std::holds_alternative<SegmentEntry>(item)) ++entries;
  }
}

bool read_config(std::span<const std::byte> text) {
  const std::string yaml(reinterpret_cast<const char*>(text.data()), text.size());
  return load_config_string(yaml, "fuzz.yaml").ok();
}

}  // namespace commitlog::fuzzing
