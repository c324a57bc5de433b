// Placeholder: `commitlog stat` is being written.
#include "tools/commands.h"
namespace commitlog::tools {
void add_stat_command(CLI::App&, int&) {}
}  // namespace commitlog::tools
