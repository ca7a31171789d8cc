#include "daemon/server/unix_listener.h"

#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/io/local_call/frame.h"
#include "common/io/logging/logging.h"
#include "daemon/server/local_call_dispatch.h"
#include "daemon/server/local_reply_outbox.h"

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

// HTTP/2's connection preface ("PRI * HTTP/2.0...") begins with it.
constexpr char kHttp2FirstByte = 'P';
constexpr size_t kReadChunk = 64 << 10;

// Said to a client that speaks neither, before the connection is closed.
constexpr absl::string_view kNotOurProtocol =
    "gpuschedd: this socket speaks gRPC (HTTP/2) and gpusched's local calls; this was neither\n";

int MillisUntil(absl::Time deadline, absl::Time now) {
  if (deadline == absl::InfiniteFuture()) return -1;
  return static_cast<int>(std::clamp<int64_t>(absl::ToInt64Milliseconds(deadline - now) + 1, 0, 60'000));
}

}  // namespace

struct UnixListener::Connection {
  enum class Stage {
    kFirstByte,  // says nothing yet
    kMagic,      // not gRPC: local_call::kMagic expected
    kCalls,      // local calls
  };
  int fd = -1;
  LocalCaller peer;
  Stage stage = Stage::kFirstByte;
  std::string in;
  std::string out;
  size_t sent = 0;
  bool in_call = false;  // a call is running
  bool closing = false;  // closed once `out` is sent
  absl::Time deadline = absl::InfiniteFuture();

  bool unsent() const { return sent < out.size(); }
};

absl::StatusOr<std::unique_ptr<UnixListener>> UnixListener::Start(const std::string& path, grpc::Server& server,
                                                                  LocalCallers& callers, SchedulerCalls& calls,
                                                                  CallerPolicy policy) {
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
  auto outbox = LocalReplyOutbox::Create();
  if (!outbox.ok()) return outbox.status();
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
  return std::unique_ptr<UnixListener>(
      new UnixListener(path, fd, *std::move(outbox), server, callers, calls, std::move(policy)));
}

UnixListener::UnixListener(std::string path, int listen_fd, std::shared_ptr<LocalReplyOutbox> outbox,
                           grpc::Server& server, LocalCallers& callers, SchedulerCalls& calls, CallerPolicy policy)
    : path_(std::move(path)),
      listen_fd_(listen_fd),
      outbox_(std::move(outbox)),
      server_(server),
      callers_(callers),
      calls_(calls),
      policy_(std::move(policy)) {
  thread_ = std::thread([this] { Loop(); });
}

UnixListener::~UnixListener() {
  stopping_ = true;
  outbox_->Wake();
  thread_.join();
  outbox_->Close();
  for (auto& [id, c] : connections_) close(c.fd);
  close(listen_fd_);
  unlink(path_.c_str());
}

void UnixListener::Loop() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;
  absl::Time stop_by = absl::InfiniteFuture();
  while (true) {
    absl::Time now = absl::Now();
    const bool stopping = stopping_.load();
    if (stopping) {
      if (stop_by == absl::InfiniteFuture()) stop_by = now + kStopGrace;
      const bool answering = std::any_of(connections_.begin(), connections_.end(), [](const auto& entry) {
        return entry.second.in_call || entry.second.unsent();
      });
      if (!answering || now >= stop_by) return;
    }
    fds.clear();
    ids.clear();
    const bool accepting = !stopping && now >= accept_paused_until_;
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
    fds.push_back({outbox_->wake_fd(), POLLIN, 0});
    absl::Time wake_at = stopping ? stop_by : accepting ? absl::InfiniteFuture() : accept_paused_until_;
    for (const auto& [id, c] : connections_) {
      short events = 0;
      // One call at a time: nothing more is read until its reply is out.
      if (!c.in_call && !c.unsent() && !c.closing && !stopping) events |= POLLIN;
      if (c.unsent()) events |= POLLOUT;
      fds.push_back({c.fd, events, 0});
      ids.push_back(id);
      wake_at = std::min(wake_at, c.deadline);
    }
    if (poll(fds.data(), fds.size(), MillisUntil(wake_at, now)) < 0) {
      if (errno == EINTR) continue;
      GetLogger("daemon")->error("unix socket {}: poll: {}", path_, std::strerror(errno));
      return;
    }
    now = absl::Now();
    if (fds[1].revents != 0) {
      for (auto& [id, frame] : outbox_->TakeAll()) OnReply(id, std::move(frame), now);
    }
    if ((fds[0].revents & POLLIN) != 0) AcceptAll(now);
    for (size_t i = 0; i < ids.size(); ++i) {
      const short revents = fds[i + 2].revents;
      auto it = connections_.find(ids[i]);
      if (revents == 0 || it == connections_.end()) continue;
      if ((revents & POLLOUT) != 0) Flush(ids[i], it->second, now);
      it = connections_.find(ids[i]);
      if (it == connections_.end()) continue;
      if ((revents & POLLIN) != 0) {
        OnReadable(ids[i], now);
      } else if ((revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
        Close(ids[i]);  // gone; a reply still to come is dropped
      }
    }
    for (auto it = connections_.begin(); it != connections_.end();) {
      const uint64_t id = it->first;
      const bool expired = it->second.deadline <= now;
      ++it;
      if (expired) Close(id);
    }
  }
}

void UnixListener::AcceptAll(absl::Time now) {
  while (true) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        // Out of descriptors or memory: the connection waits in the backlog
        // while the loop pauses, instead of spinning on a readable socket.
        if (now - last_accept_warning_ >= kAcceptWarningEvery) {
          last_accept_warning_ = now;
          GetLogger("daemon")->warn("unix socket {}: accept: {}; trying again every {}", path_, std::strerror(errno),
                                    absl::FormatDuration(kAcceptRetry));
        }
        accept_paused_until_ = now + kAcceptRetry;
      }
      return;
    }
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      GetLogger("daemon")->warn("unix socket {}: SO_PEERCRED: {}; connection refused", path_, std::strerror(errno));
      close(fd);
      continue;
    }
    int& held = connections_per_uid_[cred.uid];
    if (held >= kMaxConnectionsPerUid) {
      if (now - last_limit_warning_ >= kAcceptWarningEvery) {
        last_limit_warning_ = now;
        GetLogger("daemon")->warn("unix socket {}: uid {} (pid {}) already holds {} connections; more are closed",
                                  path_, cred.uid, cred.pid, held);
      }
      close(fd);
      continue;
    }
    ++held;
    Connection c;
    c.fd = fd;
    c.peer = LocalCaller{cred.uid, cred.gid, cred.pid, user_names_.NameOf(cred.uid, now)};
    c.deadline = now + kClientTimeout;
    connections_.emplace(next_id_++, std::move(c));
  }
}

void UnixListener::OnReadable(uint64_t id, absl::Time now) {
  Connection& c = connections_.at(id);
  if (c.stage == Connection::Stage::kFirstByte) {
    char first = 0;
    const ssize_t n = recv(c.fd, &first, 1, MSG_PEEK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) return Close(id);
    if (first == kHttp2FirstByte) {
      // Recorded before gRPC owns the fd: its first call may come at once.
      callers_.Connected(c.fd, c.peer);
      grpc::AddInsecureChannelFromFd(&server_, c.fd);
      Forget(id);
      return;
    }
    c.stage = Connection::Stage::kMagic;
  }
  char buffer[kReadChunk];
  const ssize_t n = recv(c.fd, buffer, sizeof(buffer), 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) return Close(id);  // the client is done, or gone
  c.in.append(buffer, static_cast<size_t>(n));
  if (c.stage == Connection::Stage::kMagic) {
    const size_t have = std::min(c.in.size(), local_call::kMagic.size());
    if (absl::string_view(c.in).substr(0, have) != local_call::kMagic.substr(0, have)) {
      c.out.assign(kNotOurProtocol.data(), kNotOurProtocol.size());
      c.closing = true;
      c.deadline = now + kClientTimeout;  // for reading it
      return Flush(id, c, now);
    }
    if (have < local_call::kMagic.size()) return;
    c.in.erase(0, local_call::kMagic.size());
    c.stage = Connection::Stage::kCalls;
  }
  TakeRequest(id, c, now);
}

void UnixListener::TakeRequest(uint64_t id, Connection& c, absl::Time now) {
  if (c.in_call || c.unsent()) return;  // the next request waits for this call's reply to be out
  absl::StatusOr<std::optional<local_call::Request>> request = local_call::TakeRequest(c.in);
  if (!request.ok()) {
    GetLogger("daemon")->warn("unix socket {}: uid {} (pid {}): {}; connection closed", path_, c.peer.uid, c.peer.pid,
                              request.status().ToString());
    c.out = local_call::EncodeReply(request.status(), "");
    c.closing = true;
    c.deadline = now + kClientTimeout;  // for reading it
    return Flush(id, c, now);
  }
  if (!request->has_value()) {
    // A request begun must be finished in time; an idle connection may wait
    // a while for its next one.
    if (c.in.empty()) {
      c.deadline = now + kIdleTimeout;
    } else if (c.deadline - now > kClientTimeout) {
      c.deadline = now + kClientTimeout;
    }
    return;
  }
  c.in_call = true;
  c.deadline = absl::InfiniteFuture();
  StartLocalCall(calls_, LocalUser(policy_, c.peer), **request,
                 [outbox = outbox_, id](std::string frame) { outbox->Post(id, std::move(frame)); });
}

void UnixListener::OnReply(uint64_t id, std::string frame, absl::Time now) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;  // its client left before the answer
  Connection& c = it->second;
  c.in_call = false;
  c.out += frame;
  c.deadline = now + kClientTimeout;  // to read it
  Flush(id, c, now);
}

void UnixListener::Flush(uint64_t id, Connection& c, absl::Time now) {
  while (c.unsent()) {
    const ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // the rest when it is writable
    if (n < 0) return Close(id);
    c.sent += static_cast<size_t>(n);
  }
  c.out.clear();
  c.sent = 0;
  if (c.closing) return Close(id);
  c.deadline = now + kIdleTimeout;
  // A client may send its next request before reading this reply.
  if (c.stage == Connection::Stage::kCalls && !c.in_call && !c.in.empty()) TakeRequest(id, c, now);
}

void UnixListener::Close(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  close(it->second.fd);
  Forget(id);
}

void UnixListener::Forget(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  auto count = connections_per_uid_.find(it->second.peer.uid);
  if (count != connections_per_uid_.end() && --count->second <= 0) connections_per_uid_.erase(count);
  connections_.erase(it);
}

}  // namespace gpusched::server
