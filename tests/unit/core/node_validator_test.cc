#include "daemon/core/node_validator.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "common/display_text.h"

using namespace gpusched;

namespace {

v1::NodeInfo Node(const std::string& name) {
  v1::NodeInfo node;
  node.set_name(name);
  node.set_cpus(8);
  node.set_memory_mb(1024);
  return node;
}

}  // namespace

TEST_CASE("a node's name and labels are printable, and the name fits a node certificate") {
  CHECK(core::ValidateNodeInfo(Node("gpu-001.rack2")).ok());
  CHECK(core::ValidateNodeInfo(Node(std::string(core::kMaxNodeNameBytes, 'n'))).ok());

  absl::Status long_name = core::ValidateNodeInfo(Node(std::string(core::kMaxNodeNameBytes + 1, 'n')));
  CHECK(long_name.code() == absl::StatusCode::kInvalidArgument);
  CHECK(long_name.message() == "node.name: 60 bytes long, at most 59");

  for (const char* name : {"gpu\nnode=root", "gpu\x1b[31m", "gpu\x7f", "gpu\xc2\x85"}) {
    INFO(name);
    absl::Status s = core::ValidateNodeInfo(Node(name));
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StartsWith(s.message(), "node.name: holds a control character (byte 3"));
  }

  v1::NodeInfo labelled = Node("gpu01");
  (*labelled.mutable_labels())["rack"] = "r1\nleaf=l9";
  CHECK(core::ValidateNodeInfo(labelled).message().substr(0, 18) == "node.labels[rack]:");
  labelled.mutable_labels()->clear();
  (*labelled.mutable_labels())["ra\x1b"] = "r1";
  CHECK(core::ValidateNodeInfo(labelled).message().substr(0, 20) == "node.labels (a key):");
}

TEST_CASE("an agent's message is made fit for a table: control characters become spaces, and it is cut") {
  CHECK(ToDisplayText("exec \"x\":\nNo such file\x1b[31m", 100) == "exec \"x\": No such file [31m");
  CHECK(ToDisplayText("a\xc2\x9b"
                      "b",
                      100) == "a b");
  CHECK(ToDisplayText(std::string(2000, 'x'), kMaxReasonBytes).size() == kMaxReasonBytes);
  // Never inside a character: "é" is two bytes.
  CHECK(ToDisplayText("ab\xc3\xa9", 3) == "ab");
  CHECK(ToDisplayText("résumé", 100) == "résumé");
}
