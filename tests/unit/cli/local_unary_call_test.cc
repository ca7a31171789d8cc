#include "cli/local_unary_call.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/io/local_call/frame.h"

namespace gpusched::cli {
namespace {

// A one-connection server on a Unix socket that does to what it reads
// whatever `serve` does with the connection's fd.
class OneShotServer {
 public:
  explicit OneShotServer(std::function<void(int)> serve) {
    char dir[] = "/tmp/gpusched-local-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    dir_ = dir;
    path_ = dir_ + "/d.sock";
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path_.c_str());
    REQUIRE(bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0);
    REQUIRE(listen(listen_fd_, 1) == 0);
    thread_ = std::thread([this, serve = std::move(serve)] {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      serve(fd);
      close(fd);
    });
  }
  ~OneShotServer() {
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
    std::filesystem::remove_all(dir_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
  int listen_fd_ = -1;
  std::thread thread_;
};

// Reads what the client sends until it has `bytes` of it.
std::string ReadAtLeast(int fd, size_t bytes) {
  std::string in;
  char buffer[4096];
  while (in.size() < bytes) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    in.append(buffer, static_cast<size_t>(n));
  }
  return in;
}

constexpr char kGetJob[] = "/gpusched.v1.Scheduler/GetJob";

TEST_CASE("local connection: the greeting and the request go out once, and the reply comes back whole") {
  const std::string expected = std::string(local_call::kMagic) + local_call::EncodeRequest("GetJob", "req");
  std::string received;
  {
    OneShotServer server([&](int fd) {
      received = ReadAtLeast(fd, expected.size());
      const std::string reply = local_call::EncodeReply(absl::OkStatus(), std::string(100000, 'x'));
      for (char c : reply) send(fd, &c, 1, MSG_NOSIGNAL);  // a byte at a time
      std::string second = ReadAtLeast(fd, local_call::EncodeRequest("GetJob", "two").size());
      const std::string refusal = local_call::EncodeReply(absl::NotFoundError("job 7 not found"), "");
      send(fd, refusal.data(), refusal.size(), MSG_NOSIGNAL);
    });
    auto connection = LocalConnection::Dial(server.path(), absl::Now() + absl::Seconds(5));
    REQUIRE(connection.ok());
    auto reply = (*connection)->Call(kGetJob, "req", absl::Now() + absl::Seconds(10));
    REQUIRE(reply.ok());
    CHECK(reply->status.ok());
    CHECK(reply->response == std::string(100000, 'x'));
    CHECK((*connection)->heard_from_peer());
    auto second = (*connection)->Call(kGetJob, "two", absl::Now() + absl::Seconds(10));
    REQUIRE(second.ok());
    CHECK(second->status == absl::NotFoundError("job 7 not found"));
  }
  CHECK(received == expected);
}

TEST_CASE("local connection: no answer by the deadline, a closed connection and garbage are errors that say so") {
  {
    OneShotServer silent([](int fd) { ReadAtLeast(fd, 1u << 30); });  // reads until the client leaves
    auto connection = LocalConnection::Dial(silent.path(), absl::Now() + absl::Seconds(5));
    REQUIRE(connection.ok());
    const absl::Time start = absl::Now();
    auto reply = (*connection)->Call(kGetJob, "", absl::Now() + absl::Milliseconds(200));
    CHECK(reply.status().code() == absl::StatusCode::kDeadlineExceeded);
    CHECK(absl::Now() - start < absl::Seconds(5));
    connection->reset();  // the server's read ends
  }
  {
    OneShotServer closes([](int fd) { ReadAtLeast(fd, 1); });
    auto connection = LocalConnection::Dial(closes.path(), absl::Now() + absl::Seconds(5));
    REQUIRE(connection.ok());
    auto reply = (*connection)->Call(kGetJob, "", absl::Now() + absl::Seconds(10));
    CHECK(reply.status() == absl::UnavailableError("the daemon closed the connection before it answered"));
    CHECK_FALSE((*connection)->heard_from_peer());
  }
  {
    OneShotServer garbage([](int fd) {
      ReadAtLeast(fd, 1);
      const std::string http = "HTTP/1.1 400 Bad Request\r\n\r\n";
      send(fd, http.data(), http.size(), MSG_NOSIGNAL);
    });
    auto connection = LocalConnection::Dial(garbage.path(), absl::Now() + absl::Seconds(5));
    REQUIRE(connection.ok());
    auto reply = (*connection)->Call(kGetJob, "", absl::Now() + absl::Seconds(10));
    CHECK(reply.status().code() == absl::StatusCode::kUnavailable);
    CHECK(absl::StartsWith(reply.status().message(), "the answer is not a local call's reply"));
  }
  auto nobody = LocalConnection::Dial("/nonexistent/d.sock", absl::Now() + absl::Seconds(1));
  CHECK(nobody.status().code() == absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace gpusched::cli
