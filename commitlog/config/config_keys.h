// SPDX-License-Identifier: Apache-2.0
// The configuration keys: one entry per key, read by the loader (config.cc),
// Options::validate() (options.cc), `commitlog config` and the reference
// (config_render.cc). Adding a key is adding an Options field and one entry
// to the table in config_keys.cc, e.g.
//
//   {.name = "commitlog_sync_period",
//    .old_name = "commitlog_sync_period_in_ms",
//    .type = duration([](auto& o) -> auto& { return o.policy.sync_period; }, kCassandraMs),
//    .doc = "periodic: the time between fsyncs.",
//    .check = [](const Options& o) -> std::string { ... "" when the value is fine ... },
//    .depends_on = "commitlog_sync"},
//
// (designated initializers: the fields in KeySpec's order, each one optional
// but the name). The entry's place in the table is its place in
// conf/commitlog.yaml, `commitlog config` and docs/configuration.md, which a
// test regenerates; conf/commitlog.yaml must document the key with its default
// and the round-trip test in tests/config/config_table_test.cc must cover its units.
//
// A Cassandra key this library does not act on has no type; `harmless` then
// says which of its values ask for nothing it does not do anyway (no warning);
// implementing the key is giving its entry a type.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "commitlog/config/config_types.h"

namespace commitlog::config {

// The values of an unsupported key that ask for nothing this library does
// not do anyway.
struct Harmless {
  bool (*accepts)(std::string_view value);
  std::string_view text;  // for the reference: "any value", "`false`"
};

struct KeySpec {
  std::string_view name;      // the new-style name, Cassandra's where it has the key
  std::string_view old_name;  // Cassandra's older name with the unit in it, or ""
  std::optional<ValueType> type;  // none: a Cassandra key this library does not support
  std::string_view doc;           // one line
  // The rule the value must keep: "" when it does, else what it must be
  // ("must be greater than 0 when commitlog_sync is group").
  std::string (*check)(const Options& o) = nullptr;
  // The key whose value makes `check` fail when this one is unset (a
  // policy's window fails because of commitlog_sync): the loader points there.
  std::string_view depends_on;
  std::string_view zero_means;       // what 0 or empty means, shown beside it ("unlimited")
  std::string_view derived_default;  // when unset, the default follows other keys: how
  void (*derive)(Options& o) = nullptr;  // applies derived_default to Options' own default
  const Harmless* harmless = nullptr;  // an unsupported key: the values accepted silently
  // What the value comes to when other keys decide it (legacy: "mmap, as
  // commitlog_compression is not set"), for `commitlog config`; "" for none.
  std::string (*in_effect)(const Options& o) = nullptr;

  bool supported() const { return type.has_value(); }
};

// Every key: the supported ones in conf/commitlog.yaml's order, then the
// Cassandra keys this library does not support.
std::span<const KeySpec> keys();
// The entry whose new or old name is `key`; nullptr when none.
const KeySpec* find_key(std::string_view key);
// The name (new or old, of any entry) nearest to `key` within edit distance 2,
// or "commitlog_" + key when that is a name; "" when none.
std::string_view suggest_key(std::string_view key);
// An unknown key with one of these prefixes belongs to the commit log and is
// warned about; any other is someone else's (cassandra.yaml).
bool has_commit_log_prefix(std::string_view key);

// Optimal string alignment distance (Levenshtein plus adjacent swaps), for
// "did you mean" hints.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace commitlog::config
