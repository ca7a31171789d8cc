// Any local user can write any bytes to the daemon's Unix socket: the local
// call framing (common/io/local_call/frame.h) reads them as they arrive.
#include <string>

#include "common/io/local_call/frame.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using gpusched::local_call::EncodeRequest;
using gpusched::local_call::kMaxMethodBytes;
using gpusched::local_call::kMaxRequestBytes;
using gpusched::local_call::TakeReply;
using gpusched::local_call::TakeRequest;

// Feeds `bytes` in pieces of `step`, as reads from a socket would deliver
// them, taking requests (or replies) as the listener (or the CLI) does.
void AsRequests(const std::string& bytes, size_t step) {
  std::string buffer;
  std::string taken;  // every request taken, encoded again
  for (size_t at = 0; at < bytes.size(); at += step) {
    buffer.append(bytes, at, step);
    while (true) {
      const size_t before = buffer.size();
      auto request = TakeRequest(buffer);
      if (!request.ok()) return;  // the connection is closed here
      if (!request->has_value()) {
        FUZZ_CHECK(buffer.size() == before);  // nothing taken until whole
        break;
      }
      const auto& r = **request;
      FUZZ_CHECK(!r.method.empty() && r.method.size() <= kMaxMethodBytes);
      FUZZ_CHECK(r.message.size() <= kMaxRequestBytes);
      const std::string again = EncodeRequest(r.method, r.message);
      FUZZ_CHECK(before - buffer.size() == again.size());
      taken += again;
    }
  }
  // What was taken is exactly the front of what was sent.
  FUZZ_CHECK(bytes.compare(0, taken.size(), taken) == 0);
}

void AsReplies(const std::string& bytes, size_t step) {
  std::string buffer;
  for (size_t at = 0; at < bytes.size(); at += step) {
    buffer.append(bytes, at, step);
    while (true) {
      const size_t before = buffer.size();
      auto reply = TakeReply(buffer, 1 << 20);
      if (!reply.ok()) return;
      if (!reply->has_value()) {
        FUZZ_CHECK(buffer.size() == before);
        break;
      }
      const auto& r = **reply;
      FUZZ_CHECK(r.status.ok() || r.message.empty());
      FUZZ_CHECK(before - buffer.size() >= 12 + r.message.size());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks how the rest arrives: in pieces of 1 to 256 bytes.
  const size_t step = static_cast<size_t>(data[0]) + 1;
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  AsRequests(bytes, step);
  AsReplies(bytes, step);
  return 0;
}
