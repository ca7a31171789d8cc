#include "daemon/server/unix_listener.h"

#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/io/logging/logging.h"

namespace gpusched::server {
namespace {

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// Whether a daemon still answers on the socket file.
bool Answers(const sockaddr_un& addr) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool answers = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return answers;
}

}  // namespace

absl::StatusOr<std::unique_ptr<UnixListener>> UnixListener::Start(const std::string& path, grpc::Server& server,
                                                                  LocalCallers& callers) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path \"", path, "\" must be 1 to ", sizeof(addr.sun_path) - 1, " characters"));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat(path, " exists and is not a socket"));
    if (Answers(addr)) return absl::FailedPreconditionError(absl::StrCat(path, ": another daemon is listening there"));
    unlink(path.c_str());  // left behind by a daemon that died
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    absl::Status s = Errno(absl::StrCat("cannot bind ", path));
    close(fd);
    return s;
  }
  if (chmod(path.c_str(), 0666) != 0 || listen(fd, 128) != 0) {
    absl::Status s = Errno(absl::StrCat("cannot listen on ", path));
    close(fd);
    unlink(path.c_str());
    return s;
  }
  const int wake = eventfd(0, EFD_CLOEXEC);
  if (wake < 0) {
    close(fd);
    unlink(path.c_str());
    return Errno("eventfd");
  }
  return std::unique_ptr<UnixListener>(new UnixListener(path, fd, wake, server, callers));
}

UnixListener::UnixListener(std::string path, int listen_fd, int wake_fd, grpc::Server& server, LocalCallers& callers)
    : path_(std::move(path)), listen_fd_(listen_fd), wake_fd_(wake_fd), server_(server), callers_(callers) {
  thread_ = std::thread([this] { AcceptLoop(); });
}

UnixListener::~UnixListener() {
  const uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) < 0)
    GetLogger("daemon")->warn("unix socket {}: cannot wake the accept loop", path_);
  thread_.join();
  close(listen_fd_);
  close(wake_fd_);
  unlink(path_.c_str());
}

void UnixListener::AcceptLoop() {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  while (true) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      GetLogger("daemon")->error("unix socket {}: poll: {}", path_, std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int conn = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (conn < 0) {
      if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
        GetLogger("daemon")->warn("unix socket {}: accept: {}", path_, std::strerror(errno));
      }
      continue;
    }
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      GetLogger("daemon")->warn("unix socket {}: SO_PEERCRED: {}; connection refused", path_, std::strerror(errno));
      close(conn);
      continue;
    }
    // Recorded before gRPC owns the fd: its first call may come at once.
    callers_.Connected(conn, LocalCaller{cred.uid, cred.gid, cred.pid, user_names_.NameOf(cred.uid, absl::Now())});
    grpc::AddInsecureChannelFromFd(&server_, conn);
  }
}

}  // namespace gpusched::server
