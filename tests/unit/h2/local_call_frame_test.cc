#include <catch2/catch.hpp>
#include <string>

#include "common/io/local_call/frame.h"

namespace gpusched::local_call {
namespace {

std::string U32(uint32_t v) {
  std::string out;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

TEST_CASE("local call: a request arrives whole however it is split, and the next one stays buffered") {
  const std::string message("\0\x01\xff payload", 11);
  const std::string wire = EncodeRequest("SubmitJob", message) + EncodeRequest("GetJob", "x");
  for (size_t split = 0; split <= wire.size(); ++split) {
    std::string buffer = wire.substr(0, split);
    auto first = TakeRequest(buffer);
    REQUIRE(first.ok());
    const size_t first_size = 8 + 9 + message.size();
    if (split < first_size) {
      CHECK_FALSE(first->has_value());
      CHECK(buffer.size() == split);  // nothing taken until it is whole
      continue;
    }
    REQUIRE(first->has_value());
    CHECK((*first)->method == "SubmitJob");
    CHECK((*first)->message == message);
    CHECK(buffer == wire.substr(first_size, split - first_size));
  }
}

TEST_CASE("local call: a reply keeps its status, and a failed call carries no message") {
  std::string buffer = EncodeReply(absl::OkStatus(), "response") +
                       EncodeReply(absl::PermissionDeniedError("only an admin may drain a node"), "ignored");
  auto ok = TakeReply(buffer);
  REQUIRE(ok.ok());
  REQUIRE(ok->has_value());
  CHECK((*ok)->status.ok());
  CHECK((*ok)->message == "response");
  auto refused = TakeReply(buffer);
  REQUIRE(refused.ok());
  REQUIRE(refused->has_value());
  CHECK((*refused)->status == absl::PermissionDeniedError("only an admin may drain a node"));
  CHECK((*refused)->message.empty());
  CHECK(buffer.empty());
  std::string half = EncodeReply(absl::OkStatus(), "response").substr(0, 15);
  auto partial = TakeReply(half);
  REQUIRE(partial.ok());
  CHECK_FALSE(partial->has_value());
}

TEST_CASE("local call: requests that can never be whole are refused, saying what was wrong") {
  std::string empty_method = U32(0) + U32(0);
  CHECK(TakeRequest(empty_method).status().message() == "local call: a method name of 0 bytes (1 to 64 are taken)");
  std::string long_method = U32(65) + U32(0);
  CHECK(absl::IsInvalidArgument(TakeRequest(long_method).status()));
  std::string not_a_name = U32(4) + U32(0) + "a/b\n";
  CHECK(TakeRequest(not_a_name).status().message() == "local call: \"a/b\\n\" is not a method name");
  std::string huge = U32(6) + U32(kMaxRequestBytes + 1) + "GetJob";
  CHECK(absl::IsResourceExhausted(TakeRequest(huge).status()));
  std::string at_limit = U32(6) + U32(kMaxRequestBytes) + "GetJob";
  auto waiting = TakeRequest(at_limit);
  REQUIRE(waiting.ok());
  CHECK_FALSE(waiting->has_value());
}

TEST_CASE("local call: replies that are not ours are refused") {
  std::string bad_code = U32(99) + U32(0) + U32(0);
  CHECK(TakeReply(bad_code).status().message() == "local call: a reply with status code 99, which is none");
  std::string failed_with_message = U32(5) + U32(0) + U32(3) + "abc";
  CHECK(absl::IsInvalidArgument(TakeReply(failed_with_message).status()));
  std::string too_big = U32(0) + U32(0) + U32(100);
  CHECK(absl::IsResourceExhausted(TakeReply(too_big, 99).status()));
}

}  // namespace
}  // namespace gpusched::local_call
