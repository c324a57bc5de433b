// SPDX-License-Identifier: Apache-2.0
// commitlog: dump, verify, replay, stat, benchmark and stress-test commit logs.
#include <exception>
#include <string>
#include <string_view>

#include <fmt/core.h>

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
  const std::string_view word = command_word(argc, argv);
  if (!word.empty() && app.get_subcommands([&](const CLI::App* c) { return c->get_name() == word; }).empty()) {
    fmt::print(stderr, "commitlog: unknown command '{}'\n", word);
    print_commands(app);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    if (!app.get_subcommands().empty()) {
      app.exit(e);
      return kExitUsage;
    }
    fmt::print(stderr, "commitlog: a command is required\n");
    print_commands(app);
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "commitlog: {}\n", e.what());
    return kExitUsage;
  }
  return exit_code;
}
