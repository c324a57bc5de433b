// The yaml side of the configuration: which keys exist, where each value sits
// in the file, and the message when one is wrong. The value syntax itself is
// in config_values.cc. Every yaml-cpp exception stops in load_config_string().
#include "commitlog/config.h"

#include <cctype>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "commitlog/config_values.h"

namespace commitlog {
namespace {

namespace cv = config_values;

// A supported key: its new-style name and, if Cassandra had one, its old-style
// name with the unit in it.
struct KeyName {
  std::string_view name;
  std::string_view old_name;
};

constexpr KeyName kDirectory{"commitlog_directory", ""};
constexpr KeyName kSync{"commitlog_sync", ""};
constexpr KeyName kSyncPeriod{"commitlog_sync_period", "commitlog_sync_period_in_ms"};
constexpr KeyName kGroupWindow{"commitlog_sync_group_window", "commitlog_sync_group_window_in_ms"};
constexpr KeyName kLagBlock{"periodic_commitlog_sync_lag_block", "periodic_commitlog_sync_lag_block_in_ms"};
constexpr KeyName kSegmentSize{"commitlog_segment_size", "commitlog_segment_size_in_mb"};
constexpr KeyName kMaxMutationSize{"max_mutation_size", "max_mutation_size_in_kb"};
constexpr KeyName kCompression{"commitlog_compression", ""};
constexpr KeyName kTotalSpace{"commitlog_total_space", "commitlog_total_space_in_mb"};
constexpr KeyName kFailurePolicy{"commit_failure_policy", ""};
constexpr KeyName kCompressionBuffers{"commitlog_max_compression_buffers_in_pool", ""};
constexpr KeyName kMarkerInterval{"commitlog_ext_marker_interval", ""};
constexpr KeyName kLatencyCap{"commitlog_ext_adaptive_latency_cap", ""};
constexpr KeyName kHardLimit{"commitlog_ext_total_space_hard_limit", ""};
constexpr KeyName kMaxDelay{"commitlog_ext_total_space_max_delay", ""};
constexpr KeyName kArchiving{"commitlog_ext_archiving_properties", ""};
constexpr KeyName kDirectThreshold{"commitlog_ext_direct_write_threshold", ""};
constexpr KeyName kSpinWait{"commitlog_ext_spin_wait", ""};

constexpr const KeyName* kAllKeys[] = {
    &kDirectory,       &kSync,          &kSyncPeriod,         &kGroupWindow,
    &kLagBlock,        &kSegmentSize,   &kMaxMutationSize,    &kCompression,
    &kTotalSpace,      &kFailurePolicy, &kCompressionBuffers, &kMarkerInterval,
    &kLatencyCap,      &kHardLimit,     &kMaxDelay,           &kArchiving,
    &kDirectThreshold, &kSpinWait,
};

// An unknown key with one of these prefixes belongs to the commit log and is
// warned about; any other unknown key is someone else's (cassandra.yaml).
constexpr std::string_view kCommitLogPrefixes[] = {"commitlog_", "cdc_", "periodic_commitlog"};

constexpr std::pair<std::string_view, CommitFailurePolicy> kFailurePolicies[] = {
    {"stop", CommitFailurePolicy::kStop},
    {"stop_commit", CommitFailurePolicy::kStopCommit},
    {"die", CommitFailurePolicy::kDie},
    {"ignore", CommitFailurePolicy::kIgnore},
};

constexpr std::string_view kLz4Names[] = {"LZ4Compressor", "LZ4",
                                          "org.apache.cassandra.io.compress.LZ4Compressor"};

constexpr uint64_t kSegmentLimit = 2048 * cv::kMiB;  // exclusive, as in Cassandra

// A top-level `key: value` of the file whose value is not empty.
struct Entry {
  std::string key;  // as written: the new or the old name
  YAML::Node value;
  int line = 0;
};

int line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

const char* type_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Null: return "empty";
    case YAML::NodeType::Undefined: break;
  }
  return "undefined";
}

void set_flow_style(YAML::Node node) {
  if (!node.IsMap() && !node.IsSequence()) return;
  node.SetStyle(YAML::EmitterStyle::Flow);
  for (auto it = node.begin(); it != node.end(); ++it) {
    set_flow_style(node.IsMap() ? it->second : YAML::Node(*it));
  }
}

// The value as text on one line: maps and lists in flow style.
std::string show(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Node copy = YAML::Clone(node);
  set_flow_style(copy);
  YAML::Emitter out;
  out << copy;
  return out.c_str();
}

// One load: the file's entries, then the effective settings.
class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  // Takes the top-level keys of `root`, warning about unsupported ones.
  Status collect(const YAML::Node& root);
  // The entry of `k` under either name; nullptr when unset. An error when
  // both names are set.
  Result<const Entry*> find(const KeyName& k);
  // The entry find() returned for `k`; nullptr when unset.
  const Entry* entry(const KeyName& k) const {
    auto it = used_.find(k.name);
    return it == used_.end() ? nullptr : it->second;
  }
  // e's value if it is a scalar; else an error saying `expected` was expected.
  Result<std::string> scalar(const Entry& e, std::string_view expected) const;

  Status bad(std::string_view key, int line, const YAML::Node& value, std::string_view what) const {
    return Status::invalid_argument(fmt::format("{}:{}: {}: '{}' {}", file_, line, key, show(value), what));
  }
  Status bad(const Entry& e, std::string_view what) const { return bad(e.key, e.line, e.value, what); }
  // `status` from the policy factory, with the line of the key it names.
  Status policy_error(const Status& status) const;

  void warn(int line, std::string_view what) { warnings_.push_back(fmt::format("{}:{}: {}", file_, line, what)); }
  void record(const KeyName& k, std::string value);
  const std::string& file() const { return file_; }
  std::vector<ConfigValue> take_settings() { return std::move(settings_); }
  std::vector<std::string> take_warnings() { return std::move(warnings_); }

 private:
  std::string file_;
  std::map<std::string, Entry, std::less<>> entries_;
  std::map<std::string, const Entry*, std::less<>> used_;  // new-style name -> entry read
  std::vector<ConfigValue> settings_;
  std::vector<std::string> warnings_;
};

bool is_supported(std::string_view key) {
  for (const KeyName* k : kAllKeys) {
    if (key == k->name || (!k->old_name.empty() && key == k->old_name)) return true;
  }
  return false;
}

bool belongs_to_commit_log(std::string_view key) {
  for (std::string_view prefix : kCommitLogPrefixes) {
    if (key.starts_with(prefix)) return true;
  }
  return false;
}

Status Loader::collect(const YAML::Node& root) {
  if (root.IsNull()) return {};  // an empty file: every default
  if (!root.IsMap()) {
    return Status::invalid_argument(fmt::format("{}:{}: the top level is {}, expected a map of settings",
                                                file_, line_of(root), type_name(root)));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!it->first.IsScalar() || it->second.IsNull()) continue;  // not ours, or unset
    Entry e{it->first.Scalar(), it->second, line_of(it->first)};
    if (!is_supported(e.key)) {
      if (belongs_to_commit_log(e.key)) warn(e.line, fmt::format("{} is not supported and is ignored", e.key));
      continue;
    }
    auto [pos, inserted] = entries_.emplace(e.key, e);
    if (!inserted) return bad(e, fmt::format("is a second setting of {} (the first is on line {})", e.key, pos->second.line));
  }
  return {};
}

Result<const Entry*> Loader::find(const KeyName& k) {
  auto fresh = entries_.find(k.name);
  auto old = k.old_name.empty() ? entries_.end() : entries_.find(k.old_name);
  if (fresh != entries_.end() && old != entries_.end()) {
    return bad(fresh->second, fmt::format("is also set under the old name {}: '{}' on line {}; keep only {}",
                                          k.old_name, show(old->second.value), old->second.line, k.name));
  }
  const Entry* found = fresh != entries_.end() ? &fresh->second
                       : old != entries_.end() ? &old->second
                                               : nullptr;
  if (found != nullptr) used_.emplace(k.name, found);
  return found;
}

Result<std::string> Loader::scalar(const Entry& e, std::string_view expected) const {
  if (e.value.IsScalar()) return e.value.Scalar();
  return bad(e, fmt::format("is {}, expected {}", type_name(e.value), expected));
}

Status Loader::policy_error(const Status& status) const {
  // Factories start their messages with the key at fault; point at its line,
  // else at commitlog_sync's.
  const std::string& message = status.message();
  std::string_view named;
  for (const KeyName* k : kAllKeys) {
    bool prefix = message.starts_with(k->name) &&
                  (message.size() == k->name.size() || !(std::isalnum(static_cast<unsigned char>(message[k->name.size()])) ||
                                                         message[k->name.size()] == '_'));
    if (prefix && k->name.size() > named.size()) named = k->name;
  }
  auto at = used_.find(named);
  if (at == used_.end()) at = used_.find(kSync.name);
  if (at == used_.end()) return {status.code(), fmt::format("{}: {}", file_, message)};
  return {status.code(), fmt::format("{}:{}: {}", file_, at->second->line, message)};
}

void Loader::record(const KeyName& k, std::string value) {
  const Entry* e = entry(k);
  settings_.push_back({std::string(k.name), std::move(value), e ? ConfigSource::kFile : ConfigSource::kDefault,
                       e ? e->line : 0});
}

// The readers: each leaves *out alone when the key is unset.

Status read_text(Loader& l, const KeyName& k, std::string_view expected, std::string* out) {
  Result<const Entry*> e = l.find(k);
  if (!e.ok() || e.value() == nullptr) return e.status();
  Result<std::string> text = l.scalar(*e.value(), expected);
  if (!text.ok()) return text.status();
  if (text->empty()) return l.bad(*e.value(), fmt::format("is empty, expected {}", expected));
  *out = std::move(text.value());
  return {};
}

Status read_duration(Loader& l, const KeyName& k, cv::DurationLimits limits, Duration* out) {
  Result<const Entry*> e = l.find(k);
  if (!e.ok() || e.value() == nullptr) return e.status();
  const Entry& entry = *e.value();
  Result<std::string> text = l.scalar(entry, "a duration (e.g. 10000ms)");
  if (!text.ok()) return text.status();
  // Cassandra's old group window is a double; the other *_in_ms are ints.
  bool fraction = k.name == kGroupWindow.name;
  Result<Duration> d = entry.key == k.name ? cv::parse_duration(*text, limits)
                                           : cv::parse_old_duration(*text, std::chrono::milliseconds(1), "ms", fraction);
  if (!d.ok()) return l.bad(entry, d.status().message());
  *out = *d;
  return {};
}

// `min_unit` is also the unit of the old name (_in_mb or _in_kb).
Status read_size(Loader& l, const KeyName& k, uint64_t min_unit, uint64_t* out) {
  Result<const Entry*> e = l.find(k);
  if (!e.ok() || e.value() == nullptr) return e.status();
  const Entry& entry = *e.value();
  Result<std::string> text = l.scalar(entry, "a size (e.g. 32MiB)");
  if (!text.ok()) return text.status();
  Result<uint64_t> size = entry.key == k.name
                              ? cv::parse_size(*text, {min_unit, cv::kInt32Max})
                              : cv::parse_old_size(*text, min_unit, min_unit == cv::kKiB ? "KiB" : "MiB");
  if (!size.ok()) return l.bad(entry, size.status().message());
  *out = *size;
  return {};
}

Status read_count(Loader& l, const KeyName& k, uint64_t min, uint64_t max, uint64_t* out) {
  std::string text;
  CL_RETURN_IF_ERROR(read_text(l, k, "a whole number", &text));
  if (text.empty()) return {};  // unset
  const Entry& entry = *l.entry(k);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return l.bad(entry, fmt::format("is not a whole number from {} to {}", min, max));
  }
  *out = value;
  return {};
}

Status read_failure_policy(Loader& l, CommitFailurePolicy* out) {
  Result<const Entry*> e = l.find(kFailurePolicy);
  if (!e.ok() || e.value() == nullptr) return e.status();
  Result<std::string> text = l.scalar(*e.value(), "stop, stop_commit, die or ignore");
  if (!text.ok()) return text.status();
  for (const auto& [name, policy] : kFailurePolicies) {
    if (*text == name) {
      *out = policy;
      return {};
    }
  }
  return l.bad(*e.value(), "is not a commit failure policy (expected stop, stop_commit, die or ignore)");
}

// Compressor parameters: none is supported, so each one is a warning. Cassandra
// writes them as a list of maps (`parameters: [{k: v}]`, or `[null]`), or a map.
Status warn_parameters(Loader& l, const YAML::Node& params, int line) {
  if (params.IsNull()) return {};
  if (params.IsMap()) {
    for (auto p = params.begin(); p != params.end(); ++p) {
      l.warn(line_of(p->first),
             fmt::format("commitlog_compression.parameters.{} is not supported and is ignored", show(p->first)));
    }
    return {};
  }
  if (params.IsSequence()) {
    bool all_maps = true;
    for (const YAML::Node& item : params) all_maps = all_maps && (item.IsNull() || item.IsMap());
    if (all_maps) {
      for (const YAML::Node& item : params) CL_RETURN_IF_ERROR(warn_parameters(l, item, line));
      return {};
    }
  }
  return l.bad("commitlog_compression.parameters", line, params,
               fmt::format("is {}, expected a map of parameters", type_name(params)));
}

// commitlog_compression: {class_name: LZ4Compressor, parameters: {...}}, or
// the list of one such map that cassandra.yaml documents.
Status read_compression(Loader& l, Compression* out) {
  Result<const Entry*> e = l.find(kCompression);
  if (!e.ok() || e.value() == nullptr) return e.status();
  const Entry& c = *e.value();
  const YAML::Node spec = c.value.IsSequence() && c.value.size() == 1 ? c.value[0] : c.value;
  if (!spec.IsMap()) {
    return l.bad(c, fmt::format("is {}, expected a map such as {{class_name: LZ4Compressor}}", type_name(c.value)));
  }
  std::optional<YAML::Node> class_name;
  int class_line = c.line;
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    std::string field = show(it->first);
    int line = line_of(it->first);
    if (field == "class_name") {
      class_name.emplace(it->second);
      class_line = line;
    } else if (field == "parameters") {
      CL_RETURN_IF_ERROR(warn_parameters(l, it->second, line));
    } else {
      return l.bad(c, fmt::format("has an unknown field '{}' on line {} (expected class_name and parameters)", field, line));
    }
  }
  if (!class_name || class_name->IsNull()) {
    return l.bad(c, "has no class_name (expected e.g. {class_name: LZ4Compressor})");
  }
  if (!class_name->IsScalar()) {
    return l.bad("commitlog_compression.class_name", class_line, *class_name,
                 fmt::format("is {}, expected a compressor class name", type_name(*class_name)));
  }
  for (std::string_view name : kLz4Names) {
    if (class_name->Scalar() == name) {
      *out = Compression::kLz4;
      return {};
    }
  }
  return Status::not_supported(fmt::format(
      "{}:{}: commitlog_compression.class_name: '{}' is not a supported compressor (supported: LZ4Compressor)",
      l.file(), class_line, class_name->Scalar()));
}

std::string failure_policy_name(CommitFailurePolicy policy) {
  for (const auto& [name, p] : kFailurePolicies) {
    if (p == policy) return std::string(name);
  }
  return "?";
}

Result<LoadedConfig> load(const YAML::Node& root, const std::string& file) {
  Loader l(file);
  CL_RETURN_IF_ERROR(l.collect(root));
  LoadedConfig out;
  Options& o = out.options;
  PolicySettings& p = o.policy;
  const cv::DurationLimits cassandra{};  // ms or coarser, int32 of ms
  const cv::DurationLimits any_unit{Duration(1), std::numeric_limits<int64_t>::max()};

  CL_RETURN_IF_ERROR(read_text(l, kDirectory, "a directory path", &o.directory));
  CL_RETURN_IF_ERROR(read_text(l, kSync, "a sync policy name", &o.sync_policy));
  CL_RETURN_IF_ERROR(read_duration(l, kSyncPeriod, cassandra, &p.sync_period));
  CL_RETURN_IF_ERROR(read_duration(l, kGroupWindow, cassandra, &p.group_window));
  CL_RETURN_IF_ERROR(read_duration(l, kLagBlock, cassandra, &p.lag_block));
  if (l.entry(kLagBlock) == nullptr) p.lag_block = p.sync_period + p.sync_period / 2;

  CL_RETURN_IF_ERROR(read_size(l, kSegmentSize, cv::kMiB, &o.segment_size));
  if (const Entry* e = l.entry(kSegmentSize); e && (o.segment_size == 0 || o.segment_size >= kSegmentLimit)) {
    return l.bad(*e, "must be greater than 0 and less than 2048MiB");
  }
  uint64_t max_mutation = 0;
  CL_RETURN_IF_ERROR(read_size(l, kMaxMutationSize, cv::kKiB, &max_mutation));
  if (const Entry* e = l.entry(kMaxMutationSize)) {
    if (max_mutation == 0) return l.bad(*e, "must be greater than 0");
    if (o.segment_size < 2 * max_mutation) {
      return l.bad(*e, fmt::format("is more than half of commitlog_segment_size ({}); a segment "
                                                  "must hold at least two of the largest mutations",
                                                  cv::format_size(o.segment_size)));
    }
    o.max_mutation_size = max_mutation;
  }

  CL_RETURN_IF_ERROR(read_compression(l, &o.compression));
  CL_RETURN_IF_ERROR(read_size(l, kTotalSpace, cv::kMiB, &o.total_space));
  CL_RETURN_IF_ERROR(read_failure_policy(l, &o.commit_failure_policy));
  CL_RETURN_IF_ERROR(read_count(l, kCompressionBuffers, 1, 1024, &o.max_compression_buffers_in_pool));
  CL_RETURN_IF_ERROR(read_duration(l, kMarkerInterval, any_unit, &p.marker_interval));
  if (const Entry* e = l.entry(kMarkerInterval); e && p.marker_interval <= Duration::zero()) {
    return l.bad(*e, "must be greater than 0");
  }
  CL_RETURN_IF_ERROR(read_duration(l, kLatencyCap, any_unit, &p.latency_cap));
  CL_RETURN_IF_ERROR(read_size(l, kHardLimit, cv::kMiB, &o.total_space_hard_limit));
  if (const Entry* e = l.entry(kHardLimit); e && o.total_space_hard_limit != 0) {
    if (o.total_space_hard_limit < 2 * o.segment_size) {
      return l.bad(*e, fmt::format("is less than twice commitlog_segment_size ({})", cv::format_size(o.segment_size)));
    }
    if (o.total_space_hard_limit < o.total_space) {
      return l.bad(*e, fmt::format("is less than commitlog_total_space ({})", cv::format_size(o.total_space)));
    }
  }
  CL_RETURN_IF_ERROR(read_duration(l, kMaxDelay, any_unit, &o.total_space_max_delay));
  CL_RETURN_IF_ERROR(read_text(l, kArchiving, "a file path", &o.archiving_properties));
  CL_RETURN_IF_ERROR(read_size(l, kDirectThreshold, 1, &o.direct_write_threshold));
  if (const Entry* e = l.entry(kDirectThreshold);
      e && o.direct_write_threshold != 0 && o.direct_write_threshold < kMinDirectWriteThreshold) {
    return l.bad(*e, "must be 0B (off) or at least 4KiB");
  }
  CL_RETURN_IF_ERROR(read_duration(l, kSpinWait, any_unit, &o.spin_wait));
  if (const Entry* e = l.entry(kSpinWait);
      e && (o.spin_wait < Duration::zero() || o.spin_wait > kMaxSpinWait)) {
    return l.bad(*e, "must be between 0ms (never spin) and 10ms");
  }

  // The policy checks its own name and requirements (a group window > 0, ...).
  Result<std::unique_ptr<SyncPolicy>> policy = PolicyRegistry::global().create(o.sync_policy, p);
  if (!policy.ok()) return l.policy_error(policy.status());

  l.record(kDirectory, o.directory);
  l.record(kSync, o.sync_policy);
  l.record(kSyncPeriod, cv::format_duration(p.sync_period));
  l.record(kGroupWindow, cv::format_duration(p.group_window));
  l.record(kLagBlock, cv::format_duration(p.lag_block));
  l.record(kSegmentSize, cv::format_size(o.segment_size));
  l.record(kMaxMutationSize, cv::format_size(o.effective_max_mutation_size()));
  l.record(kCompression, o.compression == Compression::kLz4 ? "LZ4Compressor" : "none");
  l.record(kTotalSpace, o.total_space == 0 ? "0MiB (unlimited)" : cv::format_size(o.total_space));
  l.record(kFailurePolicy, failure_policy_name(o.commit_failure_policy));
  l.record(kCompressionBuffers, std::to_string(o.max_compression_buffers_in_pool));
  l.record(kMarkerInterval, cv::format_duration(p.marker_interval));
  l.record(kLatencyCap, cv::format_duration(p.latency_cap));
  l.record(kHardLimit, o.total_space_hard_limit == 0 ? "0MiB (none)" : cv::format_size(o.total_space_hard_limit));
  l.record(kMaxDelay, cv::format_duration(o.total_space_max_delay));
  l.record(kArchiving, o.archiving_properties.empty() ? "(none)" : o.archiving_properties);
  l.record(kDirectThreshold,
           o.direct_write_threshold == 0 ? "0B (off)" : cv::format_size(o.direct_write_threshold));
  l.record(kSpinWait,
           o.spin_wait == Duration::zero() ? "0ms (never)" : cv::format_duration(o.spin_wait));
  out.settings = l.take_settings();
  out.warnings = l.take_warnings();
  return out;
}

}  // namespace

Result<LoadedConfig> load_config_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::from_errno(errno, path);
  std::string text;
  char buffer[8192];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
  int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err != 0) return Status::from_errno(err, path);
  return load_config_string(text, path);
}

Result<LoadedConfig> load_config_string(const std::string& yaml, const std::string& name_for_errors) {
  try {
    return load(YAML::Load(yaml), name_for_errors);
  } catch (const YAML::ParserException& e) {
    return Status::invalid_argument(
        fmt::format("{}:{}: yaml syntax error: {}", name_for_errors, e.mark.line + 1, e.msg));
  } catch (const std::exception& e) {
    return Status::invalid_argument(fmt::format("{}: cannot load the configuration: {}", name_for_errors, e.what()));
  } catch (...) {
    return Status::invalid_argument(fmt::format("{}: cannot load the configuration", name_for_errors));
  }
}

}  // namespace commitlog
