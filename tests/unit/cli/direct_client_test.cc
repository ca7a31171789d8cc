// The CLI's client (gRPC on the wire, without the gRPC library: unary
// calls over HTTP/2 with nghttp2, streams with common/io/h2) against a real
// in-process gRPC server playing gpuschedd: requests arrive intact, the
// daemon's errors keep their message, and a missing daemon is told apart
// from one that said no.
#include "cli/direct_client.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <mutex>
#include <thread>

#include "cli/errors.h"
#include "cli/h2_unary_call.h"
#include "common/io/tls/grpc_credentials.h"
#include "common/replica_addresses.h"
#include "gpusched/v1/scheduler.grpc.pb.h"
#include "test_context.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"

using namespace gpusched;
using namespace gpusched::cli;
using namespace gpusched::cli::testing;

namespace {

constexpr uint64_t kSlowJob = 555;  // FakeScheduler answers GetJob for it after 2 s

class FakeScheduler final : public v1::Scheduler::Service {
 public:
  std::mutex mu;
  std::vector<v1::SubmitJobRequest> submits;
  grpc::Status get_status = grpc::Status::OK;

  grpc::Status SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest* request,
                         v1::SubmitJobResponse* response) override {
    std::lock_guard<std::mutex> lock(mu);
    submits.push_back(*request);
    response->mutable_job()->set_id(100 + submits.size());
    return grpc::Status::OK;
  }

  std::string standby_for;  // answers UNAVAILABLE naming this replica as the active one
  int list_size = 0;        // ListJobs: one page of this many jobs instead of two of one

  grpc::Status GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request, v1::Job* job) override {
    if (!standby_for.empty()) {
      context->AddTrailingMetadata(kLeaderMetadata, standby_for);
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "this gpuschedd is a standby");
    }
    if (!get_status.ok()) return get_status;
    if (request->job_id() == kSlowJob) {  // a daemon that takes its time
      std::this_thread::sleep_for(std::chrono::seconds(2));
      return grpc::Status::OK;
    }
    if (request->job_id() != 101) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "job " + std::to_string(request->job_id()) + " not found");
    }
    job->set_id(101);
    job->set_state(gets_++ == 0 ? v1::JOB_STATE_RUNNING : v1::JOB_STATE_COMPLETED);
    return grpc::Status::OK;
  }

  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override {
    if (list_size > 0) {
      for (int i = 1; i <= list_size; ++i) {
        v1::Job* job = response->add_jobs();
        job->set_id(i);
        job->mutable_spec()->add_argv(std::string(100, 'x'));
      }
      return grpc::Status::OK;
    }
    // Two pages of one job each.
    response->add_jobs()->set_id(request->page_token().empty() ? 1 : 2);
    if (request->page_token().empty()) response->set_next_page_token("second");
    return grpc::Status::OK;
  }

  grpc::Status WatchJobs(grpc::ServerContext* context, const v1::WatchJobsRequest* request,
                         grpc::ServerWriter<v1::JobEvent>* writer) override {
    for (v1::JobState state : {v1::JOB_STATE_RUNNING, v1::JOB_STATE_COMPLETED, v1::JOB_STATE_FAILED}) {
      v1::JobEvent event;
      event.set_job_id(request->job_ids(0));
      event.set_state(state);
      if (!writer->Write(event)) break;
    }
    // Then stay open, as a real watch does, until the client goes away.
    while (!context->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return grpc::Status::OK;
  }

 private:
  int gets_ = 0;
};

struct Server {
  FakeScheduler service;
  std::unique_ptr<grpc::Server> server;
  std::string address;
  // On a loopback port, or on the Unix socket `unix_address` names.
  explicit Server(const std::string& unix_address = "",
                  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials()) {
    int port = 0;
    grpc::ServerBuilder builder;
    if (unix_address.empty()) {
      builder.AddListeningPort("127.0.0.1:0", credentials, &port);
    } else {
      builder.AddListeningPort(unix_address, credentials);
    }
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    REQUIRE(server != nullptr);
    address = unix_address.empty() ? "127.0.0.1:" + std::to_string(port) : unix_address;
  }
  ~Server() { server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1)); }
};

// A TCP socket bound to a free loopback port, `address` its HOST:PORT; -1
// when it cannot be bound.
int BoundLoopbackSocket(std::string* address) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  return fd;
}

// A port nobody listens on: bound, read, released.
// A plain connection to `address`, given 5 s to connect.
absl::StatusOr<std::unique_ptr<H2Connection>> DialPlain(const std::string& address) {
  tls::ConnectFailure failure;
  return H2Connection::Dial(address, std::nullopt, absl::Now() + absl::Seconds(5), &failure);
}

std::string SlowGetJob() {
  v1::GetJobRequest request;
  request.set_job_id(kSlowJob);
  return request.SerializeAsString();
}

std::string DeadAddress() {
  std::string address;
  const int fd = BoundLoopbackSocket(&address);
  if (fd >= 0) close(fd);
  return address;
}

Invocation RunAgainst(const std::vector<std::string>& args, const ClientFactory& client) {
  FakeHost host;
  LocalContext ctx = host.Context();
  ctx.sleep = [](absl::Duration d) { absl::SleepFor(d); };
  std::ostringstream out, err;
  Invocation run;
  run.exit_code = RunCli(args, ctx, client, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

}  // namespace

TEST_CASE("a daemon that is not there is unreachable: exit 3 with the address") {
  const std::string address = DeadAddress();
  auto client = MakeSchedulerClient({address, std::nullopt});
  const absl::Time start = absl::Now();
  auto job = client->GetJob(1);
  CHECK(absl::Now() - start < absl::Seconds(5));  // refused at once, not after the deadline
  REQUIRE_FALSE(job.ok());
  CHECK(IsUnreachableError(job.status()));

  Invocation run = RunAgainst({"--addr", address, "status"}, ClientFactory(MakeSchedulerClient));
  CHECK(run.exit_code == 3);
  CHECK(run.err ==
        "gpusched: cannot reach gpuschedd at " + address + " (is it running? set --addr or GPUSCHED_ADDR)\n");
}

TEST_CASE("requests reach the daemon intact and its refusals keep their message") {
  Server server;
  Invocation run =
      RunAgainst({"submit", "--addr", server.address, "--gpus", "2", "--env", "A=1", "--", "python", "train.py"},
                 ClientFactory(MakeSchedulerClient));
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Submitted job 101\n");
  REQUIRE(server.service.submits.size() == 1);
  const v1::SubmitJobRequest& request = server.service.submits[0];
  CHECK(request.spec().argv_size() == 2);
  CHECK(request.spec().resources().gpus() == 2);
  CHECK(request.spec().env().at("A") == "1");
  CHECK(request.spec().user().empty());  // the daemon's to decide, from who proved to call
  CHECK_FALSE(request.client_request_id().empty());

  run = RunAgainst({"status", "--addr", server.address, "42"}, ClientFactory(MakeSchedulerClient));
  CHECK(run.exit_code == 1);
  CHECK(run.err == "gpusched: job 42 not found\n");

  // UNAVAILABLE from a daemon that answered is its own message, not "cannot reach".
  server.service.get_status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "gpuschedd is shutting down");
  run = RunAgainst({"status", "--addr", server.address, "42"}, ClientFactory(MakeSchedulerClient));
  CHECK(run.exit_code == 1);
  CHECK(run.err == "gpusched: gpuschedd is shutting down\n");
}

TEST_CASE("the job list pages through ListJobs") {
  Server server;
  auto client = MakeSchedulerClient({server.address, std::nullopt});
  auto all = ListAllJobs(*client, v1::ListJobsRequest());
  REQUIRE(all.ok());
  REQUIRE(all->jobs_size() == 2);
  CHECK(all->jobs(0).id() == 1);
  CHECK(all->jobs(1).id() == 2);
  CHECK(all->next_page_token().empty());
}

TEST_CASE("a watch ends when the caller has seen enough, or at its deadline") {
  Server server;
  auto client = MakeSchedulerClient({server.address, std::nullopt});
  v1::WatchJobsRequest request;
  request.add_job_ids(5);
  std::vector<v1::JobState> seen;
  absl::Status status = client->WatchJobs(request, absl::Seconds(10), [&](const v1::JobEvent& event) {
    seen.push_back(event.state());
    return event.state() != v1::JOB_STATE_COMPLETED;
  });
  CHECK(status.ok());
  CHECK(seen == std::vector<v1::JobState>{v1::JOB_STATE_RUNNING, v1::JOB_STATE_COMPLETED});

  seen.clear();
  const absl::Time start = absl::Now();
  status = client->WatchJobs(request, absl::Milliseconds(300), [&](const v1::JobEvent& event) {
    seen.push_back(event.state());
    return true;
  });
  CHECK(status.ok());
  CHECK(seen.size() == 3);
  CHECK(absl::Now() - start < absl::Seconds(5));
}

TEST_CASE("submit --wait ends with the job (a watch)") {
  Server server;
  Invocation run =
      RunAgainst({"--addr", server.address, "submit", "--wait", "--", "true"}, ClientFactory(MakeSchedulerClient));
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Submitted job 101\nJob 101 COMPLETED\n");
}

// A server on a Unix socket that takes only gRPC, as a daemon older than
// local calls: gRPC closes the local call's connection unread, and the
// client calls again over gRPC.
TEST_CASE(
    "over a Unix socket, a server that takes only gRPC is called over gRPC; the service path is the generated one") {
  CHECK(std::string(kSchedulerServicePath) == "/" + std::string(v1::Scheduler::service_full_name()) + "/");
  char dir[] = "/tmp/gpusched-h2-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string socket = std::string("unix:") + dir + "/d.sock";
  {
    Server server(socket);
    auto client = MakeSchedulerClient({socket, std::nullopt});
    auto job = client->GetJob(101);
    REQUIRE(job.ok());
    CHECK(job->id() == 101);
    // The connection is kept: a second call on it.
    auto missing = client->GetJob(7);
    CHECK(missing.status().code() == absl::StatusCode::kNotFound);
    CHECK(missing.status().message() == "job 7 not found");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("the client: a reply of megabytes arrives whole, and messages keep every character") {
  Server server;
  server.service.list_size = 40'000;  // about 5 MB: past every default HTTP/2 window
  auto client = MakeSchedulerClient({server.address, std::nullopt});
  auto page = client->ListJobs(v1::ListJobsRequest());
  REQUIRE(page.ok());
  REQUIRE(page->jobs_size() == 40'000);
  CHECK(page->jobs(39'999).id() == 40'000);

  const std::string odd = "job 9: 100% done, \"quoted\", tab\there, ünïcödé";
  server.service.get_status = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, odd);
  auto job = client->GetJob(9);
  CHECK(job.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(job.status().message() == odd);
}

TEST_CASE("the client goes from a standby to the replica it names") {
  Server active;
  Server standby;
  standby.service.standby_for = active.address;
  // The standby first: the call moves on to the active one it names.
  auto client = MakeSchedulerClient({standby.address + "," + DeadAddress() + "," + active.address, std::nullopt});
  auto job = client->GetJob(101);
  REQUIRE(job.ok());
  CHECK(job->id() == 101);
}

TEST_CASE("a direct call past its deadline, or to something that is not gRPC, fails with why, and never hangs") {
  Server server;
  auto connection = DialPlain(server.address);
  REQUIRE(connection.ok());
  const absl::Time start = absl::Now();
  auto reply =
      (*connection)->Call("/gpusched.v1.Scheduler/GetJob", SlowGetJob(), absl::Now() + absl::Milliseconds(200));
  // Either the server, told the deadline, or the client itself gave up.
  const absl::StatusCode code = reply.ok() ? reply->status.code() : reply.status().code();
  CHECK(code == absl::StatusCode::kDeadlineExceeded);
  CHECK(absl::Now() - start < absl::Seconds(2));

  // A method the server does not have: its own status, over a connection that still works.
  auto fresh = DialPlain(server.address);
  REQUIRE(fresh.ok());
  auto unknown = (*fresh)->Call("/gpusched.v1.Scheduler/NoSuchMethod", "", absl::Now() + absl::Seconds(5));
  REQUIRE(unknown.ok());
  CHECK(unknown->status.code() == absl::StatusCode::kUnimplemented);

  // A listener that answers with something other than HTTP/2.
  std::string http1_address;
  const int listener = BoundLoopbackSocket(&http1_address);
  REQUIRE(listener >= 0);
  REQUIRE(listen(listener, 1) == 0);
  std::thread http1([listener] {
    const int fd = accept(listener, nullptr, nullptr);
    const std::string answer = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
    close(fd);
  });
  auto garbage = DialPlain(http1_address);
  REQUIRE(garbage.ok());
  auto answer = (*garbage)->Call("/gpusched.v1.Scheduler/GetJob", "", absl::Now() + absl::Seconds(5));
  http1.join();
  close(listener);
  CHECK(answer.status().code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("a direct call longer than a second is answered, and its connection serves the next call") {
  // The client holds back its acknowledgements of the daemon's SETTINGS and
  // PING for a second of a call: a long call must still send them and end well.
  Server server;
  auto connection = DialPlain(server.address);
  REQUIRE(connection.ok());
  auto reply = (*connection)->Call("/gpusched.v1.Scheduler/GetJob", SlowGetJob(), absl::Now() + absl::Seconds(10));
  REQUIRE(reply.ok());
  CHECK(reply->status.ok());
  v1::GetJobRequest next;
  next.set_job_id(101);
  auto again =
      (*connection)->Call("/gpusched.v1.Scheduler/GetJob", next.SerializeAsString(), absl::Now() + absl::Seconds(5));
  REQUIRE(again.ok());
  REQUIRE(again->status.ok());
  v1::Job job;
  REQUIRE(job.ParseFromString(again->response));
  CHECK(job.id() == 101);
}

TEST_CASE(
    "over TLS: unary calls and a watch; a daemon not trusted, or spoken to in plaintext, is unreachable, "
    "saying why") {
  gpusched::testing::TempDir pki;
  gpusched::testing::TempDir other_pki;
  const gpusched::testing::TestCa ca(pki.path().string(), "cluster-ca");
  const gpusched::testing::TestCa other(other_pki.path().string(), "other-ca");
  const gpusched::testing::CertAndKey daemon = ca.IssueServer("gpuschedd");
  auto server_tls = tls::LoadTls({.cert = daemon.cert, .key = daemon.key, .ca = ""}, tls::kServerTlsKeys);
  REQUIRE(server_tls.ok());
  Server server("", tls::ServerCredentials(*server_tls));
  auto trusting = tls::LoadTls({.cert = "", .key = "", .ca = ca.cert()}, tls::kClientTlsKeys);
  REQUIRE(trusting.ok());

  auto client = MakeSchedulerClient({server.address, *trusting});
  auto job = client->GetJob(101);
  REQUIRE(job.ok());
  CHECK(job->id() == 101);
  v1::WatchJobsRequest request;
  request.add_job_ids(5);
  std::vector<v1::JobState> seen;
  CHECK(client
            ->WatchJobs(request, absl::Seconds(10),
                        [&](const v1::JobEvent& event) {
                          seen.push_back(event.state());
                          return event.state() != v1::JOB_STATE_COMPLETED;
                        })
            .ok());
  CHECK(seen == std::vector<v1::JobState>{v1::JOB_STATE_RUNNING, v1::JOB_STATE_COMPLETED});

  auto distrusting = tls::LoadTls({.cert = "", .key = "", .ca = other.cert()}, tls::kClientTlsKeys);
  REQUIRE(distrusting.ok());
  auto untrusted = MakeSchedulerClient({server.address, *distrusting})->GetJob(101);
  CHECK(IsUnreachableError(untrusted.status()));
  CHECK_THAT(std::string(untrusted.status().message()), Catch::Contains("not signed by the CA in tls_ca"));

  auto plaintext = MakeSchedulerClient({server.address, std::nullopt})->GetJob(101);
  CHECK(IsUnreachableError(plaintext.status()));
  CHECK_THAT(std::string(plaintext.status().message()), Catch::Contains("if it serves TLS, set tls_ca"));
}
