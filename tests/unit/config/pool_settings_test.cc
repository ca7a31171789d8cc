// gpuschedd.toml [[pool]] tables: what an operator writes, and each mistake
// named at its file and line, so that the daemon does not start on it.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <string>

#include "daemon/config/daemon_config.h"
#include "tests/support/temp_dir.h"

using namespace gpusched::daemon;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using gpusched::testing::TempDir;

namespace {

struct Programs {
  TempDir dir;
  std::string resume, suspend, not_executable;
  Programs() {
    resume = dir.Write("resume.sh", "#!/bin/sh\nexit 0\n");
    suspend = dir.Write("suspend.sh", "#!/bin/sh\nexit 0\n");
    not_executable = dir.Write("plain.txt", "not a program\n");
    chmod(resume.c_str(), 0755);
    chmod(suspend.c_str(), 0755);
  }
  std::string Config() const { return dir / "gpuschedd.toml"; }
};

std::string Pool(const Programs& p, const std::string& extra, const std::string& name = "burst",
                 const std::string& nodes = "gpu[01-04]") {
  return "[[pool]]\nname = \"" + name + "\"\nnodes = \"" + nodes + "\"\nclass = \"spot\"\n" +
         "cost_per_gpu_hour = 1.25\nresume_program = \"" + p.resume + "\"\nsuspend_program = \"" + p.suspend +
         "\"\ngpus = 8\ngpu_model = \"H100\"\ngpu_memory_mb = 81920\ncpus = 96\nmemory_mb = 1024000\n" + extra;
}

std::string ErrorOf(const Programs& p, const std::string& text) {
  auto config = ParseDaemonConfig(text, p.Config());
  INFO(text);
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

}  // namespace

TEST_CASE("gpuschedd.toml: a [[pool]] with every key") {
  Programs p;
  auto config = ParseDaemonConfig(
      Pool(p,
           "min_nodes = 1\nmax_nodes = 3\nresume_timeout = \"15:00\"\nsuspend_timeout = \"2:00\"\n"
           "idle_before_suspend = \"0:30\"\nresumes_per_minute = 4\nsuspends_per_minute = 2\n"
           "headroom = 0.5\ntarget_utilization = 0.8\ndemand_window = \"30:00\"\nlabels = { zone = \"eu-1\" }\n"),
      p.Config());
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  REQUIRE(config->pools.size() == 1);
  const gpusched::core::PoolSpec& pool = config->pools[0];
  CHECK(pool.name == "burst");
  CHECK(pool.nodes == std::vector<std::string>{"gpu01", "gpu02", "gpu03", "gpu04"});
  CHECK(pool.pool_class == gpusched::core::PoolClass::kSpot);
  CHECK(pool.cost_per_gpu_hour == 1.25);
  CHECK(pool.min_nodes == 1);
  CHECK(pool.max_nodes == 3);
  CHECK(pool.resume_program == p.resume);
  CHECK(pool.resume_timeout == absl::Minutes(15));
  CHECK(pool.suspend_timeout == absl::Minutes(2));
  CHECK(pool.idle_before_suspend == absl::Seconds(30));
  CHECK(pool.resumes_per_minute == 4);
  CHECK(pool.suspends_per_minute == 2);
  CHECK(pool.headroom == 0.5);
  CHECK(pool.target_utilization == 0.8);
  CHECK(pool.demand_window == absl::Minutes(30));
  REQUIRE(pool.shape.gpus_size() == 8);
  CHECK(pool.shape.gpus(0).model() == "H100");
  CHECK(pool.shape.gpus(0).memory_mb() == 81920);
  CHECK(pool.shape.cpus() == 96);
  CHECK(pool.shape.labels().at("zone") == "eu-1");
  CHECK_THAT(DescribeDaemonConfig(*config), Contains("1 pool (burst spot 1-3 of 4 nodes)"));
}

TEST_CASE("gpuschedd.toml: max_nodes defaults to every node of the pool; no programs is a static pool") {
  Programs p;
  auto config = ParseDaemonConfig(Pool(p, "") +
                                      "\n[[pool]]\nname = \"base\"\nnodes = \"cpu[1-2]\"\n"
                                      "class = \"reserved\"\n",
                                  p.Config());
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->pools[0].max_nodes == 4);
  CHECK_FALSE(config->pools[1].elastic());
  CHECK_THAT(DescribeDaemonConfig(*config), Contains("base reserved static"));
}

TEST_CASE("gpuschedd.toml: pool mistakes name the file, the line and the key") {
  Programs p;
  const std::string at = p.Config() + ":";
  // Lines: 1 [[pool]], 2 name, 3 nodes, 4 class, 5 cost, 6 resume, 7 suspend, ..., 13+ extra.
  CHECK_THAT(ErrorOf(p, Pool(p, "min_nodes = 3\nmax_nodes = 2\n")),
             StartsWith(at + "13:") && Contains("min_nodes 3 is above max_nodes 2"));
  CHECK_THAT(ErrorOf(p, Pool(p, "max_nodes = 9\n")), StartsWith(at + "13:") && Contains("above the 4 node(s)"));
  CHECK_THAT(ErrorOf(p, Pool(p, "", "burst", "gpu[5-3]")), StartsWith(at + "3:") && Contains("nodes:"));
  CHECK_THAT(ErrorOf(p, Pool(p, "") + Pool(p, "", "other", "gpu[04-05]")),
             StartsWith(at + "15:") && Contains("gpu04, which is in pool \"burst\" already"));
  CHECK_THAT(ErrorOf(p, Pool(p, "") + Pool(p, "", "burst", "x1")), Contains("\"burst\" is defined twice"));
  std::string negative = Pool(p, "");
  negative.replace(negative.find("1.25"), 4, "-2.0");
  CHECK_THAT(ErrorOf(p, negative), StartsWith(at + "5:") && Contains("cost_per_gpu_hour -2"));
  std::string missing = Pool(p, "");
  missing.replace(missing.find(p.resume), p.resume.size(), p.dir / "nope.sh");
  CHECK_THAT(ErrorOf(p, missing), StartsWith(at + "6:") && Contains("nope.sh does not exist"));
  std::string plain = Pool(p, "");
  plain.replace(plain.find(p.suspend), p.suspend.size(), p.not_executable);
  CHECK_THAT(ErrorOf(p, plain), StartsWith(at + "7:") && Contains("is not executable"));
  std::string wrong_class = Pool(p, "");
  wrong_class.replace(wrong_class.find("spot"), 4, "cheap");
  CHECK_THAT(ErrorOf(p, wrong_class), StartsWith(at + "4:") && Contains("class"));
  std::string reserved = Pool(p, "");
  reserved.replace(reserved.find("spot"), 4, "reserved");
  CHECK_THAT(ErrorOf(p, reserved), StartsWith(at + "7:") && Contains("reserved nodes never power down"));
  CHECK_THAT(ErrorOf(p, "[[pool]]\nname = \"x\"\nnodes = \"n1\"\nsuspend_program = \"" + p.suspend + "\"\n"),
             StartsWith(at + "4:") && Contains("without resume_program"));
  CHECK_THAT(ErrorOf(p, "[[pool]]\nname = \"x\"\nnodes = \"n1\"\nresume_program = \"" + p.resume + "\"\n"),
             Contains("needs gpus"));
  CHECK_THAT(ErrorOf(p, Pool(p, "idle_before_suspend = \"soon\"\n")),
             StartsWith(at + "13:") && Contains("idle_before_suspend"));
  CHECK_THAT(ErrorOf(p, Pool(p, "headroom = \"lots\"\n")),
             StartsWith(at + "13:") && Contains("headroom must be a number"));
  CHECK_THAT(ErrorOf(p, Pool(p, "target_utilization = 1.5\n")),
             StartsWith(at + "13:") && Contains("target_utilization"));
  CHECK_THAT(ErrorOf(p, Pool(p, "target_utilization = 0.01\n")), StartsWith(at + "13:") && Contains("below 0.05"));
  CHECK_THAT(ErrorOf(p, Pool(p, "max_node = 2\n")), StartsWith(at + "13:") && Contains("unknown key max_node"));
  CHECK_THAT(ErrorOf(p, "pool = \"x\"\n"), StartsWith(at + "1:") && Contains("[[pool]]"));
}
