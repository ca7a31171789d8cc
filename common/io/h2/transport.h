#pragma once

#include <poll.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/io/tls/connect_failure_hint.h"
#include "common/io/tls/tls_files.h"

namespace gpusched::h2 {

// A connected, non-blocking byte stream: a socket as it is, or TLS over it.
// One thread uses it at a time.
class Transport {
 public:
  virtual ~Transport() = default;
  // Bytes read (> 0); 0 when none can be read now; -1 when the connection
  // is over (error() says how).
  virtual ssize_t Read(char* buffer, size_t size) = 0;
  // Bytes taken (> 0); 0 when none can be now; -1 when the connection is
  // over. After a 0, the next call passes at least the same bytes again.
  virtual ssize_t Write(const char* data, size_t size) = 0;
  // The poll(2) events to wait for: reading wanted always, writing when
  // there is output, and whatever TLS needs to go on.
  virtual short PollEvents(bool have_output) const = 0;
  // Whether Read waits for the socket to take bytes (TLS): then POLLOUT is
  // the time to read again.
  virtual bool ReadWaitsForWrite() const { return false; }
  int fd() const { return fd_; }
  // Why the connection ended, once Read or Write returned -1.
  const std::string& error() const { return error_; }
  // The same, typed, where the end says more than "closed": a TLS alert.
  tls::ConnectFailure failure() const { return failure_; }

 protected:
  explicit Transport(int fd) : fd_(fd) {}
  const int fd_;  // owned: closed with the transport
  std::string error_;
  tls::ConnectFailure failure_ = tls::ConnectFailure::kOther;
};

// The socket as it is (and closed with it).
std::unique_ptr<Transport> PlainTransport(int fd);

// TLS 1.2 or later as a client over connected socket `fd` (taken and closed
// with the transport, or at once on failure), offering HTTP/2 by ALPN, the
// server's certificate checked against the CA in `tls` (the system's CAs
// when it has none) and against `host` (a DNS name or an IP address), our
// own certificate presented when `tls` has one. The handshake is done by
// `deadline`; Cancelled as soon as `cancel_fd` (-1: none) becomes readable.
// A failed handshake is Unavailable with OpenSSL's reason, and `failure`
// says what it most likely means.
absl::StatusOr<std::unique_ptr<Transport>> TlsClientHandshake(int fd, const tls::TlsMaterial& tls,
                                                              const std::string& host, absl::Time deadline,
                                                              int cancel_fd, tls::ConnectFailure* failure);

}  // namespace gpusched::h2
