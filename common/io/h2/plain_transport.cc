#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/io/h2/transport.h"

namespace gpusched::h2 {
namespace {

class Plain final : public Transport {
 public:
  explicit Plain(int fd) : Transport(fd) {}
  ~Plain() override { close(fd_); }

  ssize_t Read(char* buffer, size_t size) override {
    while (true) {
      const ssize_t n = recv(fd_, buffer, size, 0);
      if (n > 0) return n;
      if (n == 0) return Over("the other end closed the connection");
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      return Over(absl::StrCat("recv: ", std::strerror(errno)));
    }
  }

  ssize_t Write(const char* data, size_t size) override {
    while (true) {
      const ssize_t n = send(fd_, data, size, MSG_NOSIGNAL);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      return Over(absl::StrCat("send: ", std::strerror(errno)));
    }
  }

  short PollEvents(bool have_output) const override { return have_output ? POLLIN | POLLOUT : POLLIN; }

 private:
  ssize_t Over(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return -1;
  }
};

}  // namespace

std::unique_ptr<Transport> PlainTransport(int fd) { return std::make_unique<Plain>(fd); }

}  // namespace gpusched::h2
