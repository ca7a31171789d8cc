#include "test_util.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "common/topology/nvidia_smi_topo.h"

namespace gpusched::agent::testing {

TempDir::TempDir() {
  char templ[] = "/tmp/gpusched-agent-test-XXXXXX";
  if (mkdtemp(templ) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void UpdateRecorder::Record(const v1::JobUpdate& update) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    updates_.push_back(update);
  }
  cv_.notify_all();
}

std::function<void(const v1::JobUpdate&)> UpdateRecorder::Callback() {
  return [this](const v1::JobUpdate& u) { Record(u); };
}

std::optional<v1::JobUpdate> UpdateRecorder::WaitFor(uint64_t job_id, v1::JobUpdate::Kind kind,
                                                     absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<v1::JobUpdate> found;
  cv_.wait_for(lock, std::chrono::nanoseconds(absl::ToInt64Nanoseconds(timeout)), [&] {
    for (const auto& u : updates_) {
      if (u.job_id() == job_id && u.kind() == kind) {
        found = u;
        return true;
      }
    }
    return false;
  });
  return found;
}

std::vector<v1::JobUpdate> UpdateRecorder::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  return updates_;
}

int UpdateRecorder::Count(uint64_t job_id, v1::JobUpdate::Kind kind) const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& u : updates_) n += (u.job_id() == job_id && u.kind() == kind) ? 1 : 0;
  return n;
}

JobRunnerOptions RunnerOptions(const TempDir& dir) {
  JobRunnerOptions o;
  o.node_name = "test-node";
  o.log_dir = dir.path();
  o.shim_program = GPUSCHED_SHIM_BINARY;
  return o;
}

v1::LaunchJob MakeLaunch(uint64_t job_id, std::vector<std::string> argv, std::vector<int> gpus) {
  v1::LaunchJob launch;
  launch.set_job_id(job_id);
  for (auto& a : argv) launch.mutable_spec()->add_argv(a);
  launch.mutable_spec()->set_name("test-job");
  for (int g : gpus) launch.add_gpu_indices(g);
  launch.set_nnodes(1);
  launch.set_world_size(std::max<int>(1, gpus.size()));
  launch.set_master_addr("127.0.0.1");
  launch.set_master_port(29500);
  // As from a daemon with allow_root_jobs: the tests run the agent as root.
  launch.set_root_allowed(true);
  return launch;
}

v1::LaunchJob MakeShellLaunch(uint64_t job_id, const std::string& command, std::vector<int> gpus) {
  return MakeLaunch(job_id, {"/bin/sh", "-c", command}, std::move(gpus));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

bool WaitForFileContaining(const std::string& path, const std::string& text, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (ReadFile(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  // "pid (comm) S ...": the state follows the last ')'.
  auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

bool WaitForProcessGone(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (ProcessGone(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ProcessGone(pid);
}

pid_t ReadPid(const std::string& path) {
  REQUIRE(WaitForFileContaining(path, "\n"));
  int pid = 0;
  REQUIRE(absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(path)), &pid));
  return pid;
}

std::string FixturePath(const std::string& name) { return std::string(GPUSCHED_FIXTURES_DIR) + "/topo/" + name; }

topology::NodeTopology FixtureTopology(const std::string& name) {
  const std::string text = ReadFile(FixturePath(name));
  REQUIRE_FALSE(text.empty());
  auto topo = topology::ParseNvidiaSmiTopo(text);
  INFO(topo.status().message());
  REQUIRE(topo.ok());
  return *std::move(topo);
}

}  // namespace gpusched::agent::testing
