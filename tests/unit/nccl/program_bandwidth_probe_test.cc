#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>

#include "agent/nccl/bandwidth_probe.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace gpusched::agent {
namespace {

using testing::TempDir;

// A stand-in for gpusched-nccl-probe: a shell script with `body`.
std::string Script(const TempDir& dir, const std::string& body) {
  const std::string path = dir.Write("probe.sh", "#!/bin/sh\n" + body + "\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

absl::StatusOr<ProbeReport> Measure(const std::string& program, std::vector<int> gpus = {0, 1},
                                    absl::Duration timeout = absl::Seconds(20)) {
  return ProgramBandwidthProbe({program, {"--max-bytes", "1024"}, timeout}).Measure(gpus);
}

constexpr char kReport[] =
    R"({"nccl_version": "2.28.9", "gpus": [0, 1], "nranks": 2, "rows": [{"bytes": 1024, "count": 256,)"
    R"( "time_us": 20.5, "algbw_gbps": 0.05, "busbw_gbps": 0.05}], "peak_busbw_gbps": 0.05})";

TEST_CASE("ProgramBandwidthProbe runs the program and reads its report") {
  TempDir dir;
  const std::string program =
      Script(dir, "echo \"$@\" > \"$(dirname \"$0\")/args\"\necho 'NCCL WARN chatter' >&2\necho '" +
                      std::string(kReport) + "'");
  auto report = Measure(program);
  INFO(report.status());
  REQUIRE(report.ok());
  CHECK(report->rows.size() == 1);
  CHECK(report->peak_busbw_gbps == Approx(0.05));
  CHECK(testing::ReadFile(dir / "args") == "--json --gpus 0,1 --max-bytes 1024\n");

  // A report about other GPUs than asked for is no answer.
  auto other = Measure(program, {0, 2});
  REQUIRE_FALSE(other.ok());
  CHECK(std::string(other.status().message()).find("measured GPUs 0,1, not the GPUs asked for (0,2)") !=
        std::string::npos);
}

TEST_CASE("ProgramBandwidthProbe reports a failing program with its message") {
  TempDir dir;
  auto failed = Measure(Script(
      dir,
      "echo 'NCCL WARN something' >&2\necho 'gpusched-nccl-probe: cudaMalloc on GPU 1: out of memory' >&2\nexit 3"));
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().message() ==
        dir / "probe.sh" + " exited with status 3: gpusched-nccl-probe: cudaMalloc on GPU 1: out of memory");

  auto killed = Measure(Script(dir, "kill -SEGV $$"));
  REQUIRE_FALSE(killed.ok());
  CHECK(std::string(killed.status().message()).find("killed by signal 11") != std::string::npos);

  auto garbage = Measure(Script(dir, "echo 'this is not JSON'"));
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(garbage.status().message()).find("not valid JSON") != std::string::npos);

  auto missing = Measure(dir / "no-such-probe");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "cannot run " + dir / "no-such-probe" + ": No such file or directory");
}

TEST_CASE("ProgramBandwidthProbe kills a probe that hangs past the timeout") {
  TempDir dir;
  const auto start = std::chrono::steady_clock::now();
  // The shell waits for its child: both must go, or the pipe stays open.
  auto hung = Measure(Script(dir, "echo started\nsleep 30\necho done"), {0}, absl::Milliseconds(300));
  REQUIRE_FALSE(hung.ok());
  CHECK(hung.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(std::string(hung.status().message()).find("did not finish within 300ms; killed it") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

#ifdef GPUSCHED_NCCL_PROBE_BINARY
// The CI machines have the CUDA toolkit but no GPU: the probe must say so and
// exit 1, not crash. On a machine with a GPU it measures GPU 0 instead.
TEST_CASE("gpusched-nccl-probe without a GPU says so") {
  auto report = Measure(GPUSCHED_NCCL_PROBE_BINARY, {0}, absl::Seconds(60));
  INFO(report.status());
  if (!std::filesystem::exists("/dev/nvidia0")) {
    REQUIRE_FALSE(report.ok());
    CHECK(std::string(report.status().message()).find("exited with status 1: gpusched-nccl-probe: no CUDA device") !=
          std::string::npos);
  } else {
    REQUIRE(report.ok());
    CHECK(report->rows.size() == 8);  // 8 B .. 1 KiB
  }
}
#endif

}  // namespace
}  // namespace gpusched::agent
