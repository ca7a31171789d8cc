#include "common/container_policy.h"

#include <catch2/catch.hpp>
#include <string>

using gpusched::ContainerAllowed;
using gpusched::ImageRegistry;
using gpusched::PathWithin;
using gpusched::ValidateContainerSpec;
namespace v1 = gpusched::v1;

namespace {

v1::ContainerSpec Image(const std::string& image) {
  v1::ContainerSpec c;
  c.set_image(image);
  return c;
}

v1::ContainerSpec WithMount(v1::ContainerSpec c, const std::string& source, const std::string& target) {
  v1::ContainerMount* m = c.add_mounts();
  m->set_source(source);
  m->set_target(target);
  return c;
}

v1::ContainerSupport Podman(std::vector<std::string> registries, std::vector<std::string> mounts) {
  v1::ContainerSupport s;
  s.set_runtime("podman");
  for (const std::string& r : registries) s.add_registries(r);
  for (const std::string& m : mounts) s.add_mount_sources(m);
  return s;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

}  // namespace

TEST_CASE("an image's registry is read as Podman and Docker read it") {
  CHECK(ImageRegistry("nvcr.io/nvidia/pytorch:24.05-py3") == "nvcr.io");
  CHECK(ImageRegistry("registry.example.com:5000/team/img") == "registry.example.com:5000");
  CHECK(ImageRegistry("localhost/gpusched-test:1") == "localhost");
  CHECK(ImageRegistry("localhost:5000/x") == "localhost:5000");
  // No host part: Docker Hub, whether or not a namespace is given.
  CHECK(ImageRegistry("ubuntu:22.04") == "docker.io");
  CHECK(ImageRegistry("pytorch/pytorch:latest") == "docker.io");
  CHECK(ImageRegistry("NVCR.IO/nvidia/cuda") == "nvcr.io");
}

TEST_CASE("a path is within a root only component by component") {
  CHECK(PathWithin("/data", "/data"));
  CHECK(PathWithin("/data/team/x", "/data"));
  CHECK(PathWithin("/data/team/x", "/data/"));
  CHECK_FALSE(PathWithin("/database", "/data"));
  CHECK_FALSE(PathWithin("/etc", "/data"));
  CHECK(PathWithin("/anything", "/"));
}

TEST_CASE("a container spec is refused with the field that is wrong") {
  CHECK(ValidateContainerSpec(Image("nvcr.io/nvidia/pytorch:24.05-py3")).ok());
  CHECK_THAT(Message(ValidateContainerSpec(Image(""))), Catch::Contains("spec.container.image: is empty"));
  CHECK_THAT(Message(ValidateContainerSpec(Image("two words"))), Catch::Contains("spec.container.image"));
  CHECK_THAT(Message(ValidateContainerSpec(Image("--privileged"))), Catch::Contains("starts with '-'"));

  const v1::ContainerSpec base = Image("localhost/x:1");
  CHECK(ValidateContainerSpec(WithMount(base, "/data/a", "/data")).ok());
  CHECK_THAT(Message(ValidateContainerSpec(WithMount(base, "data", "/data"))),
             Catch::Contains("spec.container.mounts[0].source: \"data\" is not an absolute path"));
  CHECK_THAT(Message(ValidateContainerSpec(WithMount(base, "/data/../etc", "/data"))),
             Catch::Contains("has a \"..\" component"));
  CHECK_THAT(Message(ValidateContainerSpec(WithMount(base, "/data", "/a,b"))),
             Catch::Contains("spec.container.mounts[0].target") && Catch::Contains("','"));
  CHECK_THAT(Message(ValidateContainerSpec(WithMount(base, "/data", "/"))), Catch::Contains("cannot be /"));
  v1::ContainerSpec workdir = base;
  workdir.set_workdir("rel");
  CHECK_THAT(Message(ValidateContainerSpec(workdir)), Catch::Contains("spec.container.workdir"));
}

TEST_CASE("a node allows a container by its runtime, registries and mount sources") {
  const v1::ContainerSpec job = WithMount(Image("nvcr.io/nvidia/pytorch:24.05-py3"), "/data/team", "/data");
  CHECK(ContainerAllowed(job, Podman({}, {"/data"}), "n1").ok());
  CHECK(ContainerAllowed(job, Podman({"nvcr.io", "localhost"}, {"/scratch", "/data"}), "n1").ok());

  const absl::Status no_runtime = ContainerAllowed(job, v1::ContainerSupport(), "n1");
  CHECK(no_runtime.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(Message(no_runtime), Catch::Contains("node n1 runs no containers"));

  CHECK_THAT(Message(ContainerAllowed(job, Podman({"localhost"}, {"/data"}), "n1")),
             Catch::Contains("registry nvcr.io, which node n1 does not allow (it allows: localhost)"));
  CHECK_THAT(Message(ContainerAllowed(job, Podman({}, {"/scratch"}), "n1")),
             Catch::Contains("mount source /data/team is outside what node n1 allows to mount (/scratch)"));
  CHECK_THAT(Message(ContainerAllowed(job, Podman({}, {}), "n1")), Catch::Contains("(no mounts at all)"));
}
