// What grpcurl and other languages' clients rely on: health, reflection,
// WatchJobs, node pages, and the CLI finding the daemon from the environment.

#include <catch2/catch.hpp>
#include <future>

#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "tests/integration/test_cluster.h"

using namespace gpusched;
using gpusched::testing::TestCluster;

namespace {

std::string ToString(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  buffer.Dump(&slices).IgnoreError();
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

grpc::ByteBuffer ToBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace

TEST_CASE("grpc.health.v1 answers SERVING", "[integration]") {
  TestCluster cluster(std::vector<gpusched::testing::AgentSpec>{});
  grpc::GenericStub stub(grpc::CreateChannel(cluster.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  grpc::ByteBuffer request = ToBuffer(""), response;  // HealthCheckRequest{service: ""}
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) { done.set_value(s); });
  REQUIRE(done.get_future().get().ok());
  CHECK(ToString(response) == std::string("\x08\x01", 2));  // status: SERVING
}

TEST_CASE("server reflection lists the gpusched services", "[integration]") {
  TestCluster cluster(std::vector<gpusched::testing::AgentSpec>{});
  grpc::GenericStub stub(grpc::CreateChannel(cluster.address(), grpc::InsecureChannelCredentials()));
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  auto call = stub.PrepareCall(&ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  void* tag;
  bool ok;
  auto step = [&](int id) {
    REQUIRE(cq.Next(&tag, &ok));
    REQUIRE(ok);
    REQUIRE(tag == reinterpret_cast<void*>(id));
  };
  call->StartCall(reinterpret_cast<void*>(1));
  step(1);
  call->Write(ToBuffer(std::string("\x3a\x00", 2)), reinterpret_cast<void*>(2));  // list_services: ""
  step(2);
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(3));
  step(3);
  const std::string text = ToString(response);
  CHECK(text.find("gpusched.v1.Scheduler") != std::string::npos);
  CHECK(text.find("gpusched.v1.AgentGateway") != std::string::npos);
  ctx.TryCancel();
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(4));
  REQUIRE(cq.Next(&tag, &ok));
}

TEST_CASE("WatchJobs streams every state change of a job", "[integration]") {
  TestCluster cluster;
  grpc::ClientContext ctx;
  v1::WatchJobsRequest request;  // every job
  auto reader = cluster.stub().WatchJobs(&ctx, request);
  // The first event says the watch is in place: nothing submitted after it is missed.
  v1::JobEvent event;
  REQUIRE(reader->Read(&event));
  CHECK(event.job_id() == 0);
  CHECK(event.state() == v1::JOB_STATE_UNSPECIFIED);
  uint64_t id = cluster.Submit({"--gpus", "1", "--", "/bin/true"});
  std::vector<v1::JobState> seen;
  while (reader->Read(&event)) {
    if (event.job_id() != id) continue;
    if (seen.empty() || seen.back() != event.state()) seen.push_back(event.state());
    if (event.state() == v1::JOB_STATE_COMPLETED) break;
  }
  ctx.TryCancel();
  CHECK(seen == std::vector<v1::JobState>{v1::JOB_STATE_PENDING, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING,
                                          v1::JOB_STATE_COMPLETED});
}

TEST_CASE("the CLI reports an unreachable daemon with exit code 3", "[integration]") {
  auto r = gpusched::testing::RunCommand({GPUSCHED_CLI_BIN, "status"}, {{"GPUSCHED_ADDR", "127.0.0.1:1"}});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("cannot reach gpuschedd at 127.0.0.1:1") != std::string::npos);
}

TEST_CASE("gpusched --version prints the same line alone as after other options, with no daemon", "[integration]") {
  // Alone it is answered before the command line is built; after an option,
  // by the command line's own --version.
  auto alone = gpusched::testing::RunCommand({GPUSCHED_CLI_BIN, "--version"}, {{"GPUSCHED_ADDR", "127.0.0.1:1"}});
  auto after = gpusched::testing::RunCommand({GPUSCHED_CLI_BIN, "--addr", "127.0.0.1:1", "--version"});
  CHECK(alone.exit_code == 0);
  CHECK(after.exit_code == 0);
  CHECK(alone.out.rfind("gpusched ", 0) == 0);
  CHECK(alone.out == after.out);
  CHECK(alone.err.empty());
}

TEST_CASE("gpuschedd prints its version and names a flag it does not know", "[integration]") {
  // Its command line answers both by throwing and catching a C++ exception,
  // through the unwinder that llvm-bolt once broke (cmake/bolt_text_order.sh).
  auto version = gpusched::testing::RunCommand({GPUSCHEDD_BIN, "--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.rfind("gpuschedd ", 0) == 0);
  auto unknown = gpusched::testing::RunCommand({GPUSCHEDD_BIN, "serve", "--no-such-flag"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("--no-such-flag") != std::string::npos);
}

TEST_CASE("ListNodes gives nodes a page at a time in name order, or the one node asked for", "[integration]") {
  TestCluster cluster({{"node-c", 1}, {"node-a", 1}, {"node-b", 2}});
  auto list = [&](const v1::ListNodesRequest& request, v1::ListNodesResponse& response) {
    grpc::ClientContext ctx;
    return cluster.stub().ListNodes(&ctx, request, &response);
  };
  std::vector<std::string> names;
  v1::ListNodesRequest request;
  request.set_page_size(2);
  int pages = 0;
  while (true) {
    v1::ListNodesResponse page;
    REQUIRE(list(request, page).ok());
    ++pages;
    CHECK(page.nodes_size() <= 2);
    for (const v1::Node& node : page.nodes()) names.push_back(node.info().name());
    if (page.next_page_token().empty()) break;
    REQUIRE(pages < 5);
    request.set_page_token(page.next_page_token());
  }
  CHECK(pages == 2);
  CHECK(names == std::vector<std::string>{"node-a", "node-b", "node-c"});

  v1::ListNodesRequest one;
  one.set_node("node-b");
  v1::ListNodesResponse only;
  REQUIRE(list(one, only).ok());
  REQUIRE(only.nodes_size() == 1);
  CHECK(only.nodes(0).info().gpus_size() == 2);
  CHECK(only.next_page_token().empty());
  one.set_node("node-z");
  REQUIRE(list(one, only).ok());
  CHECK(only.nodes_size() == 0);

  v1::ListNodesRequest negative;
  negative.set_page_size(-1);
  v1::ListNodesResponse refused;
  grpc::Status status = list(negative, refused);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(status.error_message() == "page_size: must be >= 0");

  auto shown = cluster.Cli({"nodes", "show", "node-b"});
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("node-b") != std::string::npos);
  auto missing = cluster.Cli({"nodes", "show", "node-z"});
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("no node named \"node-z\"") != std::string::npos);
}
