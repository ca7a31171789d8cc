// Bad input through the CLI and straight through gRPC: a clear error naming
// what is wrong, a non-zero exit, and nothing half-written.

#include <catch2/catch.hpp>
#include <condition_variable>
#include <fstream>
#include <mutex>

#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "tests/integration/test_cluster.h"

using namespace gpusched;
using gpusched::testing::TestCluster;

TEST_CASE("the CLI refuses bad submits with a message and a non-zero exit", "[integration]") {
  TestCluster cluster;
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{"submit", "--gpus", "-1", "--", "/bin/true"}, "gpus"},
      {{"submit", "--nodes", "0", "--gpus-per-node", "2", "--", "/bin/true"}, "nodes"},
      {{"submit", "--nodes", "1", "--gpus-per-node", "16", "--", "/bin/true"}, "largest node has 4"},
      {{"submit", "--gpus", "9", "--nodes", "1", "--", "/bin/true"}, "9"},
      {{"submit", "--gpus", "1000", "--", "/bin/true"}, "resources.gpus"},
      {{"submit", "--gpus", "1", "--time", "1:99", "--", "/bin/true"}, "invalid time limit"},
      {{"submit", "--gpus", "1"}, "command"},
      {{"submit", "--gpus", "1", "--env", "=x", "--", "/bin/true"}, "env"},
      {{"status", "999999"}, "999999"},
      {{"cancel", "999999"}, "999999"},
      {{"logs", "999999"}, "999999"},
      {{"status", "not-a-number"}, "not-a-number"},
  };
  for (const Case& c : cases) {
    std::string line;
    for (const auto& a : c.args) line += a + " ";
    INFO("gpusched " << line);
    auto r = cluster.Cli(c.args);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') <= 2);  // one line a person can read
  }

  v1::ListJobsResponse jobs;
  grpc::ClientContext ctx;
  REQUIRE(cluster.stub().ListJobs(&ctx, {}, &jobs).ok());
  CHECK(jobs.jobs_size() == 0);  // nothing was half-created
}

TEST_CASE("the daemon rejects bad specs over gRPC naming the field, and keeps serving", "[integration]") {
  TestCluster cluster;
  auto submit = [&](const std::function<void(v1::JobSpec&)>& mutate) {
    v1::SubmitJobRequest request;
    request.mutable_spec()->add_argv("/bin/true");
    request.mutable_spec()->mutable_resources()->set_gpus(1);
    mutate(*request.mutable_spec());
    grpc::ClientContext ctx;
    v1::SubmitJobResponse response;
    return cluster.stub().SubmitJob(&ctx, request, &response);
  };
  grpc::Status huge = submit([](v1::JobSpec& s) { s.mutable_resources()->set_gpus(int64_t{1} << 62); });
  CHECK(huge.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(huge.error_message().find("resources.gpus") == 0);
  grpc::Status negative = submit([](v1::JobSpec& s) { s.set_time_limit_s(-1); });
  CHECK(negative.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(negative.error_message().find("spec.time_limit_s") == 0);
  grpc::Status mode = submit([](v1::JobSpec& s) { s.set_launch_mode(static_cast<v1::LaunchMode>(42)); });
  CHECK(mode.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  grpc::Status big = submit([](v1::JobSpec& s) { s.add_argv(std::string(300 * 1024, 'x')); });
  CHECK(big.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  grpc::Status oversized = submit([](v1::JobSpec& s) { s.add_argv(std::string(8 << 20, 'x')); });
  CHECK(oversized.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);

  v1::ListJobsRequest bad_page;
  bad_page.set_page_token("garbage");
  v1::ListJobsResponse page;
  grpc::ClientContext page_ctx;
  CHECK(cluster.stub().ListJobs(&page_ctx, bad_page, &page).error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  // Still alive, and nothing was written.
  v1::ListJobsResponse jobs;
  grpc::ClientContext ctx;
  REQUIRE(cluster.stub().ListJobs(&ctx, {}, &jobs).ok());
  CHECK(jobs.jobs_size() == 0);
  uint64_t ok = cluster.Submit({"--gpus", "1", "--", "/bin/true"});
  CHECK(cluster.WaitForEnd(ok).state() == v1::JOB_STATE_COMPLETED);
}

TEST_CASE("jobs with megabyte scripts do not break the job list: pages end before gRPC's 4 MiB", "[integration]") {
  TestCluster cluster({{"node-a", 1}});
  const std::string script = cluster.dir() + "/big.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\n# " << std::string(900 * 1024, 'x') << "\ntrue\n";
  }
  for (int i = 0; i < 8; ++i) cluster.Submit({"--hold", "--gpus", "1", "--script", script});
  v1::ListJobsRequest request;
  v1::ListJobsResponse first;
  grpc::ClientContext ctx;
  REQUIRE(cluster.stub().ListJobs(&ctx, request, &first).ok());
  CHECK(first.jobs_size() < 8);
  CHECK_FALSE(first.next_page_token().empty());
  auto status = cluster.Cli({"status"});
  INFO(status.err);
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("held: waits until released") != std::string::npos);
  auto all = cluster.Cli({"status", "--json"});
  CHECK(all.exit_code == 0);
  size_t jobs = 0;
  for (size_t at = all.out.find("\"spec\""); at != std::string::npos; at = all.out.find("\"spec\"", at + 1)) ++jobs;
  CHECK(jobs == 8);
}

TEST_CASE("a request that does not decode is refused with INVALID_ARGUMENT saying so, and the daemon goes on",
          "[integration]") {
  TestCluster cluster({{"node-a", 1}});
  grpc::GenericStub generic(grpc::CreateChannel(cluster.address(), grpc::InsecureChannelCredentials()));
  // A field tag with a length running past the end: no SubmitJobRequest.
  const std::string garbage = "\x0a\xff\xff\xff\x0f garbage";
  for (const char* method :
       {"/gpusched.v1.Scheduler/SubmitJob", "/gpusched.v1.Scheduler/GetJob", "/gpusched.v1.Scheduler/ListNodes"}) {
    INFO(method);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer reply;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    grpc::Status status;
    generic.UnaryCall(&ctx, method, grpc::StubOptions(), &request, &reply, [&](grpc::Status s) {
      std::lock_guard<std::mutex> lock(mu);
      status = std::move(s);
      done = true;
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(status.error_message(), Catch::Contains("could not be decoded"));
  }
  // Still serving.
  CHECK(cluster.Cli({"nodes"}).exit_code == 0);
}
