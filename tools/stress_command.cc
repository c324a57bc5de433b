// Placeholder: `commitlog stress` is being written.
#include "tools/commands.h"
namespace commitlog::tools {
void add_stress_command(CLI::App&, int&) {}
}  // namespace commitlog::tools
