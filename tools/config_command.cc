// Placeholder until the config reader lands (being written now).
#include "tools/commands.h"
namespace commitlog::tools {
void add_config_command(CLI::App&, int&) {}
}  // namespace commitlog::tools
