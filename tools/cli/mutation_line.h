// SPDX-License-Identifier: Apache-2.0
// The JSON line of one mutation, as `commitlog replay` writes it (the schema
// in docs/tools.md), for every command that hands mutations out as lines:
//   {"segment":<id>,"offset":<n>,"table":<id>,"time_us":<n>,"size":<n>,"payload":"<base64>"}
// Keys in this order, no spaces, one line; `payload` is standard base64
// (RFC 4648, `+/`, `=` padding) of the payload bytes.
#pragma once

#include "commitlog/replayer.h"
#include "tools/common/output.h"

namespace commitlog::tools {

// Appends `m`'s line, newline included, to `out`.
void append_mutation_line(Output& out, const ReplayedMutation& m);

}  // namespace commitlog::tools
