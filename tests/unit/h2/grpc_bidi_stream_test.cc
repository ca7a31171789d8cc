#include "common/io/h2/grpc_bidi_stream.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <thread>

#include "common/io/tls/grpc_credentials.h"
#include "gpusched/v1/agent.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"

using namespace gpusched;
using gpusched::h2::GrpcBidiStream;
using gpusched::tls::ConnectFailure;

namespace {

constexpr char kMethod[] = "/gpusched.v1.AgentGateway/Connect";

// A real gRPC server for the stream to talk to. Connect echoes: a
// heartbeat gets its ack, a session's stdout comes back as that session's
// stdin. When the client half-closes it ends with `end_status`, and names
// how many messages it echoed in trailing metadata.
class EchoGateway final : public v1::AgentGateway::Service {
 public:
  grpc::Status end_status = grpc::Status::OK;
  std::atomic<bool> saw_cancel{false};
  std::atomic<bool> refuse{false};
  std::atomic<int> written{0};  // messages handed to gRPC's Write

  grpc::Status Connect(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<v1::DaemonMessage, v1::AgentMessage>* stream) override {
    if (refuse) {
      context->AddTrailingMetadata("gpusched-leader", "127.0.0.1:9");
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "this replica is a standby: 100% sure");
    }
    v1::AgentMessage in;
    int echoed = 0;
    while (stream->Read(&in)) {
      v1::DaemonMessage out;
      if (in.has_heartbeat()) out.mutable_heartbeat_ack()->set_seq(in.heartbeat().seq());
      if (in.has_session_output()) {
        out.mutable_session_input()->set_session_id(in.session_output().session_id());
        out.mutable_session_input()->set_stdin(in.session_output().stdout());
      }
      stream->Write(out);
      ++written;
      ++echoed;
    }
    if (context->IsCancelled()) {
      saw_cancel = true;
      return grpc::Status::CANCELLED;
    }
    context->AddTrailingMetadata("echoed", std::to_string(echoed));
    return end_status;
  }
};

struct Server {
  EchoGateway gateway;
  std::unique_ptr<grpc::Server> server;
  int port = 0;

  // `listen`: HOST:0 (a port chosen by the system) or unix:PATH.
  explicit Server(std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials(),
                  const std::string& listen = "127.0.0.1:0") {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(listen, credentials, &port);
    builder.RegisterService(&gateway);
    server = builder.BuildAndStart();
    REQUIRE(server != nullptr);
  }
  ~Server() { server->Shutdown(); }
  std::string address(const std::string& host = "127.0.0.1") const { return host + ":" + std::to_string(port); }
};

GrpcBidiStream::Options Plain(const std::string& target) {
  return {.target = target, .tls = std::nullopt, .method = kMethod, .user_agent = "h2-test"};
}

std::string Heartbeat(int64_t seq) {
  v1::AgentMessage message;
  message.mutable_heartbeat()->set_seq(seq);
  return message.SerializeAsString();
}

std::string Output(const std::string& bytes) {
  v1::AgentMessage message;
  message.mutable_session_output()->set_session_id(7);
  message.mutable_session_output()->set_stdout(bytes);
  return message.SerializeAsString();
}

v1::DaemonMessage ReadOne(GrpcBidiStream& stream) {
  std::string bytes;
  REQUIRE(stream.Read(&bytes));
  v1::DaemonMessage message;
  REQUIRE(message.ParseFromString(bytes));
  return message;
}

}  // namespace

TEST_CASE(
    "a bidirectional call against a real gRPC server: messages both ways in order, half-close, status and "
    "trailers") {
  Server server;
  server.gateway.end_status = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "done: 3 of 3");
  GrpcBidiStream stream(Plain(server.address()));
  // Written before the connection is up: they go out once it is.
  REQUIRE(stream.Write(Heartbeat(1)));
  REQUIRE(stream.Write(Heartbeat(2)));
  CHECK(ReadOne(stream).heartbeat_ack().seq() == 1);
  CHECK(ReadOne(stream).heartbeat_ack().seq() == 2);
  // Larger than HTTP/2's default window of 64 KiB, both ways: flow control
  // and window updates in play.
  const std::string big(3 << 20, 'q');
  REQUIRE(stream.Write(Output(big)));
  CHECK(ReadOne(stream).session_input().stdin() == big);

  REQUIRE(stream.WritesDone());
  CHECK_FALSE(stream.Write(Heartbeat(3)));  // half-closed
  std::string extra;
  CHECK_FALSE(stream.Read(&extra));
  const GrpcBidiStream::End end = stream.Finish();
  CHECK(end.status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(end.status.message() == "done: 3 of 3");
  CHECK(end.metadata.at("echoed") == "3");
  CHECK(end.failure == ConnectFailure::kOther);
}

TEST_CASE("a reader that falls behind holds the server back: what waits unread stays within the window") {
  Server server;
  GrpcBidiStream stream(Plain(server.address()));
  constexpr int kMessages = 48;
  const std::string mib(1 << 20, 'm');
  // The server echoes each message as it reads it; nobody reads the echoes yet.
  std::thread writer([&] {
    for (int i = 0; i < kMessages; ++i) {
      if (!stream.Write(Output(mib))) return;
    }
  });
  int written_before = -1;
  for (int i = 0; i < 100; ++i) {  // until the server's writes stop coming
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const int now = server.gateway.written;
    if (now == written_before && now > 0) break;
    written_before = now;
  }
  // 16 MiB of window and what gRPC's own buffers hold; with the window
  // opened as bytes arrive, all 48 would have been sent into our memory.
  CHECK(server.gateway.written < kMessages);
  INFO("echoed before reading: " << server.gateway.written);
  for (int i = 0; i < kMessages; ++i) {
    INFO("message " << i);
    REQUIRE(ReadOne(stream).session_input().stdin().size() == mib.size());
  }
  writer.join();
  REQUIRE(stream.WritesDone());
  std::string rest;
  CHECK_FALSE(stream.Read(&rest));
  CHECK(stream.Finish().status.ok());
  CHECK(server.gateway.written == kMessages);
}

TEST_CASE("a refusal in the answer's only headers comes back as the call's status with its metadata") {
  Server server;
  server.gateway.refuse = true;
  GrpcBidiStream stream(Plain(server.address()));
  // The server may have ended the call before this write: false then, as
  // gRPC's would be.
  stream.Write(Heartbeat(1));
  std::string message;
  CHECK_FALSE(stream.Read(&message));
  const GrpcBidiStream::End end = stream.Finish();
  CHECK(end.status.code() == absl::StatusCode::kUnavailable);
  CHECK(end.status.message() == "this replica is a standby: 100% sure");
  CHECK(end.metadata.at("gpusched-leader") == "127.0.0.1:9");
}

TEST_CASE("Cancel ends a call in progress, and the server sees it cancelled") {
  Server server;
  GrpcBidiStream stream(Plain(server.address()));
  REQUIRE(stream.Write(Heartbeat(1)));
  CHECK(ReadOne(stream).heartbeat_ack().seq() == 1);
  stream.Cancel();
  std::string message;
  CHECK_FALSE(stream.Read(&message));
  CHECK(stream.Finish().status.code() == absl::StatusCode::kCancelled);
  CHECK_FALSE(stream.Write(Heartbeat(2)));
  for (int i = 0; i < 500 && !server.gateway.saw_cancel; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(server.gateway.saw_cancel);
}

TEST_CASE("a call over a Unix socket") {
  testing::TempDir dir;
  const std::string path = dir / "gw.sock";
  Server server(grpc::InsecureServerCredentials(), "unix:" + path);
  REQUIRE(std::filesystem::exists(path));
  GrpcBidiStream stream(Plain("unix:" + path));
  REQUIRE(stream.Write(Heartbeat(5)));
  CHECK(ReadOne(stream).heartbeat_ack().seq() == 5);
  REQUIRE(stream.WritesDone());
  CHECK(stream.Finish().status.ok());
}

TEST_CASE("nobody listening: Unavailable, naming the address") {
  const int holder = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  socklen_t size = sizeof(address);
  getsockname(holder, reinterpret_cast<sockaddr*>(&address), &size);
  const std::string target = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  GrpcBidiStream stream(Plain(target));
  // As with gRPC, the first write already says that the call cannot start.
  CHECK_FALSE(stream.Write(Heartbeat(1)));
  std::string message;
  CHECK_FALSE(stream.Read(&message));
  const GrpcBidiStream::End end = stream.Finish();
  close(holder);
  CHECK(end.status.code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(end.status.message()), Catch::Contains(target) && Catch::Contains("refused"));
  CHECK(end.failure == ConnectFailure::kOther);
}

TEST_CASE("TLS: a call with mutual TLS, and each way a handshake fails says what it means") {
  testing::TempDir dir;
  testing::TempDir other_dir;
  testing::TestCa ca(dir.path().string(), "cluster");
  testing::TestCa other(other_dir.path().string(), "other");
  const testing::CertAndKey daemon = ca.IssueServer("gpuschedd");
  const testing::CertAndKey agent = ca.IssueClient("node:n1");
  const testing::CertAndKey stranger = other.IssueClient("node:n1");
  auto server_tls = tls::LoadTls({.cert = daemon.cert, .key = daemon.key, .ca = ca.cert()}, tls::kServerTlsKeys);
  REQUIRE(server_tls.ok());
  Server server(tls::ServerCredentials(*server_tls), "0.0.0.0:0");
  auto client = [&](const tls::TlsFiles& files) {
    auto material = tls::LoadTls(files, tls::kClientTlsKeys);
    REQUIRE(material.ok());
    return *material;
  };
  auto call = [&](const std::string& target, const std::optional<tls::TlsMaterial>& material) {
    GrpcBidiStream stream({.target = target, .tls = material, .method = kMethod, .user_agent = "h2-test"});
    stream.Write(Heartbeat(9));
    std::string bytes;
    const bool answered = stream.Read(&bytes);
    if (answered) stream.WritesDone();
    while (stream.Read(&bytes)) {
    }
    GrpcBidiStream::End end = stream.Finish();
    if (answered) CHECK(end.status.ok());
    return end;
  };

  SECTION("a good certificate, checked against the address dialed") {
    const auto end = call(server.address("127.0.0.1"), client({.cert = agent.cert, .key = agent.key, .ca = ca.cert()}));
    INFO(end.status.ToString());
    CHECK(end.status.ok());
    CHECK(end.metadata.at("echoed") == "1");
    CHECK(
        call(server.address("localhost"), client({.cert = agent.cert, .key = agent.key, .ca = ca.cert()})).status.ok());
  }
  SECTION("our certificate from another CA: the daemon refuses it") {
    const auto end = call(server.address(), client({.cert = stranger.cert, .key = stranger.key, .ca = ca.cert()}));
    INFO(end.status.ToString());
    CHECK(end.status.code() == absl::StatusCode::kUnavailable);
    CHECK(end.failure == ConnectFailure::kRefusedByServer);
  }
  SECTION("no certificate of ours") {
    const auto end = call(server.address(), client({.cert = "", .key = "", .ca = ca.cert()}));
    INFO(end.status.ToString());
    CHECK(end.status.code() == absl::StatusCode::kUnavailable);
    CHECK(end.failure == ConnectFailure::kRefusedByServer);
  }
  SECTION("the daemon's certificate from a CA we do not trust") {
    const auto end = call(server.address(), client({.cert = agent.cert, .key = agent.key, .ca = other.cert()}));
    INFO(end.status.ToString());
    CHECK(end.status.code() == absl::StatusCode::kUnavailable);
    CHECK(end.failure == ConnectFailure::kServerUntrusted);
  }
  SECTION("the daemon's certificate does not name the address dialed") {
    // Loopback answers on 127.0.0.2 too; the certificate names 127.0.0.1.
    const auto end = call(server.address("127.0.0.2"), client({.cert = agent.cert, .key = agent.key, .ca = ca.cert()}));
    INFO(end.status.ToString());
    CHECK(end.status.code() == absl::StatusCode::kUnavailable);
    CHECK(end.failure == ConnectFailure::kServerNameMismatch);
  }
  SECTION("plaintext to a TLS port") {
    const auto end = call(server.address(), std::nullopt);
    INFO(end.status.ToString());
    CHECK(end.status.code() == absl::StatusCode::kUnavailable);
    CHECK(end.failure == ConnectFailure::kPlaintextClosed);
  }
}

TEST_CASE("Cancel stops a TLS handshake that gets no answer") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path().string(), "cluster");
  // Accepts connections (the kernel's backlog) and never says a word.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  REQUIRE(listen(listener, 4) == 0);
  socklen_t size = sizeof(address);
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size);
  auto material = tls::LoadTls({.cert = "", .key = "", .ca = ca.cert()}, tls::kClientTlsKeys);
  REQUIRE(material.ok());
  GrpcBidiStream stream({.target = "127.0.0.1:" + std::to_string(ntohs(address.sin_port)),
                         .tls = *material,
                         .method = kMethod,
                         .user_agent = "h2-test",
                         .connect_timeout = absl::Hours(1)});
  // A write waits for the call to start, which it never does, until Cancel.
  std::atomic<bool> written{true};
  std::thread writer([&] { written = stream.Write(Heartbeat(1)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stream.Cancel();
  writer.join();
  CHECK_FALSE(written);
  const GrpcBidiStream::End end = stream.Finish();
  close(listener);
  CHECK(end.status.code() == absl::StatusCode::kCancelled);
}
