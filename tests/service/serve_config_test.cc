// gpuschedd serve with a settings file: the file fills in what the flags
// leave out, a flag wins over its key. Read back from what the daemon tells
// systemd (READY's STATUS: the address it bound and its state file).
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/service/notify_socket.h"
#include "tests/support/subprocess.h"

using gpusched::testing::NotifySocket;
using gpusched::testing::ReadFile;
using gpusched::testing::Spawn;
using gpusched::testing::WaitForExit;

TEST_CASE("gpuschedd serve: gpuschedd.toml under the flags") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("gpusched-serve-config-", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // Relative paths in the file are taken from the file's directory.
  std::ofstream(dir / "gpuschedd.toml") << "listen = \"127.0.0.1:0\"\nstate_dir = \"file-state\"\ntick_ms = 50\n";
  const std::string log = (dir / "daemon.log").string();
  NotifySocket systemd;

  SECTION("every key the flags leave out comes from the file") {
    const pid_t pid = Spawn({GPUSCHED_DAEMON_BINARY, "serve", "--init", "--config", (dir / "gpuschedd.toml").string()},
                            {{"NOTIFY_SOCKET", systemd.path()}}, log, log);
    INFO(ReadFile(log));
    REQUIRE(systemd.WaitForLine("READY=1", absl::Seconds(30)));
    // Port 0 from the file, not the default 6870; the state dir next to the file.
    CHECK_THAT(systemd.Last("STATUS"), Catch::StartsWith("serving on 127.0.0.1:") && !Catch::Contains(":6870,") &&
                                           Catch::EndsWith(absl::StrCat(dir.string(), "/file-state/gpusched.db")));
    CHECK_THAT(ReadFile(log), Catch::Contains(absl::StrCat("settings from ", dir.string(), "/gpuschedd.toml")));
    kill(pid, SIGTERM);
    CHECK(WaitForExit(pid) == 0);
  }
  SECTION("a flag wins over its key") {
    const std::string flag_state = (dir / "flag-state").string();
    const pid_t pid = Spawn({GPUSCHED_DAEMON_BINARY, "serve", "--init", "--config", (dir / "gpuschedd.toml").string(),
                             "--state-dir", flag_state},
                            {{"NOTIFY_SOCKET", systemd.path()}}, log, log);
    INFO(ReadFile(log));
    REQUIRE(systemd.WaitForLine("READY=1", absl::Seconds(30)));
    CHECK_THAT(systemd.Last("STATUS"), Catch::EndsWith(flag_state + "/gpusched.db"));
    CHECK_FALSE(std::filesystem::exists(dir / "file-state"));
    kill(pid, SIGTERM);
    CHECK(WaitForExit(pid) == 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a missing or 0-byte state database is refused, not taken for an empty cluster; init makes one once") {
  using gpusched::testing::CommandResult;
  using gpusched::testing::RunCommand;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / absl::StrCat("gpusched-init-", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string state = (dir / "state").string();
  const std::string db = state + "/gpusched.db";
  const std::vector<std::string> serve = {GPUSCHED_DAEMON_BINARY, "serve",       "--config", "/dev/null", "--listen",
                                          "127.0.0.1:0",          "--state-dir", state};

  CommandResult missing = RunCommand(serve);
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.err, Catch::Contains("gpuschedd: there is no state database " + db + ": ") &&
                              Catch::Contains("run `gpuschedd init` (or `serve --init`) once"));
  CHECK_FALSE(std::filesystem::exists(db));

  std::ofstream(db).close();  // truncated to nothing, as a full disk or a bad copy leaves it
  CommandResult empty = RunCommand(serve);
  CHECK(empty.exit_code == 1);
  CHECK_THAT(empty.err, Catch::Contains("gpuschedd: the state database " + db + " is empty (0 bytes): "));
  CHECK(std::filesystem::file_size(db) == 0);

  CommandResult made = RunCommand({GPUSCHED_DAEMON_BINARY, "init", "--config", "/dev/null", "--state-dir", state});
  INFO(made.err);
  CHECK(made.exit_code == 0);
  CHECK(made.out == "gpuschedd: a new, empty state in " + db + "\n");
  CHECK(std::filesystem::file_size(db) > 0);
  CommandResult again = RunCommand({GPUSCHED_DAEMON_BINARY, "init", "--config", "/dev/null", "--state-dir", state});
  CHECK(again.exit_code == 0);
  CHECK(again.out == "gpuschedd: " + db + " already holds a state; nothing was changed\n");

  // A store naming another file: that file is made, and serve finds it.
  const std::string named = (dir / "named.db").string();
  CommandResult made_named = RunCommand(
      {GPUSCHED_DAEMON_BINARY, "init", "--config", "/dev/null", "--state-dir", state, "--store", "sqlite://" + named});
  INFO(made_named.err);
  CHECK(made_named.exit_code == 0);
  CHECK(made_named.out == "gpuschedd: a new, empty state in " + named + "\n");
  CHECK(std::filesystem::file_size(named) > 0);

  // Now serve starts on it.
  NotifySocket systemd;
  const std::string log = (dir / "daemon.log").string();
  const pid_t pid = gpusched::testing::Spawn(serve, {{"NOTIFY_SOCKET", systemd.path()}}, log, log);
  INFO(ReadFile(log));
  CHECK(systemd.WaitForLine("READY=1", absl::Seconds(30)));
  kill(pid, SIGTERM);
  CHECK(WaitForExit(pid) == 0);
  std::filesystem::remove_all(dir);
}
