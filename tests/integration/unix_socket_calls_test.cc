// The daemon's Unix socket speaks two protocols: the CLI's local calls
// (common/io/local_call/frame.h) and gRPC for every other client. Each is
// driven here over a real socket of a real daemon, as its clients would,
// and with the garbage a broken or hostile local client could send.

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "common/io/local_call/frame.h"
#include "daemon/server/unix_listener.h"
#include "grpcpp/create_channel.h"
#include "tests/integration/socket_cli.h"
#include "tests/integration/test_cluster.h"
#include "tests/skip.h"
#include "tests/support/scarce_descriptors.h"

using namespace gpusched;
using gpusched::testing::CpuSeconds;
using gpusched::testing::ScarceDescriptors;
using gpusched::testing::SocketDir;
using gpusched::testing::TestCluster;
using gpusched::testing::ThisUser;

namespace {

// One raw client connection to the socket, blocking, with a 10 s limit on
// every wait so that a daemon that never answers fails the test instead of
// hanging it.
class RawConnection {
 public:
  explicit RawConnection(const std::string& path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    REQUIRE(connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0);
  }
  ~RawConnection() { close(fd_); }

  void Send(const std::string& bytes) {
    REQUIRE(send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
  }
  // The next reply; nullopt when the daemon closed the connection first.
  std::optional<local_call::Reply> Reply() {
    while (true) {
      auto reply = local_call::TakeReply(in_);
      REQUIRE(reply.ok());
      if (reply->has_value()) return std::move(**reply);
      if (!Read()) return std::nullopt;
    }
  }
  // Everything until the daemon closes the connection.
  std::string ReadToEnd() {
    while (Read()) {
    }
    return in_;
  }

 private:
  bool Read() {
    pollfd p{fd_, POLLIN, 0};
    REQUIRE(poll(&p, 1, 10'000) == 1);
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) return false;
    in_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string in_;
};

std::string Call(const std::string& method, const google::protobuf::MessageLite& request) {
  return local_call::EncodeRequest(method, request.SerializeAsString());
}

v1::SubmitJobRequest HeldJob() {
  v1::SubmitJobRequest request;
  request.mutable_spec()->add_argv("true");
  request.mutable_spec()->mutable_resources()->set_gpus(1);
  request.mutable_spec()->set_hold(true);
  return request;
}

// A daemon with one node that serves the CLI on a Unix socket.
struct SocketCluster {
  SocketDir dir;
  std::string socket = dir.socket();
  TestCluster cluster{{{"node-a", 2}}, {"--socket", socket}};
};

// A held job whose 1 MB script makes a job list far larger than a socket's
// buffers; submitted as local call on a connection of its own.
v1::SubmitJobRequest SubmitLargeScriptJob(const std::string& socket) {
  v1::SubmitJobRequest big = HeldJob();
  big.mutable_spec()->clear_argv();
  big.mutable_spec()->set_script("#!/bin/sh\n# " + std::string(1000 * 1000, 'x') + "\n");
  RawConnection c(socket);
  c.Send(std::string(local_call::kMagic) + Call("SubmitJob", big));
  std::optional<local_call::Reply> submitted = c.Reply();
  REQUIRE(submitted.has_value());
  REQUIRE(submitted->status.ok());
  return big;
}

}  // namespace

TEST_CASE("on the Unix socket, local calls and gRPC are both served, the caller known by uid in each",
          "[integration]") {
  const SocketCluster served;
  const std::string& socket = served.socket;

  RawConnection local(socket);
  local.Send(std::string(local_call::kMagic) + Call("SubmitJob", HeldJob()));
  std::optional<local_call::Reply> submitted = local.Reply();
  REQUIRE(submitted.has_value());
  REQUIRE(submitted->status.ok());
  v1::SubmitJobResponse response;
  REQUIRE(response.ParseFromString(submitted->message));
  const uint64_t id = response.job().id();
  CHECK(response.job().spec().user() == ThisUser());

  // The connection carries more calls, one after another.
  v1::GetJobRequest get;
  get.set_job_id(id);
  local.Send(Call("GetJob", get));
  std::optional<local_call::Reply> got = local.Reply();
  REQUIRE(got.has_value());
  REQUIRE(got->status.ok());
  v1::Job job;
  REQUIRE(job.ParseFromString(got->message));
  CHECK(job.state() == v1::JOB_STATE_PENDING);
  CHECK(job.spec().hold());

  // A call's own refusal leaves the connection open for the next one.
  get.set_job_id(id + 1000);
  local.Send(Call("GetJob", get));
  std::optional<local_call::Reply> missing = local.Reply();
  REQUIRE(missing.has_value());
  CHECK(missing->status == absl::NotFoundError(absl::StrCat("job ", id + 1000, " not found")));

  // gRPC on the same socket; the job it submits is the same user's.
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  auto stub = v1::Scheduler::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::SubmitJobResponse over_grpc;
  REQUIRE(stub->SubmitJob(&ctx, HeldJob(), &over_grpc).ok());
  CHECK(over_grpc.job().id() > id);
  CHECK(over_grpc.job().spec().user() == ThisUser());
  CHECK(served.cluster.GetJob(over_grpc.job().id()).state() == v1::JOB_STATE_PENDING);

  // The CLI, which speaks local calls here.
  testing::CommandResult status = testing::SocketCli(socket, "0", {"status", std::to_string(id)});
  CHECK(status.exit_code == 0);
  CHECK(absl::StrContains(status.out, "held"));
}

TEST_CASE("on the Unix socket, local calls that are wrong get a reason, and the daemon serves on", "[integration]") {
  const SocketCluster served;
  const std::string& socket = served.socket;
  const std::string magic(local_call::kMagic);

  // A silent client holds only its own connection.
  RawConnection silent(socket);

  {
    RawConnection c(socket);
    c.Send(magic + local_call::EncodeRequest("WatchJobs", ""));
    std::optional<local_call::Reply> stream = c.Reply();
    REQUIRE(stream.has_value());
    CHECK(stream->status.code() == absl::StatusCode::kUnimplemented);
    CHECK(absl::StrContains(stream->status.message(), "served over gRPC"));
    c.Send(local_call::EncodeRequest("SubmitJob", "\xff\xff\xff"));
    std::optional<local_call::Reply> garbled = c.Reply();
    REQUIRE(garbled.has_value());
    CHECK(garbled->status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(garbled->status.message(), "/gpusched.v1.Scheduler/SubmitJob could not be decoded"));
  }
  {
    // Framing that can never be a request: answered, then closed.
    RawConnection c(socket);
    c.Send(magic + local_call::EncodeRequest("../SubmitJob", ""));
    std::optional<local_call::Reply> refused = c.Reply();
    REQUIRE(refused.has_value());
    CHECK(refused->status == absl::InvalidArgumentError("local call: \"../SubmitJob\" is not a method name"));
    CHECK_FALSE(c.Reply().has_value());
  }
  {
    // Neither gRPC nor local calls.
    RawConnection c(socket);
    c.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(absl::StartsWith(c.ReadToEnd(), "gpuschedd: this socket speaks gRPC (HTTP/2) and gpusched's local calls"));
  }
  {
    // A request over 4 MiB is refused by its length, before it is sent.
    RawConnection c(socket);
    std::string head = local_call::EncodeRequest("SubmitJob", "");
    head[4] = 0;
    head[5] = 0;
    head[6] = 0x41;  // 0x00410000 bytes
    head[7] = 0;
    c.Send(magic + head);
    std::optional<local_call::Reply> too_big = c.Reply();
    REQUIRE(too_big.has_value());
    CHECK(too_big->status.code() == absl::StatusCode::kResourceExhausted);
  }

  RawConnection after(socket);
  after.Send(magic + Call("SubmitJob", HeldJob()));
  std::optional<local_call::Reply> answered = after.Reply();
  REQUIRE(answered.has_value());
  CHECK(answered->status.ok());
}

TEST_CASE("on the Unix socket, a request sent while a large reply is still unread is answered after it, both whole",
          "[integration]") {
  const SocketCluster served;
  const std::string& socket = served.socket;
  const std::string magic(local_call::kMagic);

  const v1::SubmitJobRequest big = SubmitLargeScriptJob(socket);

  // The first list's reply fills the socket and waits for us to read it;
  // the second request arrives meanwhile.
  RawConnection c(socket);
  c.Send(magic + Call("ListJobs", v1::ListJobsRequest()));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  v1::GetJobRequest get;
  get.set_job_id(1);
  c.Send(Call("GetJob", get));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  std::optional<local_call::Reply> listed = c.Reply();
  REQUIRE(listed.has_value());
  REQUIRE(listed->status.ok());
  v1::ListJobsResponse jobs;
  REQUIRE(jobs.ParseFromString(listed->message));
  REQUIRE(jobs.jobs_size() == 1);
  CHECK(jobs.jobs(0).spec().script() == big.spec().script());
  std::optional<local_call::Reply> got = c.Reply();
  REQUIRE(got.has_value());
  REQUIRE(got->status.ok());
  v1::Job job;
  REQUIRE(job.ParseFromString(got->message));
  CHECK(job.id() == 1);
}

TEST_CASE("on the Unix socket, a client that stops mid-request, or does not read its reply, is dropped after 10 s",
          "[integration]") {
  const SocketCluster served;
  const std::string& socket = served.socket;
  const std::string magic(local_call::kMagic);
  const v1::SubmitJobRequest big = SubmitLargeScriptJob(socket);

  RawConnection half_sent(socket);
  half_sent.Send(magic + Call("GetJob", v1::GetJobRequest()).substr(0, 5));
  RawConnection not_reading(socket);
  not_reading.Send(magic + Call("ListJobs", v1::ListJobsRequest()));
  std::this_thread::sleep_for(std::chrono::seconds(12));

  CHECK_FALSE(half_sent.Reply().has_value());  // closed, unanswered
  // What had fit in the socket's buffers before the daemon gave up, and no more.
  CHECK(not_reading.ReadToEnd().size() < big.spec().script().size());
}

TEST_CASE("on the Unix socket, a daemon out of file descriptors waits to accept instead of spinning, and serves again",
          "[integration]") {
  if (gpusched::testing::kSanitizedBuild) {
    GPUSCHED_SKIP("a sanitizer build cannot run short of file descriptors (UBSan's vptr check needs one)");
  }
  const SocketCluster served;
  const pid_t daemon = served.cluster.daemon_pid();
  {
    const ScarceDescriptors scarce(daemon, 2);
    std::vector<std::unique_ptr<RawConnection>> waiting;
    for (int i = 0; i < 10; ++i) waiting.push_back(std::make_unique<RawConnection>(served.socket));
    const double cpu_before = CpuSeconds(daemon);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    // A loop that polled the readable socket again at once would take a
    // core the whole time, and log at every turn.
    CHECK(CpuSeconds(daemon) - cpu_before < 0.5);
    const std::string log = served.cluster.DaemonLog();
    size_t warnings = 0;
    for (size_t at = log.find("accept: Too many open files"); at != std::string::npos;
         at = log.find("accept: Too many open files", at + 1)) {
      ++warnings;
    }
    CHECK(warnings == 1);
  }
  RawConnection after(served.socket);
  after.Send(std::string(local_call::kMagic) + Call("SubmitJob", HeldJob()));
  std::optional<local_call::Reply> answered = after.Reply();
  REQUIRE(answered.has_value());
  CHECK(answered->status.ok());
}

TEST_CASE("on the Unix socket, one uid holds at most 128 connections at once; the next is closed unanswered",
          "[integration]") {
  const SocketCluster served;
  const std::string magic(local_call::kMagic);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < server::UnixListener::kMaxConnectionsPerUid; ++i) {
    held.push_back(std::make_unique<RawConnection>(served.socket));
  }
  // Each of them is served...
  held.front()->Send(magic + Call("GetJob", v1::GetJobRequest()));
  REQUIRE(held.front()->Reply().has_value());
  // ...and one more is not.
  RawConnection one_more(served.socket);
  CHECK_FALSE(one_more.Reply().has_value());  // closed before it could say anything
  CHECK_THAT(served.cluster.DaemonLog(), Catch::Contains("connections; more are closed"));
  // Once one goes, a new one is served again.
  held.pop_back();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  RawConnection again(served.socket);
  again.Send(magic + Call("GetJob", v1::GetJobRequest()));
  CHECK(again.Reply().has_value());
}
