#include "agent/nccl/rendezvous.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace gpusched::agent {
namespace {

// Sent before the payload, so that a wrong port gives a clear error, not a bad id.
constexpr char kMagic[] = "gpusched-nccl-id1";
constexpr size_t kMagicSize = sizeof kMagic - 1;

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n, size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = recv(fd, data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n, size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string ServeRendezvous(int port, const std::string& payload) {
  // IPv4, as NCCL's own bootstrap on most clusters; peers try each address of the host.
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("rendezvous: socket: ") + std::strerror(errno);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 64) != 0) {
    const std::string error = "rendezvous: cannot listen on port " + std::to_string(port) + ": " + std::strerror(errno);
    close(fd);
    return error;
  }
  std::thread([fd, message = std::string(kMagic, kMagicSize) + payload] {
    for (;;) {
      const int peer = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (peer < 0) continue;
      WriteAll(peer, message.data(), message.size());
      close(peer);
    }
  }).detach();
  return "";
}

std::string FetchRendezvous(const std::string& host, int port, size_t size, std::string* payload) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  const int resolved = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses);
  if (resolved != 0) return "rendezvous: cannot resolve " + host + ": " + gai_strerror(resolved);
  int fd = -1;
  while (fd < 0) {
    for (addrinfo* a = addresses; a != nullptr && fd < 0; a = a->ai_next) {
      fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
      }
    }
    if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  freeaddrinfo(addresses);
  std::string message(kMagicSize + size, '\0');
  const bool complete = ReadAll(fd, message.data(), message.size());
  close(fd);
  if (!complete || message.compare(0, kMagicSize, kMagic) != 0) {
    return "rendezvous: " + host + ":" + std::to_string(port) + " did not answer as gpusched-nccl-probe's rank 0 does";
  }
  *payload = message.substr(kMagicSize);
  return "";
}

}  // namespace gpusched::agent
