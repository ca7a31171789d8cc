// Jobs in container images through the scheduling core: placed only on
// nodes whose agent runs containers, and refused at submit when no such
// node would let them run as asked.
#include <catch2/catch.hpp>

#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using namespace gpusched::core::testing;

namespace {

// A node whose agent runs containers from `registries` (empty: any) with
// mounts from /data.
void AddContainerNode(CoreHarness& h, const std::string& name, int gpus, std::vector<std::string> registries = {}) {
  v1::RegisterNode reg;
  *reg.mutable_node() = MakeNode(name, gpus);
  v1::ContainerSupport& support = *reg.mutable_node()->mutable_containers();
  support.set_runtime("podman");
  for (const std::string& r : registries) support.add_registries(r);
  support.add_mount_sources("/data");
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
}

v1::JobSpec ContainerJob(int gpus, const std::string& image = "nvcr.io/nvidia/pytorch:24.05-py3") {
  v1::JobSpec spec = GpuJob(gpus);
  spec.mutable_container()->set_image(image);
  return spec;
}

std::string SubmitError(CoreHarness& h, v1::JobSpec spec) {
  auto outcome = h.core.Submit(std::move(spec), "", h.fx);
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(outcome.status().message());
}

}  // namespace

TEST_CASE("a container job goes only to a node that runs containers, and waits rather than go elsewhere") {
  CoreHarness h;
  h.AddNode("plain", 8);
  AddContainerNode(h, "ctr", 2);
  const uint64_t first = h.Submit(ContainerJob(2));
  const uint64_t second = h.Submit(ContainerJob(2));
  const uint64_t plain = h.Submit(GpuJob(2));
  h.Pass();
  REQUIRE(h.StateOf(first) == v1::JOB_STATE_STARTING);
  CHECK(h.Persisted(first).allocation().nodes(0).node() == "ctr");
  // The plain node has room, but no runtime: the second waits for ctr.
  CHECK(h.StateOf(second) == v1::JOB_STATE_PENDING);
  // A job without an image may still go anywhere.
  CHECK(h.StateOf(plain) == v1::JOB_STATE_STARTING);
  CHECK(h.Persisted(plain).allocation().nodes(0).node() == "plain");
  // The launch carries the image to the agent.
  const auto launches = h.Sent("ctr", v1::DaemonMessage::kLaunch);
  REQUIRE(launches.size() == 1);
  CHECK(launches[0].launch().spec().container().image() == "nvcr.io/nvidia/pytorch:24.05-py3");

  h.StartOnAllNodes(first);
  h.Report("ctr", first, v1::JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(second) == v1::JOB_STATE_STARTING);
  CHECK(h.Persisted(second).allocation().nodes(0).node() == "ctr");
}

TEST_CASE("a container job no node would run is refused at submit, saying what stands in the way") {
  CoreHarness h;
  h.AddNode("plain", 8);
  CHECK_THAT(SubmitError(h, ContainerJob(1)),
             Catch::Contains("spec.container: none of the 1 node(s) this job may use runs containers"));

  AddContainerNode(h, "ctr", 4, {"nvcr.io", "localhost"});
  CHECK(h.core.Submit(ContainerJob(1), "", h.fx).ok());
  CHECK_THAT(SubmitError(h, ContainerJob(1, "docker.io/library/ubuntu:22.04")),
             Catch::Contains("registry docker.io, which node ctr does not allow (it allows: nvcr.io, localhost)"));

  v1::JobSpec outside = ContainerJob(1);
  v1::ContainerMount* mount = outside.mutable_container()->add_mounts();
  mount->set_source("/etc");
  mount->set_target("/host-etc");
  CHECK_THAT(SubmitError(h, outside),
             Catch::Contains("mount source /etc is outside what node ctr allows to mount (/data)"));
  mount->set_source("/data/team-a");
  CHECK(h.core.Submit(outside, "", h.fx).ok());

  v1::JobSpec relative = ContainerJob(1);
  relative.mutable_container()->add_mounts()->set_source("data");
  CHECK_THAT(SubmitError(h, relative), Catch::Contains("spec.container.mounts[0].source"));

  // More GPUs than the nodes that run containers have.
  CHECK_THAT(SubmitError(h, ContainerJob(8)), Catch::Contains("resources.gpus"));
}

TEST_CASE("a container job whose launch failed fails, or goes back to the queue when it asked to be requeued") {
  CoreHarness h;
  AddContainerNode(h, "ctr", 2);
  const uint64_t plain = h.Submit(ContainerJob(1));
  v1::JobSpec again = ContainerJob(1);
  again.set_requeue(true);
  const uint64_t requeued = h.Submit(again);
  h.Pass();
  REQUIRE(h.StateOf(plain) == v1::JOB_STATE_STARTING);
  REQUIRE(h.StateOf(requeued) == v1::JOB_STATE_STARTING);
  h.Report("ctr", plain, v1::JobUpdate::KIND_LAUNCH_FAILED);
  h.Report("ctr", requeued, v1::JobUpdate::KIND_LAUNCH_FAILED);
  h.Pass();
  CHECK(h.StateOf(plain) == v1::JOB_STATE_FAILED);
  CHECK(h.Persisted(requeued).attempt() == 1);
  CHECK(h.StateOf(requeued) != v1::JOB_STATE_FAILED);
}
