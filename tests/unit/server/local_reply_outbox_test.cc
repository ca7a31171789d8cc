#include "daemon/server/local_reply_outbox.h"

#include <poll.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace gpusched::server {
namespace {

bool Readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1;
}

TEST_CASE("local reply outbox: replies posted from many threads all reach the listener, each connection's in order") {
  auto outbox = LocalReplyOutbox::Create();
  REQUIRE(outbox.ok());
  constexpr int kThreads = 4;
  constexpr int kEach = 500;
  std::vector<std::thread> posters;
  for (int t = 0; t < kThreads; ++t) {
    posters.emplace_back([&outbox, t] {
      for (int i = 0; i < kEach; ++i) (*outbox)->Post(t, std::to_string(i));
    });
  }
  std::map<uint64_t, std::vector<std::string>> taken;
  size_t count = 0;
  while (count < kThreads * kEach) {
    REQUIRE(Readable((*outbox)->wake_fd(), 10'000));  // a post always wakes the listener
    for (auto& [connection, frame] : (*outbox)->TakeAll()) {
      taken[connection].push_back(std::move(frame));
      ++count;
    }
  }
  for (std::thread& poster : posters) poster.join();
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(taken[t].size() == kEach);
    for (int i = 0; i < kEach; ++i) CHECK(taken[t][i] == std::to_string(i));
  }
  CHECK((*outbox)->TakeAll().empty());
  CHECK_FALSE(Readable((*outbox)->wake_fd(), 0));  // taken: no wake left over
}

TEST_CASE("local reply outbox: once closed, replies of calls that outlive the listener are dropped") {
  auto outbox = LocalReplyOutbox::Create();
  REQUIRE(outbox.ok());
  (*outbox)->Post(1, "before");
  (*outbox)->Close();
  (*outbox)->Post(2, "after");
  CHECK((*outbox)->TakeAll().empty());
  (*outbox)->Wake();  // still a working wake, for the listener's own stop
  CHECK(Readable((*outbox)->wake_fd(), 0));
}

}  // namespace
}  // namespace gpusched::server
