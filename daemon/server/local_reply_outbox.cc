#include "daemon/server/local_reply_outbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpusched::server {

absl::StatusOr<std::shared_ptr<LocalReplyOutbox>> LocalReplyOutbox::Create() {
  const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("eventfd: ", std::strerror(errno)));
  return std::shared_ptr<LocalReplyOutbox>(new LocalReplyOutbox(fd));
}

LocalReplyOutbox::~LocalReplyOutbox() { close(wake_fd_); }

void LocalReplyOutbox::Post(uint64_t connection, std::string frame) {
  {
    MutexLock lock(&mu_);
    if (closed_) return;
    posted_.emplace_back(connection, std::move(frame));
  }
  Wake();
}

void LocalReplyOutbox::Wake() {
  const uint64_t one = 1;
  // Only a counter at its maximum refuses, and it is then readable anyway.
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

std::vector<std::pair<uint64_t, std::string>> LocalReplyOutbox::TakeAll() {
  uint64_t count = 0;
  [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof(count));
  MutexLock lock(&mu_);
  return std::exchange(posted_, {});
}

void LocalReplyOutbox::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  posted_.clear();
}

}  // namespace gpusched::server
