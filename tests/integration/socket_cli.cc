#include "tests/integration/socket_cli.h"

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"

namespace gpusched::testing {

std::string ThisUser() {
  struct passwd* pw = getpwuid(geteuid());
  REQUIRE(pw != nullptr);
  return pw->pw_name;
}

SocketDir::SocketDir() : path_(dir_.path().string()) {
  REQUIRE(!path_.empty());
  REQUIRE(chmod(path_.c_str(), 0755) == 0);
}

CommandResult SocketCli(const std::string& socket, const std::string& uid, const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  if (uid != "0") argv = {"/usr/bin/setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups"};
  argv.push_back(GPUSCHED_CLI_BIN);
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, {{"GPUSCHED_ADDR", "unix:" + socket}, {"HOME", "/tmp"}});
}

uint64_t SubmittedJobId(const CommandResult& submit) {
  INFO(submit.out << submit.err);
  REQUIRE(submit.exit_code == 0);
  REQUIRE(absl::StartsWith(submit.out, "Submitted job "));
  return std::stoull(submit.out.substr(std::string("Submitted job ").size()));
}

}  // namespace gpusched::testing
