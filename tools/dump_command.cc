// Placeholder: `commitlog dump` is being written.
#include "tools/commands.h"
namespace commitlog::tools {
void add_dump_command(CLI::App&, int&) {}
}  // namespace commitlog::tools
