#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/local_context.h"

namespace gpusched::cli {

// The whole command line: parses `args` (without argv[0]), resolves the daemon
// address, connects through `make_client` and runs the chosen command.
// Returns the process exit code (see ExitCode); never throws.
// What `gpusched --version` prints (without the newline).
std::string VersionLine();

int RunCli(const std::vector<std::string>& args, const LocalContext& ctx, const ClientFactory& make_client,
           std::ostream& out, std::ostream& err);

}  // namespace gpusched::cli
