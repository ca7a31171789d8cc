// `gpusched submit ...` as typed -> the SubmitJobRequest the daemon receives.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "cli/sizes.h"
#include "cli/submit_request.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "test_context.h"

using namespace gpusched;
using namespace gpusched::cli;
using namespace gpusched::cli::testing;

namespace {

struct SpecCase {
  std::vector<std::string> args;
  const char* expected;  // text-format JobSpec; (if absent) workdir is the host's, and user is never sent
};

v1::JobSpec Expected(const char* text) {
  v1::JobSpec spec;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &spec));
  if (spec.workdir().empty()) spec.set_workdir("/home/alice/proj");
  if (!spec.has_resources()) spec.mutable_resources();
  return spec;
}

std::string Describe(const std::vector<std::string>& args) {
  std::string s = "gpusched";
  for (const auto& a : args) s += " " + a;
  return s;
}

}  // namespace

TEST_CASE("submit options become the JobSpec the daemon receives") {
  auto c = GENERATE(values<SpecCase>({
      {{"submit", "--", "python", "train.py", "--lr", "3e-4"}, R"(argv: ["python", "train.py", "--lr", "3e-4"])"},
      // Without --, everything from the first word of the command on is the command.
      {{"submit", "--gpus", "2", "python", "train.py", "--gpus", "9", "--addr", "x"},
       R"(argv: ["python", "train.py", "--gpus", "9", "--addr", "x"] resources { gpus: 2 })"},
      {{"submit", "--gpus", "8", "--", "./run.sh"}, R"(argv: "./run.sh" resources { gpus: 8 })"},
      {{"submit", "--nodes", "2", "--gpus-per-node", "4", "--", "torchrun", "x.py"},
       R"(argv: ["torchrun", "x.py"] resources { nodes: 2 gpus_per_node: 4 })"},
      {{"submit", "--gpus", "16", "--nodes", "2", "--gpus-per-node", "8", "--cpus-per-gpu", "12", "--mem-per-gpu",
        "64G", "--", "x"},
       R"(argv: "x" resources { gpus: 16 nodes: 2 gpus_per_node: 8 cpus_per_gpu: 12 mem_per_gpu_mb: 65536 })"},
      {{"submit", "--mem-per-gpu", "512M", "--", "x"}, R"(argv: "x" resources { mem_per_gpu_mb: 512 })"},
      {{"submit", "--mem-per-gpu", "2048", "--", "x"}, R"(argv: "x" resources { mem_per_gpu_mb: 2048 })"},
      {{"submit", "--cpus", "4", "--mem", "16gb", "--", "x"}, R"(argv: "x" resources { cpus: 4 mem_mb: 16384 })"},
      {{"submit", "--mem", "1T", "--", "x"}, R"(argv: "x" resources { mem_mb: 1048576 })"},
      {{"submit", "--time", "90", "--", "x"}, R"(argv: "x" time_limit_s: 5400)"},
      {{"submit", "--time", "1:30:00", "--", "x"}, R"(argv: "x" time_limit_s: 5400)"},
      {{"submit", "--time", "2-00:00:00", "--", "x"}, R"(argv: "x" time_limit_s: 172800)"},
      {{"submit", "--time=unlimited", "--", "x"}, R"(argv: "x")"},
      {{"submit", "--env", "A=1", "--env", "B=x=y", "--env", "EMPTY=", "--", "x"},
       R"(argv: "x" env { key: "A" value: "1" } env { key: "B" value: "x=y" } env { key: "EMPTY" value: "" })"},
      {{"submit", "--env", "HOME_DIR", "--", "x"}, R"(argv: "x" env { key: "HOME_DIR" value: "/from/env" })"},
      {{"submit", "--env", "A=1", "--env", "A=2", "--", "x"}, R"(argv: "x" env { key: "A" value: "2" })"},
      {{"submit", "--name", "llm", "--queue", "research", "--priority", "-5", "--", "x"},
       R"(argv: "x" name: "llm" queue: "research" priority: -5)"},
      {{"submit", "--priority=10", "--", "x"}, R"(argv: "x" priority: 10)"},
      {{"submit", "--workdir", "/scratch/run1", "--", "x"}, R"(argv: "x" workdir: "/scratch/run1")"},
      {{"submit", "--no-spot", "--", "x"}, R"(argv: "x" no_spot: true)"},
      {{"submit", "--workdir", "sub/dir", "--", "x"}, R"(argv: "x" workdir: "/home/alice/proj/sub/dir")"},
      {{"submit", "--launch", "per-node", "--", "x"}, R"(argv: "x" launch_mode: LAUNCH_MODE_PER_NODE)"},
      {{"submit", "--launch", "per-gpu", "--", "x"}, R"(argv: "x" launch_mode: LAUNCH_MODE_PER_GPU)"},
      {{"--addr", "h:1", "submit", "--gpus", "1", "--", "x"}, R"(argv: "x" resources { gpus: 1 })"},
      {{"submit", "--addr", "h:1", "--gpus", "1", "--", "x"}, R"(argv: "x" resources { gpus: 1 })"},
      // A share of a GPU is one GPU unless --gpus says more; --gpu-mem stays a filter.
      {{"submit", "--gpu-share", "30%", "--", "x"}, R"(argv: "x" resources { gpus: 1 gpu_share_milli: 300 })"},
      {{"submit", "--gpu-share", "12.5", "--gpus", "2", "--gpu-mem-limit", "10G", "--", "x"},
       R"(argv: "x" resources { gpus: 2 gpu_share_milli: 125 gpu_mem_limit_mb: 10240 })"},
      {{"submit", "--gpu-share", "100%", "--gpu-mem", "80G", "--", "x"},
       R"(argv: "x" resources { gpus: 1 gpu_share_milli: 1000 gpu_memory_mb: 81920 })"},
      {{"submit", "--gpu-share", "30%", "--gpu-sharing", "mps", "--", "x"},
       R"(argv: "x" resources { gpus: 1 gpu_share_milli: 300 gpu_sharing: GPU_SHARE_MODE_MPS })"},
      {{"submit", "--gpu-share", "30%", "--gpu-sharing", "TimeSlice", "--", "x"},
       R"(argv: "x" resources { gpus: 1 gpu_share_milli: 300 gpu_sharing: GPU_SHARE_MODE_TIMESLICE })"},
      // MIG instances: one unless --gpus says more.
      {{"submit", "--mig", "3g.40gb", "--", "x"}, R"(argv: "x" resources { gpus: 1 mig_profile: "3g.40gb" })"},
      {{"submit", "--mig", "1g.10gb", "--gpus", "3", "--", "x"},
       R"(argv: "x" resources { gpus: 3 mig_profile: "1g.10gb" })"},
      // sbatch's --output: relative to the workdir, patterns expanded on the node.
      {{"submit", "--output", "slurm-%j.out", "--", "x"}, R"(argv: "x" output: "/home/alice/proj/slurm-%j.out")"},
      {{"submit", "-o", "/logs/%x.out", "--workdir", "/w", "--", "x"},
       R"(argv: "x" workdir: "/w" output: "/logs/%x.out")"},
      // and --error: rank 0's stderr apart, the same way.
      {{"submit", "-o", "out.txt", "-e", "err-%j.txt", "--", "x"},
       R"(argv: "x" output: "/home/alice/proj/out.txt" error: "/home/alice/proj/err-%j.txt")"},
      {{"submit", "--error", "/logs/%u.err", "--", "x"}, R"(argv: "x" error: "/logs/%u.err")"},
      // A container image, its mounts (a relative source is from here) and its workdir.
      {{"submit", "--image", "nvcr.io/nvidia/pytorch:24.05-py3", "--", "python", "t.py"},
       R"(argv: ["python", "t.py"] container { image: "nvcr.io/nvidia/pytorch:24.05-py3" })"},
      {{"submit", "--image", "localhost/x:1", "--mount", "/data:/data:ro", "--mount", "ckpt:/ckpt", "--mount",
        "/scratch:/s:rw", "--image-workdir", "/workspace", "--", "x"},
       R"(argv: "x" container { image: "localhost/x:1" mounts { source: "/data" target: "/data" read_only: true }
          mounts { source: "/home/alice/proj/ckpt" target: "/ckpt" } mounts { source: "/scratch" target: "/s" }
          workdir: "/workspace" })"},
  }));
  INFO(Describe(c.args));
  FakeHost host;
  host.env["HOME_DIR"] = "/from/env";
  FakeSchedulerClient client;
  Invocation run = RunGpusched(c.args, client, host);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out == "Submitted job 42\n");
  REQUIRE(client.submits.size() == 1);
  const v1::JobSpec expected = Expected(c.expected);
  INFO("got:\n" << client.submits[0].spec().DebugString() << "expected:\n" << expected.DebugString());
  CHECK(google::protobuf::util::MessageDifferencer::Equals(client.submits[0].spec(), expected));
}

TEST_CASE("malformed submit input is a usage error that names the flag, and nothing is sent") {
  struct ErrorCase {
    std::vector<std::string> args;
    const char* message;
  };
  auto c = GENERATE(values<ErrorCase>({
      {{"submit", "--gpus", "two", "--", "x"}, "invalid --gpus \"two\": expected a whole number"},
      {{"submit", "--gpus", "-1", "--", "x"}, "invalid --gpus \"-1\": must not be negative"},
      {{"submit", "--nodes", "1.5", "--", "x"}, "invalid --nodes \"1.5\""},
      {{"submit", "--gpus-per-node", "-2", "--", "x"}, "invalid --gpus-per-node \"-2\""},
      {{"submit", "--cpus-per-gpu", "x", "--", "x"}, "invalid --cpus-per-gpu \"x\""},
      {{"submit", "--cpus", "-4", "--", "x"}, "invalid --cpus \"-4\""},
      {{"submit", "--priority", "high", "--", "x"}, "invalid --priority \"high\""},
      {{"submit", "--mem-per-gpu", "16X", "--", "x"}, "invalid --mem-per-gpu: \"16X\" is not a size"},
      {{"submit", "--mem", "-5G", "--", "x"}, "invalid --mem: \"-5G\" is not a size"},
      {{"submit", "--mem", "1.5G", "--", "x"}, "invalid --mem: \"1.5G\""},
      {{"submit", "--time", "1:99", "--", "x"}, "invalid --time: invalid time limit \"1:99\""},
      {{"submit", "--time", "soon", "--", "x"}, "invalid --time"},
      {{"submit", "--env", "=1", "--", "x"}, "invalid --env \"=1\""},
      {{"submit", "--env", "1A=1", "--", "x"}, "invalid --env \"1A=1\""},
      {{"submit", "--env", "A B=1", "--", "x"}, "invalid --env \"A B=1\""},
      {{"submit", "--env", "NOT_SET_HERE", "--", "x"}, "invalid --env \"NOT_SET_HERE\": NOT_SET_HERE is not set here"},
      {{"submit", "--launch", "per-rank", "--", "x"}, "invalid --launch \"per-rank\": expected per-gpu or per-node"},
      {{"submit", "--request-id", "", "--", "x"}, "invalid --request-id"},
      {{"submit", "--gpus", "1"}, "nothing to run"},
      {{"submit", "--"}, "nothing to run"},
      {{"submit", "--", ""}, "empty string"},
      {{"submit", "--script", "/nonexistent/job.sh"}, "cannot read --script /nonexistent/job.sh"},
      {{"submit", "--gpus"}, "--gpus"},
      {{"submit", "--gpu-share", "0%", "--", "x"},
       "invalid --gpu-share \"0%\": expected a percentage above 0 and at most 100, like 30%"},
      {{"submit", "--gpu-share", "101", "--", "x"}, "invalid --gpu-share \"101\""},
      {{"submit", "--gpu-share", "half", "--", "x"}, "invalid --gpu-share \"half\""},
      {{"submit", "--gpu-share", "0.01%", "--", "x"}, "the smallest share is 0.1%"},
      {{"submit", "--gpu-share", "30%", "--gpu-mem-limit", "lots", "--", "x"}, "invalid --gpu-mem-limit"},
      {{"submit", "--gpu-share", "30%", "--gpu-sharing", "exclusive", "--", "x"},
       "invalid --gpu-sharing \"exclusive\": expected mps or timeslice"},
      {{"submit", "--gpu-sharing", "mps", "--", "x"}, "--gpu-sharing goes with --gpu-share"},
      {{"submit", "--mig", "3g.40gb", "--gpu-share", "30%", "--", "x"}, "--mig and --gpu-share"},
      {{"submit", "--frobnicate", "--", "x"}, "--frobnicate"},
      {{"submit", "--mount", "/data:/data", "--", "x"}, "--mount needs --image"},
      {{"submit", "--image-workdir", "/w", "--", "x"}, "--image-workdir needs --image"},
      {{"submit", "--image", "", "--", "x"}, "invalid --image \"\": must not be empty"},
      {{"submit", "--error", "", "--", "x"}, "invalid --error \"\": must not be empty"},
      {{"submit", "--image", "i", "--mount", "/data", "--", "x"},
       "invalid --mount \"/data\": expected SRC:DST, SRC:DST:ro or SRC:DST:rw"},
      {{"submit", "--image", "i", "--mount", "/data:/d:rx", "--", "x"}, "invalid --mount \"/data:/d:rx\""},
      {{"submit", "--image", "i", "--mount", "/data:rel", "--", "x"}, "DST must be an absolute path in the container"},
      {{"submit", "--image", "i", "--image-workdir", "w", "--", "x"}, "invalid --image-workdir \"w\""},
  }));
  INFO(Describe(c.args));
  FakeHost host;
  FakeSchedulerClient client;
  Invocation run = RunGpusched(c.args, client, host);
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK_THAT(run.err, Catch::Contains(c.message));
  CHECK(run.err.rfind("gpusched: ", 0) == 0);
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK(client.submits.empty());
}

TEST_CASE("a script is read and sent as text, relative to the current directory") {
  const auto dir = std::filesystem::temp_directory_path() / ("gpusched-cli-script-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "job.sh") << "#!/bin/bash\necho hi\n";
    std::ofstream(dir / "empty.sh");
  }
  FakeHost host;
  host.cwd = dir.string();
  FakeSchedulerClient client;

  Invocation run = RunGpusched({"submit", "--gpus", "1", "--script", "job.sh"}, client, host);
  REQUIRE(run.exit_code == 0);
  REQUIRE(client.submits.size() == 1);
  CHECK(client.submits[0].spec().script() == "#!/bin/bash\necho hi\n");
  CHECK(client.submits[0].spec().argv_size() == 0);

  run = RunGpusched({"submit", "--script", "job.sh", "--", "python", "x.py"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("not both"));

  run = RunGpusched({"submit", "--script", "empty.sh"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("is empty"));
  CHECK(client.submits.size() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("every submit carries an idempotency key: the given one, or a fresh random one") {
  FakeHost host;
  FakeSchedulerClient client;
  REQUIRE(RunGpusched({"submit", "--request-id", "retry-7", "--", "x"}, client, host).exit_code == 0);
  REQUIRE(RunGpusched({"submit", "--", "x"}, client, host).exit_code == 0);
  REQUIRE(RunGpusched({"submit", "--", "x"}, client, host).exit_code == 0);
  REQUIRE(client.submits.size() == 3);
  CHECK(client.submits[0].client_request_id() == "retry-7");
  CHECK(client.submits[1].client_request_id().size() == 32);
  CHECK(client.submits[1].client_request_id() != client.submits[2].client_request_id());
}

TEST_CASE("sizes parse as MB with binary suffixes and format back") {
  struct Case {
    const char* text;
    int64_t mb;
  };
  auto c = GENERATE(values<Case>({{"512", 512},
                                  {"512M", 512},
                                  {"512m", 512},
                                  {"16G", 16384},
                                  {"16GB", 16384},
                                  {"1T", 1048576},
                                  {"0", 0},
                                  {" 8G ", 8192}}));
  INFO(c.text);
  auto mb = ParseSizeMb(c.text);
  REQUIRE(mb.ok());
  CHECK(*mb == c.mb);

  for (const char* bad : {"", "G", "16X", "-1", "1.5G", "16 G", "99999999999999999999", "9223372036854775807T"}) {
    INFO(bad);
    CHECK_FALSE(ParseSizeMb(bad).ok());
  }
  CHECK(FormatSizeMb(512) == "512M");
  CHECK(FormatSizeMb(16384) == "16G");
  CHECK(FormatSizeMb(1536) == "1.5G");
  CHECK(FormatSizeMb(386000) == "377G");
  CHECK(FormatSizeMb(2 * 1048576) == "2T");
}
