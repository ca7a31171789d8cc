// A binary's settings table on the command line: one flag per row, checked
// as the file is, and the file under the flags (gpuschedd serve's table).
#include "common/flags/setting_flags.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "daemon/config/daemon_config.h"

using gpusched::daemon::ServeSettings;
using gpusched::daemon::ServeSettingsTable;

namespace {

// The program with `serve` as gpuschedd makes it, parsed from `args`; the
// file's text under the flags. Returns CLI11's error text, or "".
std::string Serve(const std::vector<std::string>& args, const std::string& file_text, ServeSettings* settings) {
  CLI::App app{"test"};
  CLI::App* serve = app.add_subcommand("serve");
  gpusched::flags::AddSettingFlags(serve, ServeSettingsTable(), settings);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  auto file = gpusched::daemon::ParseDaemonConfig(file_text, "/etc/gpusched/gpuschedd.toml");
  REQUIRE(file.ok());
  gpusched::flags::ApplyFileUnderFlags(serve, ServeSettingsTable(), file->settings, settings);
  return "";
}

}  // namespace

TEST_CASE("settings flags: every row is a flag, with the row's default") {
  ServeSettings settings;
  REQUIRE(Serve({"serve"}, "", &settings).empty());
  const ServeSettings defaults;
  for (const auto& row : ServeSettingsTable()) {
    INFO(row.spec.key);
    CHECK(gpusched::config::ValueOf(row, settings) == gpusched::config::ValueOf(row, defaults));
  }
  ServeSettings given;
  REQUIRE(Serve({"--log-level", "debug", "serve", "--tick-ms", "500", "--admin", "alice", "--admin", "bob",
                 "--allow-root-jobs", "--listen", "0.0.0.0:7000", "--placement-policy", "spread"},
                "", &given)
              .empty());
  CHECK(given.log_level == "debug");  // program-wide: before the command
  CHECK(given.tick_ms == 500);
  CHECK(given.admins == std::vector<std::string>{"alice", "bob"});
  CHECK(given.allow_root_jobs);
  CHECK(given.listen == "0.0.0.0:7000");
  CHECK(given.placement_policy == "spread");
}

TEST_CASE("settings flags: a flag is checked as the file's key is, and says which flag") {
  ServeSettings settings;
  CHECK_THAT(Serve({"serve", "--tick-ms", "5"}, "", &settings), Catch::Contains("--tick-ms"));
  CHECK_THAT(Serve({"serve", "--listen", "nohost"}, "", &settings), Catch::Contains("\"nohost\" is not HOST:PORT"));
  CHECK_THAT(Serve({"serve", "--placement-policy", "fastest"}, "", &settings), Catch::Contains("--placement-policy"));
  CHECK_THAT(Serve({"serve", "--no-such-setting", "1"}, "", &settings), Catch::Contains("--no-such-setting"));
}

TEST_CASE("settings flags: the file counts where its flag was not given, key by key") {
  ServeSettings settings;
  REQUIRE(Serve({"serve", "--tick-ms", "300", "--admin", "carol"},
                "tick_ms = 100\nkill_grace_ms = 2000\nadmins = [\"alice\"]\nlog_level = \"warn\"\n", &settings)
              .empty());
  CHECK(settings.tick_ms == 300);                                // the flag wins
  CHECK(settings.kill_grace_ms == 2000);                         // the file, where no flag was given
  CHECK(settings.admins == std::vector<std::string>{"carol"});   // a list is replaced whole
  CHECK(settings.log_level == "warn");                           // program-wide settings too
  CHECK(settings.node_down_ms == ServeSettings{}.node_down_ms);  // neither: the default
}
