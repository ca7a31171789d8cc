#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/io/h2/socket_dial.h"
#include "common/io/h2/transport.h"

namespace gpusched::h2 {
namespace {

constexpr unsigned char kAlpnH2[] = {2, 'h', '2'};

// OpenSSL's socket BIO writes with write(2): a peer that closed the
// connection would end the process with SIGPIPE instead of the call. This
// one sends with MSG_NOSIGNAL; the fd stays the transport's to close.
int SocketOf(BIO* bio) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio))); }

int NoSignalWrite(BIO* bio, const char* data, size_t size, size_t* written) {
  BIO_clear_retry_flags(bio);
  while (true) {
    const ssize_t n = send(SocketOf(bio), data, size, MSG_NOSIGNAL);
    if (n >= 0) {
      *written = static_cast<size_t>(n);
      return 1;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
    return 0;
  }
}

int NoSignalRead(BIO* bio, char* buffer, size_t size, size_t* read) {
  BIO_clear_retry_flags(bio);
  while (true) {
    const ssize_t n = recv(SocketOf(bio), buffer, size, 0);
    if (n > 0) {
      *read = static_cast<size_t>(n);
      return 1;
    }
    if (n == 0) return 0;  // the end: no retry flag
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_read(bio);
    return 0;
  }
}

long SocketControl(BIO*, int command, long, void*) { return command == BIO_CTRL_FLUSH ? 1 : 0; }

int SocketCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* NoSignalSocketMethod() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "gpusched socket");
    BIO_meth_set_write_ex(m, NoSignalWrite);
    BIO_meth_set_read_ex(m, NoSignalRead);
    BIO_meth_set_ctrl(m, SocketControl);
    BIO_meth_set_create(m, SocketCreate);
    return m;
  }();
  return method;
}

// OpenSSL's reasons queued on this thread, oldest first, and the queue
// cleared; `refused` set when one says the other end refused us or does not
// speak TLS.
std::string TakeOpenSslErrors(bool* refused = nullptr) {
  std::string text;
  while (const unsigned long e = ERR_get_error()) {
    const bool from_peer = ERR_GET_LIB(e) == ERR_LIB_SSL && (ERR_GET_REASON(e) >= SSL_AD_REASON_OFFSET ||
                                                             ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING);
    if (refused != nullptr && from_peer) *refused = true;
    const char* reason = ERR_reason_error_string(e);
    absl::StrAppend(&text, text.empty() ? "" : "; ", reason != nullptr ? reason : absl::StrCat("error ", e));
  }
  return text;
}

struct CtxDeleter {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using CtxPtr = std::unique_ptr<SSL_CTX, CtxDeleter>;

// The context for one connection: the material is a process's settings,
// read once; a context per dial costs a few PEM parses, once per connection.
absl::StatusOr<CtxPtr> MakeContext(const tls::TlsMaterial& tls) {
  CtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (ctx == nullptr) return absl::InternalError(absl::StrCat("TLS: ", TakeOpenSslErrors()));
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (tls.ca_certs.empty()) {
    SSL_CTX_set_default_verify_paths(ctx.get());
  } else {
    BIO* bio = BIO_new_mem_buf(tls.ca_certs.data(), static_cast<int>(tls.ca_certs.size()));
    X509_STORE* store = SSL_CTX_get_cert_store(ctx.get());
    int added = 0;
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      added += X509_STORE_add_cert(store, cert) == 1 ? 1 : 0;
      X509_free(cert);
    }
    BIO_free(bio);
    ERR_clear_error();  // the end of the PEM text
    if (added == 0) return absl::InvalidArgumentError("TLS: no CA certificate in tls_ca");
  }
  if (!tls.cert_chain.empty()) {
    BIO* bio = BIO_new_mem_buf(tls.cert_chain.data(), static_cast<int>(tls.cert_chain.size()));
    X509* leaf = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    const bool used = leaf != nullptr && SSL_CTX_use_certificate(ctx.get(), leaf) == 1;
    X509_free(leaf);
    while (used) {
      X509* intermediate = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
      if (intermediate == nullptr) break;
      if (SSL_CTX_add0_chain_cert(ctx.get(), intermediate) != 1) X509_free(intermediate);
    }
    BIO_free(bio);
    ERR_clear_error();
    if (!used) return absl::InvalidArgumentError("TLS: tls_cert holds no usable certificate");
    bio = BIO_new_mem_buf(tls.private_key.data(), static_cast<int>(tls.private_key.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    const bool key_used =
        key != nullptr && SSL_CTX_use_PrivateKey(ctx.get(), key) == 1 && SSL_CTX_check_private_key(ctx.get()) == 1;
    EVP_PKEY_free(key);
    if (!key_used) return absl::InvalidArgumentError(absl::StrCat("TLS: tls_key: ", TakeOpenSslErrors()));
  }
  return ctx;
}

class Tls final : public Transport {
 public:
  Tls(int fd, CtxPtr ctx, SSL* ssl) : Transport(fd), ctx_(std::move(ctx)), ssl_(ssl) {}
  ~Tls() override {
    SSL_free(ssl_);
    close(fd_);
  }

  // Advances the handshake: true when done; false to wait for want_ (or
  // on failure, with error_ set and `failed`).
  bool Handshake(bool* failed) {
    ERR_clear_error();
    errno = 0;
    const int r = SSL_connect(ssl_);
    if (r == 1) return true;
    if (Blocked(r, &handshake_want_)) return false;
    *failed = true;
    const long verify = SSL_get_verify_result(ssl_);
    if (verify != X509_V_OK) {
      TakeOpenSslErrors();
      failure_ = verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH
                     ? tls::ConnectFailure::kServerNameMismatch
                     : tls::ConnectFailure::kServerUntrusted;
      error_ = absl::StrCat("TLS handshake failed: the daemon's certificate: ", X509_verify_cert_error_string(verify));
    }
    return false;
  }

  ssize_t Read(char* buffer, size_t size) override {
    ERR_clear_error();
    errno = 0;
    const int n = SSL_read(ssl_, buffer, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    read_want_ = 0;
    if (n > 0) return n;
    return Blocked(n, &read_want_) ? 0 : -1;
  }

  ssize_t Write(const char* data, size_t size) override {
    if (size == 0) return 0;
    ERR_clear_error();
    errno = 0;
    const int n = SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    write_want_ = 0;
    if (n > 0) return n;
    return Blocked(n, &write_want_) ? 0 : -1;
  }

  // Reading is always wanted; writing when there is output, or when a read
  // (or the handshake) can only go on once the socket takes bytes.
  short PollEvents(bool have_output) const override {
    const bool write = have_output || read_want_ == SSL_ERROR_WANT_WRITE || handshake_want_ == SSL_ERROR_WANT_WRITE;
    return write ? POLLIN | POLLOUT : POLLIN;
  }

  bool ReadWaitsForWrite() const override { return read_want_ == SSL_ERROR_WANT_WRITE; }

  // Done with the handshake: its wait no longer counts.
  void HandshakeDone() { handshake_want_ = 0; }

 private:
  // For a result <= 0: whether the call is only waiting for the socket
  // (`want` says which way); else error_ and failure_ say why it ended.
  bool Blocked(int result, int* want) {
    const int error = SSL_get_error(ssl_, result);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      *want = error;
      return true;
    }
    *want = 0;
    if (!error_.empty()) return false;
    bool refused = false;
    const std::string reasons = TakeOpenSslErrors(&refused);
    if (error == SSL_ERROR_ZERO_RETURN) {
      error_ = "the daemon closed the TLS connection";
    } else if (error == SSL_ERROR_SYSCALL) {
      error_ = errno != 0 ? absl::StrCat("TLS: ", std::strerror(errno)) : "the daemon closed the connection";
      failure_ = tls::ConnectFailure::kRefusedByServer;
    } else {
      error_ = absl::StrCat("TLS: ", reasons.empty() ? "error " + std::to_string(error) : reasons);
    }
    if (refused) failure_ = tls::ConnectFailure::kRefusedByServer;
    return false;
  }

  CtxPtr ctx_;
  SSL* ssl_;
  // What each kind of call waits for (SSL_ERROR_WANT_READ or _WRITE; 0:
  // nothing): a read may wait for the socket to take bytes, and the other
  // way round.
  int handshake_want_ = 0;
  int read_want_ = 0;
  int write_want_ = 0;
};

bool IsIpAddress(const std::string& host) {
  in6_addr address;
  return inet_pton(AF_INET, host.c_str(), &address) == 1 || inet_pton(AF_INET6, host.c_str(), &address) == 1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Transport>> TlsClientHandshake(int fd, const tls::TlsMaterial& tls,
                                                              const std::string& host, absl::Time deadline,
                                                              int cancel_fd, tls::ConnectFailure* failure) {
  *failure = tls::ConnectFailure::kOther;
  absl::StatusOr<CtxPtr> ctx = MakeContext(tls);
  if (!ctx.ok()) {
    close(fd);
    return ctx.status();
  }
  SSL* ssl = SSL_new(ctx->get());
  if (ssl == nullptr) {
    close(fd);
    return absl::InternalError(absl::StrCat("TLS: ", TakeOpenSslErrors()));
  }
  auto transport = std::make_unique<Tls>(fd, std::move(*ctx), ssl);
  BIO* bio = BIO_new(NoSignalSocketMethod());
  if (bio == nullptr) return absl::InternalError(absl::StrCat("TLS: ", TakeOpenSslErrors()));
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  SSL_set_bio(ssl, bio, bio);
  SSL_set_alpn_protos(ssl, kAlpnH2, sizeof(kAlpnH2));
  if (IsIpAddress(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, host.c_str());
    SSL_set1_host(ssl, host.c_str());
  }
  bool failed = false;
  while (!transport->Handshake(&failed)) {
    if (failed) {
      *failure = transport->failure();
      return absl::UnavailableError(transport->error());
    }
    pollfd p[2] = {{fd, transport->PollEvents(false), 0}, {cancel_fd, POLLIN, 0}};
    const int ready = poll(p, cancel_fd >= 0 ? 2 : 1, MillisLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return absl::UnavailableError("TLS handshake: no answer before the deadline");
    if (ready < 0) return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
    if (cancel_fd >= 0 && (p[1].revents & POLLIN) != 0) return absl::CancelledError("cancelled in the TLS handshake");
  }
  transport->HandshakeDone();
  const unsigned char* protocol = nullptr;
  unsigned int length = 0;
  SSL_get0_alpn_selected(ssl, &protocol, &length);
  if (length != 2 || std::memcmp(protocol, "h2", 2) != 0) {
    return absl::UnavailableError("TLS: the daemon did not agree to HTTP/2 (ALPN h2)");
  }
  return transport;
}

}  // namespace gpusched::h2
