// The gRPC client against a real in-process gRPC server playing gpuschedd:
// requests arrive intact, the daemon's errors keep their message, and a
// missing daemon is told apart from one that said no.
#include "cli/grpc_client.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

#include "cli/errors.h"
#include "gpusched/v1/scheduler.grpc.pb.h"
#include "test_context.h"

using namespace gpusched;
using namespace gpusched::cli;
using namespace gpusched::cli::testing;

namespace {

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

  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest* request, v1::Job* job) override {
    if (!get_status.ok()) return get_status;
    if (request->job_id() != 101) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "job " + std::to_string(request->job_id()) + " not found");
    }
    job->set_id(101);
    job->set_state(gets_++ == 0 ? v1::JOB_STATE_RUNNING : v1::JOB_STATE_COMPLETED);
    return grpc::Status::OK;
  }

  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override {
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
  Server() {
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    REQUIRE(server != nullptr);
    address = "127.0.0.1:" + std::to_string(port);
  }
  ~Server() { server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1)); }
};

// A port nobody listens on: bound, read, released.
std::string DeadAddress() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

Invocation RunAgainst(const std::vector<std::string>& args) {
  FakeHost host;
  LocalContext ctx = host.Context();
  ctx.sleep = [](absl::Duration d) { absl::SleepFor(d); };
  std::ostringstream out, err;
  Invocation run;
  run.exit_code = RunCli(args, ctx, MakeGrpcSchedulerClient, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

}  // namespace

TEST_CASE("a daemon that is not there is unreachable: exit 3 with the address") {
  const std::string address = DeadAddress();
  auto client = MakeGrpcSchedulerClient({address, std::nullopt});
  const absl::Time start = absl::Now();
  auto job = client->GetJob(1);
  CHECK(absl::Now() - start < absl::Seconds(5));  // refused at once, not after the deadline
  REQUIRE_FALSE(job.ok());
  CHECK(IsUnreachableError(job.status()));

  Invocation run = RunAgainst({"--addr", address, "status"});
  CHECK(run.exit_code == 3);
  CHECK(run.err ==
        "gpusched: cannot reach gpuschedd at " + address + " (is it running? set --addr or GPUSCHED_ADDR)\n");
}

TEST_CASE("requests reach the daemon intact and its refusals keep their message") {
  Server server;
  Invocation run =
      RunAgainst({"submit", "--addr", server.address, "--gpus", "2", "--env", "A=1", "--", "python", "train.py"});
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

  run = RunAgainst({"status", "--addr", server.address, "42"});
  CHECK(run.exit_code == 1);
  CHECK(run.err == "gpusched: job 42 not found\n");

  // UNAVAILABLE from a daemon that answered is its own message, not "cannot reach".
  server.service.get_status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "gpuschedd is shutting down");
  run = RunAgainst({"status", "--addr", server.address, "42"});
  CHECK(run.exit_code == 1);
  CHECK(run.err == "gpusched: gpuschedd is shutting down\n");
}

TEST_CASE("the job list pages through ListJobs over gRPC") {
  Server server;
  auto client = MakeGrpcSchedulerClient({server.address, std::nullopt});
  auto all = ListAllJobs(*client, v1::ListJobsRequest());
  REQUIRE(all.ok());
  REQUIRE(all->jobs_size() == 2);
  CHECK(all->jobs(0).id() == 1);
  CHECK(all->jobs(1).id() == 2);
  CHECK(all->next_page_token().empty());
}

TEST_CASE("a watch ends when the caller has seen enough, or at its deadline") {
  Server server;
  auto client = MakeGrpcSchedulerClient({server.address, std::nullopt});
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

TEST_CASE("submit --wait over gRPC ends with the job") {
  Server server;
  Invocation run = RunAgainst({"--addr", server.address, "submit", "--wait", "--", "true"});
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Submitted job 101\nJob 101 COMPLETED\n");
}
