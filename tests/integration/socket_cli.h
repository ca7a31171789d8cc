#pragma once

// The CLI as the users of one host run it: on the daemon's Unix socket, as
// any uid (through setpriv when the test is root).

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace gpusched::testing {

// The name of the user running the test.
std::string ThisUser();

// A fresh directory anyone may enter, for a daemon's socket that other
// users must reach; removed, with what is in it, at the end of its scope.
class SocketDir {
 public:
  SocketDir();  // REQUIREs that it was made
  const std::string& path() const { return path_; }
  std::string socket() const { return path_ + "/gpuschedd.sock"; }

 private:
  TempDir dir_;
  std::string path_;
};

// `gpusched ARGS` on `socket` as `uid` ("0": as the test itself).
CommandResult SocketCli(const std::string& socket, const std::string& uid, const std::vector<std::string>& args);

// The id `gpusched submit` printed (REQUIREs that it succeeded).
uint64_t SubmittedJobId(const CommandResult& submit);

}  // namespace gpusched::testing
