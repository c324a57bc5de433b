// SPDX-License-Identifier: Apache-2.0
// commitlog: dump, verify, replay, stat, benchmark and stress-test commit logs.
#include <algorithm>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "commitlog/config/config_keys.h"
#include "tools/common/commands.h"

namespace {

using namespace commitlog::tools;

// The visible commands, for an unknown or a missing one.
void print_commands(const CLI::App& app) {
  std::string names;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App* c) { return !c->get_group().empty(); })) {
    names += (names.empty() ? "" : ", ") + command->get_name();
  }
  fmt::print(stderr, "commands: {} (commitlog COMMAND --help)\n", names);
}

// The first argument that is not an option: the command (the app's own
// options take no value).
std::string_view command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') return argv[i];
  }
  return {};
}

// The candidate within two edits of `word`, if one is nearest, else empty.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 3;
  for (const std::string& candidate : candidates) {
    const size_t distance = commitlog::config::edit_distance(word, candidate);
    if (distance < best_distance) best = candidate, best_distance = distance;
  }
  return best;
}

// A usage error on one line, `commitlog COMMAND: MESSAGE`, with a "did you
// mean" for an option the command does not have.
int usage_error(CLI::App& app, std::string_view word, const std::string& message, int argc, char** argv) {
  const auto named = app.get_subcommands([&](const CLI::App* c) { return c->get_name() == word; });
  std::string hint;
  if (!word.empty() && !named.empty()) {
    const CLI::App* command = named.front();
    std::vector<std::string> flags;
    for (const CLI::Option* option : command->get_options()) {
      for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
    }
    for (int i = 1; i < argc && hint.empty(); ++i) {
      const std::string_view arg(argv[i]);
      if (!arg.starts_with("--")) continue;
      const std::string flag(arg.substr(0, arg.find('=')));
      if (std::find(flags.begin(), flags.end(), flag) == flags.end()) {
        if (std::string near = nearest(flag, flags); !near.empty()) hint = "; did you mean " + near + "?";
      }
    }
  }
  fmt::print(stderr, "commitlog{}{}: {}{} (commitlog {}--help)\n", word.empty() ? "" : " ", word, message, hint,
             word.empty() ? "" : std::string(word) + " ");
  return kExitUsage;
}

// An empty value is never what an option means: `--table ""` is no table 0
// and `--out ""` no output file. Every option and argument that takes a
// value refuses one, naming itself ("--table: empty value").
void refuse_empty_values(CLI::App& app) {
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    for (CLI::Option* option : command->get_options([](CLI::Option*) { return true; })) {
      if (option->get_expected_min() == 0) continue;  // a flag
      option->check(CLI::Validator(
          [](const std::string& value) { return value.empty() ? std::string("empty value") : std::string(); }, ""));
    }
    refuse_empty_values(*command);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"commitlog: inspect, verify, replay and benchmark commit logs"};
  app.set_version_flag("-V,--version", "commitlog " COMMITLOG_VERSION);
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_demo_command(app, exit_code);
  add_config_command(app, exit_code);
  add_dump_command(app, exit_code);
  add_verify_command(app, exit_code);
  add_replay_command(app, exit_code);
  add_stat_command(app, exit_code);
  add_bench_alias(app, exit_code);
  add_stress_command(app, exit_code);
  add_tail_command(app, exit_code);
  add_tail_bench_command(app, exit_code);
  refuse_empty_values(app);
  const std::string_view word = command_word(argc, argv);
  if (!word.empty() && app.get_subcommands([&](const CLI::App* c) { return c->get_name() == word; }).empty()) {
    std::vector<std::string> names;
    for (const CLI::App* c : app.get_subcommands([](const CLI::App* c) { return !c->get_group().empty(); })) {
      names.push_back(c->get_name());
    }
    const std::string near = nearest(word, names);
    fmt::print(stderr, "commitlog: unknown command '{}'{}\n", word, near.empty() ? "" : "; did you mean " + near + "?");
    print_commands(app);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    if (!app.get_subcommands().empty()) return usage_error(app, word, e.what(), argc, argv);
    fmt::print(stderr, "commitlog: a command is required\n");
    print_commands(app);
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    return usage_error(app, word, e.what(), argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "commitlog: {}\n", e.what());
    return kExitUsage;
  }
  return exit_code;
}
