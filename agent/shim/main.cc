// gpusched-shim: the parent of one job's ranks on a node, started by the
// agent (see agent/runner/shim_protocol.h). Not for people to run.
#include <fcntl.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "agent/runner/shim_protocol.h"
#include "agent/shim/shim_loop.h"

int main(int argc, char** argv) {
  // An interactive job's rank: it holds the allocation until it is stopped
  // (gpusched run and alloc start their commands as sessions).
  if (argc == 2 && std::string(argv[1]) == "--hold") {
    while (true) pause();
  }
  if (isatty(STDIN_FILENO) || fcntl(gpusched::agent::kShimExitsFd, F_GETFD) < 0) {
    std::cerr << (argc > 0 ? argv[0] : "gpusched-shim")
              << ": holds one job's processes for gpusched-agent, which starts it; not a command to run\n";
    return 2;
  }
  return gpusched::agent::RunShim(STDIN_FILENO, STDOUT_FILENO, gpusched::agent::kShimExitsFd);
}
