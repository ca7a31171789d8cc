#include "common/io/h2/grpc_framing.h"

#include <catch2/catch.hpp>

using namespace gpusched::h2;

TEST_CASE("a framed message is a flag byte, a big-endian length and the bytes") {
  const std::string framed = FramedMessage(std::string(258, 'x'));
  REQUIRE(framed.size() == 5 + 258);
  CHECK(framed.substr(0, 5) == std::string("\0\0\0\x01\x02", 5));
  CHECK(FramedMessage("") == std::string(5, '\0'));
}

TEST_CASE("the splitter hands out whole messages however the DATA arrives") {
  const std::string wire = FramedMessage("first") + FramedMessage("") + FramedMessage(std::string(70000, 'z'));
  MessageSplitter splitter(1 << 20);
  std::vector<std::string> messages;
  for (size_t at = 0; at < wire.size(); at += 7) {  // pieces that cut headers and bodies
    splitter.Append(wire.substr(at, 7));
    while (true) {
      auto next = splitter.Next();
      REQUIRE(next.ok());
      if (!next->has_value()) break;
      messages.push_back(**next);
    }
  }
  REQUIRE(messages.size() == 3);
  CHECK(messages[0] == "first");
  CHECK(messages[1].empty());
  CHECK(messages[2] == std::string(70000, 'z'));
  CHECK(splitter.pending() == 0);
}

TEST_CASE("the splitter refuses a compressed message and one over its limit") {
  MessageSplitter compressed(100);
  compressed.Append(std::string("\x01\0\0\0\x01y", 6));
  CHECK(compressed.Next().status().code() == absl::StatusCode::kUnavailable);

  MessageSplitter small(10);
  small.Append(FramedMessage(std::string(11, 'a')).substr(0, 5));  // the header alone says too much
  auto next = small.Next();
  REQUIRE_FALSE(next.ok());
  CHECK(next.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(next.status().message()), Catch::Contains("11 bytes"));
}

namespace {
using Headers = std::map<std::string, std::string>;
}  // namespace

TEST_CASE("the call's status comes from grpc-status and the decoded grpc-message") {
  auto status = CallStatus(Headers{{":status", "200"}, {"grpc-status", "14"}, {"grpc-message", "a%20standby%25"}});
  REQUIRE(status.has_value());
  CHECK(status->code() == absl::StatusCode::kUnavailable);
  CHECK(status->message() == "a standby%");
  CHECK(CallStatus(Headers{{"grpc-status", "0"}})->ok());

  // Not gRPC: an HTTP error page, or a status out of range.
  CHECK_FALSE(CallStatus(Headers{{":status", "404"}}).has_value());
  CHECK_THAT(std::string(NotGrpcError(Headers{{":status", "404"}}).message()), Catch::Contains("HTTP status 404"));
  CHECK_FALSE(CallStatus(Headers{{"grpc-status", "17"}}).has_value());
  CHECK_FALSE(CallStatus(Headers{{"grpc-status", "x"}}).has_value());

  auto metadata = CallMetadata(Headers{{":status", "200"}, {"grpc-status", "0"}, {"gpusched-leader", "b:1"}});
  CHECK(metadata == Headers{{"gpusched-leader", "b:1"}});
}

TEST_CASE("grpc-timeout keeps to 8 digits, in the finest unit that fits") {
  CHECK(GrpcTimeout(absl::Milliseconds(1500)) == "1500m");
  CHECK(GrpcTimeout(absl::ZeroDuration()) == "1m");
  CHECK(GrpcTimeout(absl::Hours(48)) == "172800S");
  CHECK(GrpcTimeout(absl::Hours(24 * 365 * 5000)) == "43800000H");
}
