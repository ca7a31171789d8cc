#include <grpc/support/log.h>
#include <malloc.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/direct_client.h"
#include "cli/grpc_client.h"
#include "cli/local_context.h"

namespace {

// gRPC's own connection logging would add lines to the one-line error the
// CLI promises; GRPC_VERBOSITY still turns it back on for debugging.
void SilenceGrpcLogs(gpr_log_func_args*) {}

}  // namespace

int main(int argc, char** argv) {
  // One malloc arena: the CLI lives for one call and allocates on its own
  // thread. Each of the helper threads gRPC starts would otherwise map an
  // arena of its own; mapping and faulting those in cost about a tenth of
  // the CPU a `status` takes.
  mallopt(M_ARENA_MAX, 1);
  if (std::getenv("GRPC_VERBOSITY") == nullptr) gpr_set_log_function(SilenceGrpcLogs);
  std::vector<std::string> args(argv + 1, argv + argc);
  // Alone, --version is answered before the command line and the caller's
  // context are built: scripts run it to see what is installed.
  if (args.size() == 1 && args[0] == "--version") {
    std::cout << gpusched::cli::VersionLine() << '\n';
    return 0;
  }
  // GPUSCHED_CLI_TRANSPORT=grpc: every call through the gRPC library, as
  // before unary calls went straight over HTTP/2 (to tell the two apart).
  const char* transport = std::getenv("GPUSCHED_CLI_TRANSPORT");
  const bool grpc_only = transport != nullptr && std::string(transport) == "grpc";
  return gpusched::cli::RunCli(args, gpusched::cli::LocalContext::FromProcess(),
                               grpc_only ? gpusched::cli::MakeGrpcSchedulerClient : gpusched::cli::MakeSchedulerClient,
                               std::cout, std::cerr);
}
