#include "agent/log_root.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "test_util.h"

using gpusched::agent::CheckLogRoot;
using gpusched::agent::testing::TempDir;

TEST_CASE("a log root is refused when another user could rename anything on the way to it") {
  TempDir dir;
  const std::string shared = dir / "shared";
  const std::string logs = shared + "/logs";
  REQUIRE(mkdir(shared.c_str(), 0755) == 0);
  REQUIRE(mkdir(logs.c_str(), 0755) == 0);
  CHECK(CheckLogRoot(logs).ok());

  // Anyone may write the directory above: they could swap logs for a link.
  REQUIRE(chmod(shared.c_str(), 0777) == 0);
  absl::Status above = CheckLogRoot(logs);
  CHECK(above.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(above.message() == "\"" + shared +
                               "\", above the log directory, is writable by its group or by anyone "
                               "(mode 0777): other users could redirect the agent's writes; chmod go-w it, or choose a "
                               "directory only the agent writes");
  // Sticky, as /tmp is, and the agent's or root's: others cannot rename what is not theirs.
  REQUIRE(chmod(shared.c_str(), 01777) == 0);
  CHECK(CheckLogRoot(logs).ok());
  // The log root itself may not be others' to write, sticky or not.
  REQUIRE(chmod(logs.c_str(), 01777) == 0);
  CHECK_THAT(std::string(CheckLogRoot(logs).message()),
             Catch::StartsWith("log directory \"" + logs + "\" is writable by its group or by anyone (mode 1777)"));
  REQUIRE(chmod(logs.c_str(), 0755) == 0);
  if (geteuid() == 0) {
    REQUIRE(chown(logs.c_str(), 65534, 65534) == 0);
    CHECK_THAT(
        std::string(CheckLogRoot(logs).message()),
        Catch::StartsWith("log directory \"" + logs + "\" belongs to uid 65534, not to the agent's user or root"));
  }
  CHECK_FALSE(CheckLogRoot(dir / "missing").ok());
}
