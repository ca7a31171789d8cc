#include "daemon/core/job_validator.h"

#include <catch2/catch.hpp>
#include <functional>

#include "tests/unit/core/test_cluster.h"

using namespace gpusched;
using core::testing::GpuJob;

TEST_CASE("bad specs are rejected naming the field") {
  struct Case {
    const char* what;
    std::function<void(v1::JobSpec&)> mutate;
    const char* field;
  };
  auto c = GENERATE(values<Case>({
      {"negative GPUs", [](v1::JobSpec& s) { s.mutable_resources()->set_gpus(-1); }, "resources.gpus"},
      {"absurd GPUs", [](v1::JobSpec& s) { s.mutable_resources()->set_gpus(int64_t{1} << 62); }, "resources.gpus"},
      {"negative nodes", [](v1::JobSpec& s) { s.mutable_resources()->set_nodes(-2); }, "resources.nodes"},
      {"gpus per node without nodes",
       [](v1::JobSpec& s) {
         s.mutable_resources()->set_gpus(0);
         s.mutable_resources()->set_gpus_per_node(4);
       },
       "resources.nodes"},
      {"uneven split",
       [](v1::JobSpec& s) {
         s.mutable_resources()->set_gpus(5);
         s.mutable_resources()->set_nodes(2);
       },
       "resources.gpus"},
      {"disagreeing totals",
       [](v1::JobSpec& s) {
         s.mutable_resources()->set_gpus(6);
         s.mutable_resources()->set_nodes(2);
         s.mutable_resources()->set_gpus_per_node(4);
       },
       "resources.gpus"},
      {"CPU-only over nodes",
       [](v1::JobSpec& s) {
         s.mutable_resources()->set_gpus(0);
         s.mutable_resources()->set_nodes(3);
       },
       "resources.nodes"},
      {"no command", [](v1::JobSpec& s) { s.clear_argv(); }, "spec.argv"},
      {"empty program", [](v1::JobSpec& s) { s.set_argv(0, ""); }, "spec.argv[0]"},
      {"command and script", [](v1::JobSpec& s) { s.set_script("echo hi"); }, "spec.script"},
      {"negative time", [](v1::JobSpec& s) { s.set_time_limit_s(-5); }, "spec.time_limit_s"},
      {"huge time", [](v1::JobSpec& s) { s.set_time_limit_s(int64_t{1} << 40); }, "spec.time_limit_s"},
      {"bad env name", [](v1::JobSpec& s) { (*s.mutable_env())["A=B"] = "x"; }, "spec.env"},
      {"relative workdir", [](v1::JobSpec& s) { s.set_workdir("data/run1"); }, "spec.workdir"},
      {"unknown launch mode", [](v1::JobSpec& s) { s.set_launch_mode(static_cast<v1::LaunchMode>(7)); },
       "spec.launch_mode"},
      {"oversized queue name", [](v1::JobSpec& s) { s.set_queue(std::string(300, 'q')); }, "spec.queue"},
      {"oversized account", [](v1::JobSpec& s) { s.set_account(std::string(300, 'a')); }, "spec.account"},
      {"oversized command", [](v1::JobSpec& s) { s.add_argv(std::string(200 * 1024, 'x')); }, "spec.argv"},
      {"absurd priority", [](v1::JobSpec& s) { s.set_priority(int64_t{1} << 50); }, "spec.priority"},
      // What breaks `status` tables, forges log lines or drives a terminal.
      {"newline in name", [](v1::JobSpec& s) { s.set_name("train\nJOBID 1 root RUNNING"); }, "spec.name"},
      {"escape in name", [](v1::JobSpec& s) { s.set_name("x\x1b]0;owned\x07"); }, "spec.name"},
      {"C1 control in name", [](v1::JobSpec& s) { s.set_name("x\xc2\x9b" "31m"); }, "spec.name"},
      {"tab in queue", [](v1::JobSpec& s) { s.set_queue("gpu\tq"); }, "spec.queue"},
      {"newline in account", [](v1::JobSpec& s) { s.set_account("a\nb"); }, "spec.account"},
      {"carriage return in user", [](v1::JobSpec& s) { s.set_user("root\r"); }, "spec.user"},
      {"DEL in GPU model", [](v1::JobSpec& s) { s.mutable_resources()->set_gpu_model("H100\x7f"); },
       "resources.gpu_model"},
      {"too many option sources",
       [](v1::JobSpec& s) {
         for (int i = 0; i < 65; ++i) s.add_option_sources()->set_option("--env");
       },
       "spec.option_sources"},
      {"newline in an option's origin",
       [](v1::JobSpec& s) {
         v1::OptionSource* o = s.add_option_sources();
         o->set_option("--gpus");
         o->set_origin("script line 2\nJOBID 1 root RUNNING");
       },
       "option_sources.origin"},
      {"relative output", [](v1::JobSpec& s) { s.set_output("out.log"); }, "spec.output"},
      {"unknown output pattern", [](v1::JobSpec& s) { s.set_output("/tmp/out-%N.log"); }, "spec.output"},
      {"output of a container job",
       [](v1::JobSpec& s) {
         s.set_output("/tmp/out-%j.log");
         s.mutable_container()->set_image("localhost/x:1");
       },
       "spec.output"},
      {"relative error file", [](v1::JobSpec& s) { s.set_error("err.log"); }, "spec.error"},
      {"unknown error file pattern", [](v1::JobSpec& s) { s.set_error("/tmp/err-%A.log"); }, "spec.error"},
      {"error file of a container job",
       [](v1::JobSpec& s) {
         s.set_error("/tmp/err.log");
         s.mutable_container()->set_image("localhost/x:1");
       },
       "spec.error"},
      {"container without an image", [](v1::JobSpec& s) { s.mutable_container(); }, "spec.container.image"},
  }));
  INFO(c.what);
  v1::JobSpec spec = GpuJob(2);
  c.mutate(spec);
  absl::Status status = core::ValidateAndNormalize(spec);
  REQUIRE(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(status.message().substr(0, std::string(c.field).size() + 1) == std::string(c.field) + ":");
}

TEST_CASE("valid specs are normalized") {
  SECTION("nodes x gpus_per_node fills in the total") {
    v1::JobSpec spec = GpuJob(0, 2, 4);
    REQUIRE(core::ValidateAndNormalize(spec).ok());
    CHECK(spec.resources().gpus() == 8);
    CHECK(spec.launch_mode() == v1::LAUNCH_MODE_PER_GPU);
  }
  SECTION("gpus over nodes fills in gpus_per_node") {
    v1::JobSpec spec = GpuJob(8, 2);
    REQUIRE(core::ValidateAndNormalize(spec).ok());
    CHECK(spec.resources().gpus_per_node() == 4);
  }
  SECTION("a job with no GPUs is a valid CPU-only job") {
    v1::JobSpec spec = GpuJob(0);
    spec.mutable_resources()->set_cpus(4);
    CHECK(core::ValidateAndNormalize(spec).ok());
  }
  SECTION("an unset topology mode takes the operator's default; a set one stays") {
    v1::JobSpec unset = GpuJob(8);
    REQUIRE(core::ValidateAndNormalize(unset).ok());
    CHECK(unset.topology() == v1::TOPOLOGY_MODE_PREFER);
    core::SpecDefaults strict;
    strict.topology = v1::TOPOLOGY_MODE_STRICT;
    v1::JobSpec by_default = GpuJob(8);
    REQUIRE(core::ValidateAndNormalize(by_default, {}, strict).ok());
    CHECK(by_default.topology() == v1::TOPOLOGY_MODE_STRICT);
    v1::JobSpec asked_any = GpuJob(8);
    asked_any.set_topology(v1::TOPOLOGY_MODE_ANY);
    REQUIRE(core::ValidateAndNormalize(asked_any, {}, strict).ok());
    CHECK(asked_any.topology() == v1::TOPOLOGY_MODE_ANY);
  }
  SECTION("a script alone is a command") {
    v1::JobSpec spec = GpuJob(1);
    spec.clear_argv();
    spec.set_script("#!/bin/sh\necho hi\n");
    CHECK(core::ValidateAndNormalize(spec).ok());
  }
}

TEST_CASE("names may hold any printable text, UTF-8 included") {
  v1::JobSpec spec = GpuJob(1);
  spec.set_name("résumé-训练 #3 (lr=1e-4)");
  CHECK(core::ValidateAndNormalize(spec).ok());
  absl::Status escape = [] {
    v1::JobSpec bad = GpuJob(1);
    bad.set_name("ok\x1b[2J");
    return core::ValidateAndNormalize(bad);
  }();
  CHECK(escape.message() ==
        "spec.name: holds a control character (byte 2, 0x1b); names and reasons are shown in tables and terminals");
}
