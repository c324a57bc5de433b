// Placeholder: `commitlog bench` is being written.
#include "tools/commands.h"
namespace commitlog::tools {
void add_bench_command(CLI::App&, int&) {}
}  // namespace commitlog::tools
