// Placeholder: `commitlog replay` is being written.
#include "tools/commands.h"
namespace commitlog::tools {
void add_replay_command(CLI::App&, int&) {}
}  // namespace commitlog::tools
