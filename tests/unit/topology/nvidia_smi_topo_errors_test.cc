// Bad, truncated and garbage inputs: InvalidArgument naming the line, never a
// crash or a hang.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "common/topology/nvidia_smi_topo.h"
#include "fixture_util.h"

using namespace gpusched::topology;
using gpusched::testing::ReadTopoFixture;

namespace {

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<NodeTopology> t = ParseNvidiaSmiTopo(text);
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(t.status().message());
}

// The first `n` lines of a fixture, each with its newline.
std::string FirstLines(const std::string& text, int n) {
  size_t pos = 0;
  for (int i = 0; i < n && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  return text.substr(0, pos);
}

}  // namespace

TEST_CASE("empty and blank input") {
  CHECK_THAT(ErrorOf(""), Catch::Contains("empty"));
  CHECK_THAT(ErrorOf("\n \n\t\n"), Catch::Contains("empty"));
}

TEST_CASE("garbage names its line") {
  CHECK_THAT(ErrorOf("hello world\n"), Catch::Contains("line 1: expected the header"));
  CHECK_THAT(ErrorOf("\n\nNo devices were found\n"), Catch::Contains("line 3:"));
  CHECK_THAT(ErrorOf("\tGPU1\tGPU0\n"), Catch::Contains("line 1:"));
  CHECK_THAT(ErrorOf("\tGPU0\tGPU0\n"), Catch::Contains("appears twice"));
  CHECK_THAT(ErrorOf("\tGPU0\tmlx5_0\tGPU1\n"), Catch::Contains("out of order"));
  CHECK_THAT(ErrorOf("\tGPU0\tGPU1\nGPU0\t X \tNV4\nhello\n"),
             Catch::Contains("line 3: row \"hello\" is not a column"));
}

TEST_CASE("a row with too few link cells names the counts") {
  std::string text =
      "\tGPU0\tGPU1\tGPU2\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tNV4\tNV4\t0-7\t0\n"
      "GPU1\tNV4\t X \tNV4\t0-7\t0\n"
      "GPU2\tNV4\t X \t0-7\t0\n";
  CHECK_THAT(ErrorOf(text), Catch::Contains("line 4: row GPU2 has 2 link cells, the header has 3 columns"));
}

TEST_CASE("a bad link cell is quoted") {
  std::string text =
      "\tGPU0\tGPU1\n"
      "GPU0\t X \tNVX\n";
  CHECK_THAT(ErrorOf(text),
             Catch::Contains("line 2: row GPU0 has 1 link cells") && Catch::Contains("cell 2 is \"NVX\""));
}

TEST_CASE("X off the diagonal, missing X, extra cells, bad CPU list") {
  CHECK_THAT(ErrorOf("\tGPU0\tGPU1\nGPU0\tNV1\t X \n"), Catch::Contains("line 2: row GPU0, column GPU0"));
  CHECK_THAT(ErrorOf("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV1\t0-3\t7\n"),
             Catch::Contains("line 2:") && Catch::Contains("left over"));
  CHECK_THAT(ErrorOf("\tGPU0\tCPU Affinity\nGPU0\t X \t0-4000000000\n"), Catch::Contains("line 2: GPU0 CPU Affinity"));
  CHECK_THAT(ErrorOf("\tGPU0\tNUMA Affinity\nGPU0\t X \tfoo\n"), Catch::Contains("line 2: GPU0 NUMA Affinity"));
}

TEST_CASE("text after the matrix must be a legend") {
  std::string ok =
      "\tGPU0\tNIC0\nGPU0\t X \tPIX\nNIC0\tPIX\t X \n\n"
      "Legend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_0\n";
  auto t = ParseNvidiaSmiTopo(ok);
  REQUIRE(t.ok());
  CHECK(t->nics()[0].device == "mlx5_0");
  CHECK_THAT(ErrorOf(ok + "  NIC7: mlx5_7\n"), Catch::Contains("line 12: NIC Legend entry"));
  CHECK_THAT(ErrorOf(ok + "GPU1\t X \n"), Catch::Contains("line 12: unexpected text"));
}

TEST_CASE("truncated fixtures fail with a line number") {
  std::string text = ReadTopoFixture("dgx-a100.txt");
  REQUIRE_FALSE(text.empty());
  // Header only.
  CHECK_THAT(ErrorOf(FirstLines(text, 1)), Catch::Contains("line 2: the matrix ends without a row for GPU0"));
  // Cut in the middle of GPU3's row (line 5).
  std::string cut = FirstLines(text, 4);
  std::string row = FirstLines(text, 5).substr(cut.size());
  CHECK_THAT(ErrorOf(cut + row.substr(0, row.size() / 3)),
             Catch::Contains("line 5: row GPU3 has") && Catch::Contains("the header has 20 columns"));
  // GPU rows without the last one.
  CHECK_THAT(ErrorOf(FirstLines(text, 8)), Catch::Contains("without a row for GPU7"));
}

TEST_CASE("every prefix and random corruption of the fixtures ends cleanly") {
  const char* names[] = {"dgx1-v100.txt", "hgx-h200-8gpu-12nic.txt", "aws-p5.48xlarge.txt", "pcie-8x-rtx4090.txt"};
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  auto next = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  int failures = 0;
  for (const char* name : names) {
    std::string text = ReadTopoFixture(name);
    REQUIRE_FALSE(text.empty());
    for (size_t len = 0; len <= text.size(); len += 7) {
      auto t = ParseNvidiaSmiTopo(text.substr(0, len));
      if (!t.ok()) {
        ++failures;
        CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
        bool named =
            absl::StrContains(t.status().message(), "line ") || absl::StrContains(t.status().message(), "empty");
        CHECK(named);
      }
    }
    for (int i = 0; i < 300; ++i) {
      std::string mutated = text;
      int edits = 1 + static_cast<int>(next() % 4);
      for (int e = 0; e < edits; ++e) {
        size_t at = next() % mutated.size();
        mutated[at] = static_cast<char>(next() % 256);
      }
      auto t = ParseNvidiaSmiTopo(mutated);
      if (!t.ok()) {
        ++failures;
        CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
        CHECK(absl::StrContains(t.status().message(), "line "));
      }
    }
  }
  CHECK(failures > 0);
}
