#include <malloc.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/direct_client.h"
#include "cli/local_context.h"

int main(int argc, char** argv) {
  // One malloc arena: the CLI lives for one call and allocates mostly on its
  // own thread; a stream's thread would otherwise map an arena of its own.
  mallopt(M_ARENA_MAX, 1);
  std::vector<std::string> args(argv + 1, argv + argc);
  // Alone, --version is answered before the command line and the caller's
  // context are built: scripts run it to see what is installed.
  if (args.size() == 1 && args[0] == "--version") {
    std::cout << gpusched::cli::VersionLine() << '\n';
    return 0;
  }
  return gpusched::cli::RunCli(args, gpusched::cli::LocalContext::FromProcess(), gpusched::cli::MakeSchedulerClient,
                               std::cout, std::cerr);
}
