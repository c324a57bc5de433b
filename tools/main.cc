// commitlog: dump, verify, replay, stat, benchmark and stress-test commit logs.
#include <exception>

#include <fmt/core.h>

#include "tools/commands.h"

int main(int argc, char** argv) {
  using namespace commitlog::tools;
  CLI::App app{"commitlog: inspect, verify, replay and benchmark commit logs"};
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_demo_command(app, exit_code);
  add_config_command(app, exit_code);
  add_dump_command(app, exit_code);
  add_verify_command(app, exit_code);
  add_replay_command(app, exit_code);
  add_stat_command(app, exit_code);
  add_bench_command(app, exit_code);
  add_stress_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "commitlog: {}\n", e.what());
    return kExitUsage;
  }
  return exit_code;
}
