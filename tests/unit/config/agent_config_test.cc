// agent.toml: the shipped example, labels, and errors that point at the line.
#include "agent/config/agent_config.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "agent/config/gpu_share_modes.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_pki.h"
#include "tests/unit/config/settings_example.h"

using namespace gpusched::agent;
using Catch::Matchers::StartsWith;

namespace {

const std::string kExample = std::string(GPUSCHED_PACKAGING_CONFIG_DIR) + "/agent.toml";

std::string ErrorOf(const std::string& text) {
  auto config = ParseAgentConfig(text, "/etc/gpusched/agent.toml");
  INFO(text);
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

}  // namespace

TEST_CASE("agent.toml: the shipped example shows every setting of the table, set to its default or commented") {
  auto config = ReadAgentConfig(kExample);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(gpusched::config::TableProblems(AgentSettingsTable()).empty());
  const std::vector<std::string> problems =
      gpusched::testing::ExampleProblems(AgentSettingsTable(), config->settings, gpusched::testing::ReadFile(kExample));
  for (const std::string& problem : problems) UNSCOPED_INFO(problem);
  CHECK(problems.empty());
  CHECK(config->settings.Sets("gpu_model"));
  CHECK_FALSE(config->settings.Sets("node_name"));
  CHECK_FALSE(config->settings.Sets("topology_file"));
  CHECK(config->gpu_share_modes.empty());
  CHECK(config->labels.empty());
}

TEST_CASE("agent.toml: labels as a section or inline, in file order") {
  auto config = ParseAgentConfig("daemon = \"head:6870\"\n[labels]\nrack = \"r01\"\nleaf = \"leaf-01\"\n", "a.toml");
  REQUIRE(config.ok());
  CHECK(config->settings.values.daemon == "head:6870");
  CHECK(config->labels == std::vector<std::pair<std::string, std::string>>{{"rack", "r01"}, {"leaf", "leaf-01"}});
  config = ParseAgentConfig("labels = { nvlink-domain = \"nvl01\" }\n", "a.toml");
  REQUIRE(config.ok());
  CHECK(config->labels == std::vector<std::pair<std::string, std::string>>{{"nvlink-domain", "nvl01"}});
  CHECK(DescribeAgentConfig(*config) == "valid, 1 setting: labels.nvlink-domain=nvl01");
}

TEST_CASE("agent.toml: each mistake names the file and the line") {
  const std::string at = "/etc/gpusched/agent.toml:";
  CHECK_THAT(ErrorOf("daemon = \"head:6870\"\n\nfake_gpu = 4\n"),
             StartsWith(at + "3: unknown key fake_gpu (expected daemon, node_name"));
  CHECK(ErrorOf("fake_gpus = \"4\"\n") == at + "1: fake_gpus must be an integer, got a string");
  CHECK(ErrorOf("nccl_topo_file = \"yes\"\n") == at + "1: nccl_topo_file must be a boolean, got a string");
  CHECK(ErrorOf("labels = \"rack=r01\"\n") == at + "1: labels must be a table, got a string");
  CHECK(ErrorOf("fake_gpus = 4096\n") == at + "1: fake_gpus must be between 0 and 1024, got 4096");
  CHECK(ErrorOf("heartbeat_interval_ms = 0\n") == at + "1: heartbeat_interval_ms must be between 1 and 3600000, got 0");
  CHECK(ErrorOf("cpu_bind = \"sideways\"\n") == at + "1: cpu_bind \"sideways\" is not one of none, numa");
  CHECK(ErrorOf("gpu_share_mode = \"vgpu\"\n") ==
        at + "1: gpu_share_mode \"vgpu\" is not one of exclusive, timeslice, mps, mig");
  CHECK(ErrorOf("[gpu_share_modes]\n\"0-3\" = \"mps\"\n\"3\" = \"timeslice\"\n") ==
        at + "1: gpu_share_modes: GPU 3 is given twice");
  CHECK(ErrorOf("[gpu_share_modes]\n\"0-x\" = \"mps\"\n") ==
        at + "1: gpu_share_modes \"0-x\": not a list of GPU indices such as \"0-3\" or \"4,6\"");
  CHECK(ErrorOf("[gpu_share_modes]\n\"0\" = \"shared\"\n") ==
        at + "1: gpu_share_modes \"0\" = \"shared\": \"shared\" is not one of exclusive, timeslice, mps, mig");
  CHECK(ErrorOf("gpu_source = \"cuda\"\n") == at + "1: gpu_source \"cuda\" is not one of auto, nvml, file, fake");
  CHECK(ErrorOf("daemon = \"head\"\n") ==
        at + "1: daemon \"head\" is not HOST:PORT, nor several of them comma-separated");
  CHECK(ErrorOf("[labels]\nrack = \"\"\n") == at + "2: labels.rack is empty");
  CHECK(ErrorOf("[labels]\nrack = 1\n") == at + "2: labels.rack must be a string, got an integer");
  CHECK_THAT(ErrorOf("topology_file = \"/nonexistent/topo.txt\"\n"),
             StartsWith(at + "1: topology_file /nonexistent/topo.txt is not a readable file"));
  CHECK_THAT(ErrorOf("log_dir = \"/var/log\"\n[labels\n"), StartsWith(at + "2: "));
}

TEST_CASE("agent.toml: share modes per GPU over the node's, and the MPS control daemon's program and directory") {
  auto config = ParseAgentConfig(
      "gpu_share_mode = \"timeslice\"\nmps_control_program = \"nvidia-cuda-mps-control\"\n"
      "mps_dir = \"/run/gpusched-mps\"\n[gpu_share_modes]\n\"0-3\" = \"mps\"\n\"7\" = \"exclusive\"\n",
      "/etc/gpusched/agent.toml");
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->settings.values.gpu_share_mode == "timeslice");
  CHECK(config->gpu_share_modes ==
        std::vector<std::pair<std::string, std::string>>{{"0-3", "mps"}, {"7", "exclusive"}});
  CHECK(config->settings.values.mps_control_program == "nvidia-cuda-mps-control");
  CHECK(config->settings.values.mps_dir == "/run/gpusched-mps");
  auto modes = ParseGpuShareModes(config->gpu_share_modes);
  REQUIRE(modes.ok());
  CHECK(*modes == std::map<int32_t, std::string>{{0, "mps"}, {1, "mps"}, {2, "mps"}, {3, "mps"}, {7, "exclusive"}});
  // A program with a '/' is a path, taken from the file's directory.
  config = ParseAgentConfig("mps_control_program = \"bin/mps-control\"\n", "/etc/gpusched/agent.toml");
  REQUIRE(config.ok());
  CHECK(config->settings.values.mps_control_program == "/etc/gpusched/bin/mps-control");
  CHECK(SplitGpuShareModesFlag("4-7=timeslice")->first == "4-7");
  CHECK(SplitGpuShareModesFlag("mps").status().message() ==
        "--gpu-share-modes \"mps\": expected GPUS=MODE, e.g. 0-3=mps");
}

TEST_CASE("agent.toml: container settings, and a mount that is not an absolute path named at its line") {
  auto config = ParseAgentConfig(
      "container_runtime = \"podman\"\ncontainer_oci_runtime = \"runc\"\n"
      "container_registries = [\"nvcr.io\", \"localhost\"]\ncontainer_mounts = [\"/data\"]\n"
      "container_run_args = [\"--ulimit\", \"nofile=1024:20000\"]\ncontainer_pull_timeout_s = 60\n",
      "/etc/gpusched/agent.toml");
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->settings.values.container_runtime == "podman");
  CHECK(config->settings.values.container_oci_runtime == "runc");
  CHECK(config->settings.values.container_registries == std::vector<std::string>{"nvcr.io", "localhost"});
  CHECK(config->settings.values.container_mounts == std::vector<std::string>{"/data"});
  CHECK(config->settings.values.container_run_args == std::vector<std::string>{"--ulimit", "nofile=1024:20000"});
  CHECK(config->settings.values.container_pull_timeout_s == 60);
  CHECK_THAT(DescribeAgentConfig(*config), Catch::Contains("container_registries=[nvcr.io,localhost]"));
  CHECK(ErrorOf("daemon = \"127.0.0.1:6870\"\ncontainer_mounts = [\"data\"]\n") ==
        "/etc/gpusched/agent.toml:2: container_mounts: \"data\" is not an absolute path");
  CHECK_THAT(ErrorOf("container_pull_timeout_s = 0\n"), Catch::Contains("container_pull_timeout_s"));
}

TEST_CASE("agent.toml: a relative topology_file is taken from the file's directory") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpusched-agent-config-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "topo.txt") << "GPU0\tX\n";
  std::ofstream(dir / "agent.toml") << "topology_file = \"topo.txt\"\nlog_dir = \"logs\"\n";
  auto config = ReadAgentConfig((dir / "agent.toml").string());
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->settings.values.topology_file == (dir / "topo.txt").string());
  CHECK(config->settings.values.log_dir == (dir / "logs").string());
  std::string used;
  CHECK(LoadAgentConfig((dir / "none.toml").string(), &used).status().code() == absl::StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST_CASE("agent.toml: TLS files are taken from the file's directory and checked, each problem at its key's line") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpusched-agent-tls-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  gpusched::testing::TestCa ca(dir.string(), "ca");
  const gpusched::testing::CertAndKey client = ca.IssueClient("node-a");

  std::ofstream(dir / "agent.toml") << "tls_ca = \"ca.pem\"\ntls_cert = \"node-a.pem\"\ntls_key = \"node-a.key\"\n";
  auto config = ReadAgentConfig((dir / "agent.toml").string());
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->settings.values.tls_ca == ca.cert());
  CHECK(config->settings.values.tls_cert == client.cert);
  CHECK(config->settings.values.tls_key == client.key);
  CHECK(DescribeAgentConfig(*config) ==
        "valid, 3 settings: tls_ca=" + ca.cert() + " tls_cert=" + client.cert + " tls_key=" + client.key);

  const std::string at = (dir / "bad.toml").string() + ":";
  auto error = [&](const std::string& text) {
    std::ofstream(dir / "bad.toml") << text;
    auto bad = ReadAgentConfig((dir / "bad.toml").string());
    REQUIRE_FALSE(bad.ok());
    return std::string(bad.status().message());
  };
  // An agent with a certificate needs the CA to check the daemon's.
  CHECK(error("daemon = \"head:6870\"\ntls_cert = \"node-a.pem\"\ntls_key = \"node-a.key\"\n") ==
        at + "2: tls_cert is set but tls_ca is not: TLS needs the CA that signed the daemon's certificate");
  CHECK(error("tls_ca = \"ca.key\"\n") ==
        at + "1: tls_ca: " + ca.key() +
            ": no certificate in it (expected PEM, -----BEGIN CERTIFICATE-----); it holds a private key: are the "
            "certificate and key settings swapped?");
  CHECK_THAT(error("tls_ca = \"ca.pem\"\ntls_cert = \"node-a.pem\"\ntls_key = \"ca.key\"\n"),
             StartsWith(at + "3: tls_key: " + ca.key() + " is not the private key of the certificate in "));
  std::filesystem::remove_all(dir);
}
