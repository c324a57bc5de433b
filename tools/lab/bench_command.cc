// SPDX-License-Identifier: Apache-2.0
// `commitlog bench`: durable append throughput, latency and CPU cost of the
// commit log under each sync policy and producer count, next to two
// references run in the same invocation (raw: an ideal group commit with
// fdatasync; rocksdb: Put with sync = true). See docs/performance.md.
//
// Points are every size x producer shape x engine variant, in that nesting,
// so the engines of one shape run back to back on the same machine state.
// Each point gets a fresh directory of its own, deleted afterwards; a --dir
// that holds anything but a log is refused, and nothing of it is touched.
#include <fmt/core.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "commitlog/config.h"
#include "commitlog/config/config_values.h"
#include "tools/lab/bench_args.h"
#include "tools/lab/bench_report.h"
#include "tools/lab/bench_runner.h"
#include "tools/common/commands.h"
#include "tools/common/key_file_option.h"
#include "tools/common/log_directory.h"
#include "tools/common/output.h"

namespace commitlog::tools {
namespace {

namespace fs = std::filesystem;

struct BenchArgs {
  std::vector<std::string> policies{"batch", "group:10ms", "adaptive"};
  std::vector<std::string> engines{"commitlog", "raw", "rocksdb"};
  std::vector<std::string> producers{"1", "2", "4", "8", "16"};
  std::vector<std::string> fibers{"1"};
  std::vector<std::string> sizes{"100"};
  std::vector<std::string> large_paths;   // empty: as the options say
  std::vector<std::string> compressions;  // empty: as the options say
  std::vector<std::string> encryptions;   // empty: as the options say
  std::string key_file;
  std::vector<std::string> access_modes;  // empty: as the options say
  std::vector<std::string> segments;      // empty: as "recycled"
  std::vector<std::string> payloads{"fill"};
  uint64_t seed = 1;
  std::string duration = "2s";
  std::string warmup = "0.5s";
  std::string fiber_stack = "16KiB";
  std::string dir, config, out, plot;
  BenchFormat format = BenchFormat::kTable;
  int repeat = 1;
  bool quick = false;
};

// --quick: a first look in under a minute: 24 points of 1 s.
void apply_quick_preset(const CLI::App& cmd, BenchArgs& a) {
  auto unset = [&](const char* option) { return cmd.count(option) == 0; };
  if (unset("--policies") && unset("--config")) a.policies = {"batch", "group:2ms", "adaptive"};
  if (unset("--producers")) a.producers = {"1", "4", "16", "64", "2x500"};
  if (unset("--sizes")) a.sizes = {"100"};
  if (unset("--duration")) a.duration = "1s";
  if (unset("--warmup")) a.warmup = "0.2s";
}

std::string config_policy(const Options& o) {
  if (o.sync_policy == "group")
    return "group:" + config_values::format_duration(o.policy.group_window);
  if (o.sync_policy == "periodic")
    return "periodic:" + config_values::format_duration(o.policy.sync_period);
  return o.sync_policy;
}

// Every point of the run, or a usage error.
Result<std::vector<PointSpec>> plan_points(const CLI::App& cmd, BenchArgs& a, Options& base) {
  if (!a.config.empty()) {
    auto loaded = load_config_file(a.config);
    if (!loaded.ok()) return loaded.status();
    for (const std::string& w : loaded->warnings) fmt::print(stderr, "commitlog bench: {}\n", w);
    base = loaded->options;
    if (cmd.count("--policies") == 0) a.policies = {config_policy(base)};
  }
  if (!a.key_file.empty()) {
    auto keys = load_key_file_option(a.key_file);
    if (!keys.ok()) return keys.status();
    base.encryption = *keys;
  }
  std::vector<EngineSpec> variants;
  for (const std::string& engine : a.engines) {
    if (!engine_available(engine)) {
      if (engine != "rocksdb") {
        return Status::invalid_argument(fmt::format("unknown engine '{}' (known: {})", engine,
                                                    fmt::join(available_engines(), ", ")));
      }
      fmt::print(stderr,
                 "commitlog bench: the rocksdb engine is absent from this build "
                 "(librocksdb-dev was not found at configure time); skipping it\n");
      continue;
    }
    if (engine != "commitlog") {
      variants.push_back({engine});
      continue;
    }
    for (const std::string& policy : a.policies) {
      auto spec = parse_policy(policy, base.policy);
      if (!spec.ok()) return spec.status();
      if (a.large_paths.empty()) variants.push_back(*spec);
      for (const std::string& path : a.large_paths) {
        if (path != "pooled" && path != "direct") {
          return Status::invalid_argument("--large-path '" + path + "' is not pooled or direct");
        }
        spec->large_path = path;
        variants.push_back(*spec);
      }
    }
  }
  for (const std::string& compression : a.compressions) {
    if (compression != "none" && compression != "lz4") {
      return Status::invalid_argument("--compression '" + compression + "' is not none or lz4");
    }
  }
  variants = expand_axis(variants, a.compressions, &EngineSpec::compression);
  for (const std::string& encryption : a.encryptions) {
    if (encryption != "none" && encryption != "aes") {
      return Status::invalid_argument("--encryption '" + encryption + "' is not none or aes");
    }
  }
  variants = expand_axis(variants, a.encryptions, &EngineSpec::encryption);
  for (const std::string& mode : a.access_modes) {
    if (std::none_of(kDiskAccessModes.begin(), kDiskAccessModes.end(),
                     [&](const auto& known) { return known.first == mode; })) {
      return Status::invalid_argument("--access-modes '" + mode +
                                      "' is not mmap, standard, direct, legacy or auto");
    }
  }
  variants = expand_axis(variants, a.access_modes, &EngineSpec::access_mode);
  for (const std::string& segments : a.segments) {
    if (segments != "recycled" && segments != "new") {
      return Status::invalid_argument("--segments '" + segments + "' is not recycled or new");
    }
  }
  variants = expand_axis(variants, a.segments, &EngineSpec::segments);
  std::vector<PayloadKind> payloads;
  for (const std::string& text : a.payloads) {
    auto kind = parse_payload_kind(text);
    if (!kind.ok()) return kind.status();
    payloads.push_back(*kind);
  }
  PointSpec proto;
  proto.seed = a.seed;
  auto duration = parse_bench_duration(a.duration);
  auto warmup = parse_bench_duration(a.warmup);
  auto stack = parse_bench_size(a.fiber_stack);
  auto shapes = parse_producers(a.producers, a.fibers);
  if (!duration.ok()) return duration.status();
  if (!warmup.ok()) return warmup.status();
  if (!stack.ok()) return stack.status();
  if (!shapes.ok()) return shapes.status();
  proto.duration = *duration;
  proto.warmup = *warmup;
  proto.fiber_stack = *stack;
  std::vector<PointSpec> points;
  bool skipped_rocksdb = false;
  for (const std::string& size_text : a.sizes) {
    auto size = parse_bench_size(size_text);
    if (!size.ok()) return size.status();
    for (PayloadKind payload : payloads) {
      for (const ProducerShape& shape : *shapes) {
        for (const EngineSpec& variant : variants) {
          if (variant.engine == "rocksdb" && shape.fibers > 1) {
            skipped_rocksdb = true;
            continue;
          }
          if (variant.engine == "commitlog") {
            // Refused here, before any point runs, rather than at each open.
            EngineSetup setup{"<point directory>", *size, shape.fibers, base};
            if (Status s = check_options(commitlog_engine_options(variant, setup)); !s.ok()) {
              return Status::invalid_argument(variant.label() + ": " + s.message());
            }
          }
          PointSpec p = proto;
          p.engine = variant;
          p.threads = shape.threads;
          p.fibers = shape.fibers;
          p.size = *size;
          p.payload = payload;
          points.push_back(p);
        }
      }
    }
  }
  if (skipped_rocksdb) {
    fmt::print(stderr,
               "commitlog bench: rocksdb runs with thread producers only: a Put blocks its "
               "thread, so fibers on it would only queue behind one another\n");
  }
  return points;
}

// The directory the points' directories go in; `owned` if made here.
Result<std::string> make_root(const std::string& dir, bool& owned) {
  std::error_code ec;
  if (!dir.empty()) {
    CL_RETURN_IF_ERROR(check_log_directory("--dir", dir));
    owned = fs::create_directories(dir, ec);
    if (ec) return Status::io_error("--dir " + dir + ": " + ec.message());
    return dir;
  }
  std::string templ = (fs::temp_directory_path(ec) / "commitlog-bench-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return Status::from_errno(errno, "mkdtemp " + templ);
  owned = true;
  return templ;
}

std::string describe(const PointResult& r) {
  return fmt::format(
      "{:.0f} ops/s, {:.2f} MB/s, p50 {:.0f} µs, p99 {:.0f} µs, {:.3f} fsyncs/op, "
      "{:.3f} ctxsw/op, {:.1f} CPU µs/op{}",
      r.ops_per_second(), r.mb_per_second(), static_cast<double>(r.latency.quantile(0.5)) / 1e3,
      static_cast<double>(r.latency.quantile(0.99)) / 1e3, r.per_op(static_cast<double>(r.syncs)),
      r.per_op(static_cast<double>(r.usage.context_switches())),
      r.per_op(r.usage.user_us + r.usage.sys_us),
      r.compression_ratio() > 0 ? fmt::format(", ratio {:.2f}", r.compression_ratio()) : "");
}

// Round `round`'s order of the points: the engines of each shape (threads,
// fibers, size, payload) forward in even rounds and backward in odd ones, so
// that each engine follows a different one in turn. A point leaves the
// machine busy or idle for the next one (group:10ms at one producer appends
// 100 times a second), and with a fixed order that bias landed on the same
// engine in every round. (A rotation would not do: it keeps who follows whom.)
std::vector<size_t> round_order(const std::vector<PointSpec>& points, int round) {
  std::vector<size_t> order;
  for (size_t begin = 0; begin < points.size();) {
    size_t end = begin + 1;
    while (end < points.size() && points[end].same_shape(points[begin])) ++end;
    for (size_t j = 0; j < end - begin; ++j)
      order.push_back(round % 2 == 0 ? begin + j : end - 1 - j);
    begin = end;
  }
  return order;
}

int run_bench(const CLI::App& cmd, BenchArgs& args) {
  if (args.quick) apply_quick_preset(cmd, args);
  Options base;
  auto points = plan_points(cmd, args, base);
  if (!points.ok()) {
    fmt::print(stderr, "commitlog bench: {}\n", points.status().to_string());
    return kExitUsage;
  }
  std::error_code exists_error;
  if (!args.out.empty() && fs::is_regular_file(args.out, exists_error)) {
    fmt::print(stderr, "commitlog bench: --out {} exists; give a new file (it is never overwritten)\n", args.out);
    return kExitUsage;
  }
  if (!args.plot.empty()) {
    if (Status plottable = check_plot_target(args.plot); !plottable.ok()) {
      fmt::print(stderr, "commitlog bench: {}\n", plottable.message());
      return kExitUsage;
    }
  }
  bool owned = false;
  auto root = make_root(args.dir, owned);
  if (!root.ok()) {
    fmt::print(stderr, "commitlog bench: {}\n", root.status().message());
    return kExitUsage;
  }
  // Round r runs every point once; each point's row is its median-ops/s run.
  std::vector<std::vector<PointResult>> runs(points->size());
  int failed = 0;
  for (int round = 0; round < args.repeat; ++round) {
    for (const size_t i : round_order(*points, round)) {
      const PointSpec& spec = (*points)[i];
      const std::string dir = fmt::format("{}/point-{}", *root, i);
      std::error_code ec;
      if (!fs::create_directory(dir, ec)) {  // never into one it did not make
        fmt::print(stderr, "commitlog bench: cannot create {}: {}\n", dir,
                   ec ? ec.message() : "it exists");
        return kExitUsage;
      }
      const std::string name = fmt::format(
          "[{}{}/{}] {}, {} x {}, {} {}", args.repeat > 1 ? fmt::format("{}:", round + 1) : "",
          i + 1, points->size(), spec.engine.label(), spec.threads, spec.fibers,
          format_bytes(spec.size), payload_kind_name(spec.payload));
      auto result = run_point(spec, {dir, spec.size, spec.fibers, base});
      fs::remove_all(dir, ec);
      if (!result.ok()) {
        fmt::print(stderr, "{}: {}\n", name, result.status().to_string());
        ++failed;
        continue;
      }
      fmt::print(stderr, "{}: {}\n", name, describe(*result));
      runs[i].push_back(std::move(result).value());
    }
  }
  std::vector<PointResult> results;
  for (std::vector<PointResult>& point_runs : runs) {
    if (point_runs.empty()) continue;
    std::sort(point_runs.begin(), point_runs.end(), [](const PointResult& a, const PointResult& b) {
      return a.ops_per_second() < b.ops_per_second();
    });
    results.push_back(std::move(point_runs[point_runs.size() / 2]));
  }
  if (owned) {
    std::error_code ec;
    fs::remove(*root, ec);  // empty by now: each point removed its own
  }

  const std::string table = fmt::format(
      "{} points of {} after {} of warm-up each{}, on {} CPUs\n\n{}", results.size(), args.duration,
      args.warmup, args.repeat > 1 ? fmt::format(", median of {} runs by ops/s", args.repeat) : "",
      ::sysconf(_SC_NPROCESSORS_ONLN), format_results(results, BenchFormat::kTable));
  const std::string report =
      args.format == BenchFormat::kTable ? table : format_results(results, args.format);
  if (args.out.empty()) {
    fmt::print("{}", report);
  } else {
    // The file gets --format; a CSV or JSON file leaves the table on stdout.
    auto out = Output::open(args.out);
    Status written = out.ok() ? Status{} : out.status();
    if (out.ok()) {
      (*out)->append(report);
      written = (*out)->flush();
    }
    if (!written.ok()) {
      fmt::print(stderr, "commitlog bench: cannot write {}: {}\n", args.out, written.to_string());
      fmt::print("{}", report);
      return kExitUsage;
    }
    fmt::print(stderr, "commitlog bench: wrote {}\n", args.out);
    if (args.format != BenchFormat::kTable) fmt::print("{}", table);
  }
  if (!args.plot.empty()) {
    auto files = write_plots(results, args.plot);
    if (!files.ok()) {
      fmt::print(stderr, "commitlog bench: {}\n", files.status().to_string());
      return kExitCorruption;
    }
    for (const std::string& f : *files) fmt::print(stderr, "commitlog bench: wrote {}\n", f);
  }
  return failed == 0 && std::all_of(results.begin(), results.end(),
                                    [](const PointResult& r) { return r.errors == 0; })
             ? kExitOk
             : kExitCorruption;
}

}  // namespace

void add_bench_options(CLI::App& cmd_app, int& exit_code) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = &cmd_app;
  cmd->add_option("--policies", args->policies,
                  "sync policies, e.g. batch,group:10ms,periodic,adaptive:2ms (group: window, "
                  "periodic: period, adaptive: latency cap)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--engines", args->engines,
                  "engines: commitlog,raw,rocksdb; raw-overwrite (write+fdatasync on a "
                  "pre-written file), raw-direct (O_DIRECT+O_DSYNC on one), raw-direct-fdatasync")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--producers", args->producers,
                  "producer threads, e.g. 1,2,4; TxF is T threads of F fibers each, e.g. 2x500")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--fibers", args->fibers, "fibers per thread (1: the thread appends itself)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--sizes", args->sizes, "payload sizes, e.g. 100,4KiB,1MiB")
      ->type_name("SIZE")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--large-path", args->large_paths,
                  "commitlog: pooled (payloads copied into the segment image), direct (payloads "
                  "bypass it; commitlog_ext_direct_write_threshold), or both: pooled,direct")
      ->delimiter(',');
  cmd->add_option("--compression", args->compressions,
                  "commitlog: none, lz4, or both: none,lz4 (default: as --config says)")
      ->delimiter(',');
  cmd->add_option("--encryption", args->encryptions,
                  "commitlog: none, aes (AES-256-GCM, keys from --key-file or else a random one), or both: "
                  "none,aes (default: as --config says)")
      ->delimiter(',');
  add_key_file_option(cmd, &args->key_file);
  cmd->add_option("--access-modes", args->access_modes,
                  "commitlog: commitlog_disk_access_mode values, e.g. mmap,standard,direct "
                  "(default: as --config says)")
      ->delimiter(',');
  cmd->add_option("--segments", args->segments,
                  "commitlog: recycled (each segment is discarded as the next begins, as by a store whose "
                  "memtables flush, so later segments reuse spare files; the default), new (nothing is "
                  "discarded: every segment is a new file, as when a log starts), or both: recycled,new")
      ->delimiter(',');
  cmd->add_option("--payload", args->payloads,
                  "payloads: fill (one repeated byte), random, kv (key/value records of size/2 "
                  "to 3*size/2 bytes), or several: fill,kv")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of the random and kv payloads")
      ->capture_default_str();
  cmd->add_option("--duration", args->duration, "measured time per point")->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "warm-up per point, not measured")
      ->capture_default_str();
  cmd->add_option("--repeat", args->repeat,
                  "runs of every point (in rounds, the engines of each shape forward, then "
                  "backward); each row is the median by ops/s")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--fiber-stack", args->fiber_stack, "stack size of each fiber")
      ->type_name("SIZE")
      ->capture_default_str();
  cmd->add_option("--dir", args->dir,
                  "where the points' directories go (default: a new one under /tmp, removed)");
  cmd->add_option("--config", args->config,
                  "a commitlog.yaml giving the log's options (and policy)")
      ->check(CLI::ExistingFile);
  // Checked by name, so that a wrong one is refused listing the names (a
  // transformer to the enum would list its numbers too).
  cmd->add_option_function<std::string>(
         "--format",
         [args](const std::string& name) {
           static const std::map<std::string, BenchFormat> kFormats = {
               {"table", BenchFormat::kTable}, {"csv", BenchFormat::kCsv}, {"json", BenchFormat::kJson}};
           args->format = kFormats.at(CLI::detail::to_lower(name));
         },
         "report format")
      ->check(CLI::IsMember({"table", "csv", "json"}, CLI::ignore_case))
      ->type_name("TEXT");
  cmd->add_option(
      "--out", args->out,
      "write the report (in --format) here; stdout then gets the table if the file does not");
  cmd->add_option("--plot", args->plot,
                  "X.png or X.svg: writes X-ops and X-p99 plots with gnuplot");
  cmd->add_flag(
      "--quick", args->quick,
      "under a minute: batch,group:2ms,adaptive at 1,4,16,64 threads and 2x500 fibers, 100 B, 1 s");
  cmd->callback([cmd, args, &exit_code] { exit_code = run_bench(*cmd, *args); });
}

}  // namespace commitlog::tools
