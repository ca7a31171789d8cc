// gpuschedd.toml: the shipped example, and errors that point at the line.
#include "daemon/config/daemon_config.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/defaults.h"
#include "daemon/core/policy/placement_policy.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"
#include "tests/unit/config/settings_example.h"

using namespace gpusched::daemon;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using gpusched::testing::TempDir;

namespace {

const std::string kExample = std::string(GPUSCHED_PACKAGING_CONFIG_DIR) + "/gpuschedd.toml";

std::string ErrorOf(const std::string& text) {
  auto config = ParseDaemonConfig(text, "/etc/gpusched/gpuschedd.toml");
  INFO(text);
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

}  // namespace

TEST_CASE("gpuschedd.toml: the shipped example shows every setting of the table, set to its default or commented") {
  auto config = ReadDaemonConfig(kExample);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(gpusched::config::TableProblems(ServeSettingsTable()).empty());
  const std::vector<std::string> problems =
      gpusched::testing::ExampleProblems(ServeSettingsTable(), config->settings, gpusched::testing::ReadFile(kExample));
  for (const std::string& problem : problems) UNSCOPED_INFO(problem);
  CHECK(problems.empty());
  // Optional settings without a default are shown commented out.
  CHECK(config->settings.Sets("tick_ms"));
  CHECK_FALSE(config->settings.Sets("network_topology"));
  CHECK_FALSE(config->settings.Sets("tls_cert"));
  // [priority] at its defaults, and no queue but the implicit one.
  REQUIRE(config->queues.has_value());
  const gpusched::core::QueuePolicy defaults = gpusched::core::QueuePolicy::Default();
  CHECK(config->queues->weights.tier == defaults.weights.tier);
  CHECK(config->queues->weights.fair_share == defaults.weights.fair_share);
  CHECK(config->queues->weights.age == defaults.weights.age);
  CHECK(config->queues->weights.size == defaults.weights.size);
  CHECK(config->queues->weights.age_max == defaults.weights.age_max);
  CHECK(config->queues->weights.fair_share_half_life == defaults.weights.fair_share_half_life);
  CHECK(config->queues->max_requeues == defaults.max_requeues);
  REQUIRE(config->queues->queues.size() == 1);
  CHECK(config->queues->queues[0].name == "default");
}

TEST_CASE("gpuschedd.toml: the example [[queue]] tables, uncommented, are valid") {
  std::ifstream in(kExample);
  std::string text, line;
  bool in_queue_example = false;
  while (std::getline(in, line)) {
    if (line == "#[[queue]]") in_queue_example = true;
    if (line.rfind("[priority]", 0) == 0) in_queue_example = false;
    // "#key = value" is a commented setting; "# text" is prose.
    if (in_queue_example && line.size() > 1 && line[0] == '#' && line[1] != ' ') line = line.substr(1);
    text += line + "\n";
  }
  auto config = ParseDaemonConfig(text, kExample);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  REQUIRE(config->queues.has_value());
  REQUIRE(config->queues->queues.size() == 2);
  const gpusched::core::QueueSpec& batch = config->queues->queues[0];
  CHECK(batch.name == "batch");
  CHECK(batch.node_names.size() == 64);
  CHECK(batch.max_gpus_per_user == 64);
  CHECK(batch.default_time_limit_s == 4 * 3600);
  CHECK(batch.max_time_limit_s == 7 * 24 * 3600);
  const gpusched::core::QueueSpec& urgent = config->queues->queues[1];
  CHECK(urgent.tier == 1);
  CHECK(urgent.preempt_mode == gpusched::core::PreemptMode::kOff);
  CHECK(urgent.preflight);
  CHECK_FALSE(batch.preflight);
  CHECK_FALSE(urgent.spot);  // urgent work is not put where the cloud may take it back
  CHECK(batch.spot);
  CHECK_THAT(DescribeDaemonConfig(*config), Contains("2 queues (batch tier 0, urgent tier 1)"));
}

TEST_CASE("gpuschedd.toml: a queue's demote_after is read in Slurm's time notation, per GPU unless it says not") {
  auto config = ParseDaemonConfig("[[queue]]\nname = \"train\"\ndemote_after = \"8:00:00\"\n", "t.toml");
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->queues->queues[0].demote_after_s == 8 * 3600);
  CHECK(config->queues->queues[0].demote_after_per_gpu);
  auto plain = ParseDaemonConfig("[[queue]]\nname = \"batch\"\n", "t.toml");
  REQUIRE(plain.ok());
  CHECK(plain->queues->queues[0].demote_after_s == 0);
  auto flat = ParseDaemonConfig(
      "[[queue]]\nname = \"train\"\ndemote_after = \"8:00:00\"\ndemote_after_per_gpu = false\n", "t.toml");
  REQUIRE(flat.ok());
  CHECK_FALSE(flat->queues->queues[0].demote_after_per_gpu);
}

TEST_CASE("gpuschedd.toml: queue mistakes name the line") {
  CHECK_THAT(ErrorOf("[[queue]]\nname = \"a\"\n\n[[queue]]\nname = \"a\"\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:4:") && Contains("\"a\" is defined twice"));
  CHECK_THAT(ErrorOf("[[queue]]\nname = \"a\"\nnodes = \"gpu[5-3]\"\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:3:") && Contains("nodes:"));
  CHECK_THAT(ErrorOf("[[queue]]\nname = \"a\"\npreemption = \"maybe\"\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:3:") && Contains("preemption"));
  CHECK_THAT(ErrorOf("[[queue]]\nname = \"a\"\ndefault_time_limit = \"2:00:00\"\nmax_time_limit = \"1:00:00\"\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:3:") && Contains("above max_time_limit"));
  CHECK_THAT(ErrorOf("[[queue]]\nname = \"a\"\ndemote_after = \"8:00:00\"\npreemption = \"off\"\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:") && Contains("demote_after needs preemption = \"requeue\""));
  CHECK_THAT(ErrorOf("[[queue]]\nname = \"a\"\ndemote_after = \"soon\"\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:3:") && Contains("demote_after"));
  CHECK_THAT(ErrorOf("[[queue]]\nname = \"a\"\ndemote_after = \"8:00:00\"\ndemote_after_per_gpu = \"no\"\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:4:") && Contains("demote_after_per_gpu"));
  CHECK_THAT(ErrorOf("[[queue]]\ntier = 1\n"), StartsWith("/etc/gpusched/gpuschedd.toml:1:") && Contains("name"));
  CHECK_THAT(ErrorOf("[[queue]]\nname = \"a\"\nmax_gpu = 3\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:3:") && Contains("unknown key max_gpu"));
  CHECK_THAT(ErrorOf("[priority]\nage_max = \"forever\"\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:2:") && Contains("age_max"));
  CHECK_THAT(ErrorOf("[priority]\nage_weight = -1\n"), StartsWith("/etc/gpusched/gpuschedd.toml:2:"));
  CHECK_THAT(ErrorOf("[[queue]]\nname = \"a\"\nspot = 1\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:3:") && Contains("spot"));
  CHECK_THAT(ErrorOf("[[queue]]\nname = \"a\"\npreflight = \"yes\"\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:3:") && Contains("preflight"));
  CHECK_THAT(ErrorOf("probe_drain_below_percent = 150\n"),
             StartsWith("/etc/gpusched/gpuschedd.toml:1:") && Contains("probe_drain_below_percent"));
  CHECK_THAT(ErrorOf("queue = \"a\"\n"), StartsWith("/etc/gpusched/gpuschedd.toml:1:") && Contains("[[queue]]"));
}

TEST_CASE("gpuschedd.toml: an empty file sets nothing") {
  auto config = ParseDaemonConfig("# nothing yet\n", "x.toml");
  REQUIRE(config.ok());
  CHECK(config->settings.keys_set.empty());
  CHECK(DescribeDaemonConfig(*config) == "valid, sets nothing (every setting at its default)");
}

TEST_CASE("gpuschedd.toml: each mistake names the file and the line") {
  const std::string at = "/etc/gpusched/gpuschedd.toml:";
  // Unknown key (a typo must not silently leave the default in place).
  CHECK_THAT(ErrorOf("listen = \"0.0.0.0:6870\"\nlisten_adress = \"x:1\"\n"),
             StartsWith(at + "2: unknown key listen_adress (expected listen, state_dir"));
  // Wrong type.
  CHECK(ErrorOf("\ntick_ms = \"200\"\n") == at + "2: tick_ms must be an integer, got a string");
  CHECK(ErrorOf("listen = 6870\n") == at + "1: listen must be a string, got an integer");
  // Bad values.
  CHECK(ErrorOf("tick_ms = 5\n") == at + "1: tick_ms must be between 10 and 60000, got 5");
  CHECK_THAT(ErrorOf("placement_policy = \"fastest\"\n"),
             StartsWith(at + "1: placement_policy \"fastest\" is not one of ") && Contains("topology"));
  CHECK(ErrorOf("share_packing = \"tight\"\n") ==
        at + "1: share_packing \"tight\" is not one of best-fit, spread, fgd, fill-fgd");
  CHECK_THAT(ErrorOf("default_topology = \"best\"\n"),
             StartsWith(at + "1: default_topology \"best\" is not one of prefer"));
  CHECK(ErrorOf("listen = \"nohost\"\n") == at + "1: listen \"nohost\" is not HOST:PORT");
  CHECK_THAT(ErrorOf("log_level = \"chatty\"\n"), StartsWith(at + "1: log_level \"chatty\" is not one of trace"));
  CHECK_THAT(ErrorOf("node_not_responding_ms = 5000\nnode_down_ms = 1000\n"),
             StartsWith(at + "2: node_down_ms (1000) is shorter than node_not_responding_ms (5000)"));
  CHECK(ErrorOf("state_dir = \"\"\n") == at + "1: state_dir is empty");
  CHECK_THAT(ErrorOf("store = \"sqlite://gpusched.db\"\n"), StartsWith(at + "1: store: ") && Contains("absolute path"));
  CHECK_THAT(ErrorOf("store = \"mysql://gpusched:pw@db1/gpusched\"\n"),
             StartsWith(at + "1: store: \"mysql://gpusched:***@db1/gpusched\" is neither sqlite:///PATH nor "));
  CHECK_THAT(ErrorOf("store = \"postgresql://[::1/gpusched\"\n"), StartsWith(at + "1: store: ") && Contains("libpq"));
  CHECK(ErrorOf("advertise_address = \"sched1\"\n") == at + "1: advertise_address \"sched1\" is not HOST:PORT");
  // Syntax.
  CHECK_THAT(ErrorOf("tick_ms = 200\nkill_grace_ms = \n"), StartsWith(at + "2: "));
  // Unknown keys are reported first, then the values from the top down.
  CHECK_THAT(ErrorOf("tick_ms = 1\ncolour = 2\n"), StartsWith(at + "2: unknown key colour"));
  CHECK_THAT(ErrorOf("listen = \"x\"\ntick_ms = 1\n"), StartsWith(at + "1: listen \"x\""));
}

TEST_CASE("gpuschedd.toml: network_topology is read relative to the file, its errors at that key's line") {
  TempDir dir;
  dir.Write("topology.conf", "SwitchName=leaf01 Nodes=gpu[01-04]\nSwitchName=spine01 Switches=leaf01\n");
  const std::string good = dir.Write("good.toml", "listen = \"0.0.0.0:6870\"\nnetwork_topology = \"topology.conf\"\n");
  auto config = ReadDaemonConfig(good);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->settings.values.network_topology == (dir.path() / "topology.conf").string());
  REQUIRE(config->network != nullptr);
  CHECK(config->network->Locate("gpu03")->spine == "spine01");
  CHECK_THAT(DescribeDaemonConfig(*config),
             StartsWith("valid, 2 settings: listen=0.0.0.0:6870 network_topology=") && Contains("(2 switches"));

  dir.Write("broken.conf", "SwitchName=leaf01 Nodes=gpu[01-04]\nSwitchName=leaf02 Nodes=gpu04\n");
  const std::string bad = dir.Write("bad.toml", "# the network\n\nnetwork_topology = \"broken.conf\"\n");
  auto broken = ReadDaemonConfig(bad);
  REQUIRE_FALSE(broken.ok());
  CHECK_THAT(std::string(broken.status().message()),
             StartsWith(bad + ":3: network topology file " + (dir.path() / "broken.conf").string() +
                        ": line 2: node \"gpu04\" is already under switch \"leaf01\""));

  const std::string missing = dir.Write("missing.toml", "network_topology = \"nowhere.conf\"\n");
  CHECK_THAT(std::string(ReadDaemonConfig(missing).status().message()),
             StartsWith(missing + ":1: network topology file: cannot read " + (dir.path() / "nowhere.conf").string()));
}

TEST_CASE("gpuschedd.toml: --config must exist; the default path may be absent") {
  std::string used = "stale";
  auto none = LoadServeConfig("/nonexistent/gpuschedd.toml", &used);
  CHECK(none.status().code() == absl::StatusCode::kNotFound);
  CHECK(used.empty());
  TempDir dir;
  const std::string path = dir.Write("g.toml", "tick_ms = 100\n");
  auto loaded = LoadServeConfig(path, &used);
  REQUIRE(loaded.ok());
  CHECK(used == path);
  CHECK(loaded->settings.values.tick_ms == 100);
  CHECK(loaded->settings.keys_set == std::vector<std::string>{"tick_ms"});
}

TEST_CASE("gpuschedd.toml: TLS files are taken from the file's directory and checked, each problem at its key's line") {
  TempDir dir;
  gpusched::testing::TestCa ca(dir.path().string(), "ca");
  const gpusched::testing::CertAndKey server = ca.IssueServer("server");
  const gpusched::testing::CertAndKey client = ca.IssueClient("client");

  const std::string good =
      dir.Write("good.toml", "tls_cert = \"server.pem\"\ntls_key = \"server.key\"\ntls_client_ca = \"ca.pem\"\n");
  auto config = ReadDaemonConfig(good);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->settings.values.tls_cert == server.cert);
  CHECK(config->settings.values.tls_key == server.key);
  CHECK(config->settings.values.tls_client_ca == ca.cert());
  CHECK(DescribeDaemonConfig(*config) ==
        "valid, 3 settings: tls_cert=" + server.cert + " tls_key=" + server.key + " tls_client_ca=" + ca.cert());

  auto error = [&](const std::string& name, const std::string& text) {
    auto bad = ReadDaemonConfig(dir.Write(name, text));
    REQUIRE_FALSE(bad.ok());
    return std::string(bad.status().message());
  };
  const std::string at = (dir.path() / "bad.toml").string() + ":";
  CHECK(error("bad.toml", "listen = \"0.0.0.0:6870\"\ntls_cert = \"server.pem\"\ntls_key = \"client.key\"\n") ==
        at + "3: tls_key: " + client.key + " is not the private key of the certificate in " + server.cert);
  CHECK(error("bad.toml", "tls_cert = \"nowhere.pem\"\ntls_key = \"server.key\"\n") ==
        at + "1: tls_cert: cannot read " + (dir.path() / "nowhere.pem").string() + ": No such file or directory");
  CHECK_THAT(error("bad.toml", "tls_cert = \"server.pem\"\ntls_key = \"server.pem\"\n"),
             StartsWith(at + "2: tls_key: " + server.cert + ": no private key in it"));
  CHECK_THAT(error("bad.toml", "# mutual TLS\ntls_client_ca = \"ca.pem\"\n"),
             StartsWith(at + "2: tls_client_ca is set but tls_cert is not"));
  CHECK_THAT(error("bad.toml", "tls_cert = \"server.pem\"\n"),
             StartsWith(at + "1: tls_cert is set but tls_key is not"));
  CHECK(error("bad.toml", "tls_ca = \"ca.pem\"\n").find("unknown key tls_ca") != std::string::npos);
}

TEST_CASE("gpuschedd.toml: socket and admins, and their mistakes") {
  auto config = ParseDaemonConfig("socket = \"/run/gpusched/d.sock\"\nadmins = [\"alice\", \"bob\"]\n", "/x/d.toml");
  REQUIRE(config.ok());
  CHECK(config->settings.values.socket == "/run/gpusched/d.sock");
  CHECK(config->settings.values.admins == std::vector<std::string>{"alice", "bob"});
  const std::string at = "/etc/gpusched/gpuschedd.toml:";
  CHECK(ErrorOf("admins = \"alice\"\n") == at + "1: admins must be an array, got a string");
  CHECK(ErrorOf("admins = [\"alice\", 3]\n") == at + "1: admins must be an array of strings, as [\"alice\", \"bob\"]");
}
