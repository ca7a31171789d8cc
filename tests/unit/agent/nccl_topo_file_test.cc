#include "agent/runner/nccl_topo_file.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "../topology/xml_test_reader.h"
#include "absl/strings/match.h"
#include "common/topology/nccl_topo_xml.h"
#include "test_util.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;
namespace topology = gpusched::topology;

TEST_CASE("NCCL topology file: written whole, readable by every job user, replaced in place") {
  TempDir dir;
  const topology::NodeTopology dgx1 = FixtureTopology("dgx1-v100.txt");
  auto path = WriteNcclTopoFile(dgx1, dir.path());
  REQUIRE(path.ok());
  CHECK(*path == dir / "nccl-topo.xml");
  const std::string xml = ReadFile(*path);
  CHECK(xml == topology::WriteNcclTopoXml(dgx1));
  CHECK(absl::StartsWith(xml, "<system"));
  auto parsed = gpusched::testing::ReadXml(xml);
  INFO(parsed.error);
  REQUIRE(parsed.root);
  CHECK(parsed.root->name == "system");
  struct stat st;
  REQUIRE(stat(path->c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);

  // A restarted agent replaces the file, and leaves no temporary behind.
  const topology::NodeTopology h200 = FixtureTopology("hgx-h200-8gpu-12nic.txt");
  REQUIRE(WriteNcclTopoFile(h200, dir.path()).ok());
  CHECK(ReadFile(*path) == topology::WriteNcclTopoXml(h200));
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++entries;
  CHECK(entries == 1);
}

TEST_CASE("NCCL topology file: a directory it cannot write to is an error naming the file") {
  auto path = WriteNcclTopoFile(topology::NodeTopology(1, 0), "/proc/gpusched-no-such-dir");
  REQUIRE_FALSE(path.ok());
  CHECK(path.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(path.status().message()), Catch::Contains("/proc/gpusched-no-such-dir/nccl-topo.xml"));
}
