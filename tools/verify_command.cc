// Placeholder: `commitlog verify` is being written.
#include "tools/commands.h"
namespace commitlog::tools {
void add_verify_command(CLI::App&, int&) {}
}  // namespace commitlog::tools
