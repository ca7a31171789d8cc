#include "agent/runner/launch_plan.h"

#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "test_util.h"
#include "tests/skip.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;
namespace v1 = gpusched::v1;

namespace {

LaunchContext Context(const TempDir& dir) {
  LaunchContext c;
  c.node_name = "node-a";
  c.log_dir = dir.path();
  c.advertise_address = "127.0.0.1";
  c.agent_env = {{"PATH", "/usr/bin:/bin"}};
  return c;
}

std::string OwnHome() {
  const passwd* pw = getpwuid(geteuid());
  std::string home = pw && pw->pw_dir ? pw->pw_dir : "";
  struct stat st;
  return !home.empty() && stat(home.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? home : "/tmp";
}

}  // namespace

TEST_CASE("a command is looked up in the job's PATH, not the agent's") {
  TempDir dir;
  REQUIRE(mkdir((dir / "bin").c_str(), 0755) == 0);
  WriteFile(dir / "bin/mytool", "#!/bin/sh\necho hi\n");
  REQUIRE(chmod((dir / "bin/mytool").c_str(), 0755) == 0);

  v1::LaunchJob launch = MakeLaunch(1, {"mytool", "--flag"});
  (*launch.mutable_spec()->mutable_env())["PATH"] = dir / "bin";
  auto plan = PrepareLaunch(launch, Context(dir));
  REQUIRE(plan.ok());
  REQUIRE(plan->processes.size() == 1);
  CHECK(plan->processes[0].executable == dir / "bin/mytool");
  CHECK(plan->processes[0].argv == std::vector<std::string>{"mytool", "--flag"});

  auto missing = PrepareLaunch(MakeLaunch(2, {"gpusched-no-such-command"}), Context(dir));
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK(missing.status().message() == "exec \"gpusched-no-such-command\": No such file or directory");
}

TEST_CASE("a script is written next to the logs and run by its #! line or by /bin/sh") {
  TempDir dir;
  v1::LaunchJob launch = MakeLaunch(3, {});
  launch.mutable_spec()->set_script("echo plain\n");
  auto plan = PrepareLaunch(launch, Context(dir));
  REQUIRE(plan.ok());
  const std::string script = dir / "job-3/script";
  CHECK(plan->job_log_dir == dir / "job-3");
  CHECK(plan->processes[0].argv == std::vector<std::string>{"/bin/sh", script});
  CHECK(ReadFile(script) == "echo plain\n");
  struct stat st;
  REQUIRE(stat(script.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  launch.set_job_id(4);
  launch.mutable_spec()->set_script("#!/bin/bash\necho bash\n");
  plan = PrepareLaunch(launch, Context(dir));
  REQUIRE(plan.ok());
  CHECK(plan->processes[0].argv == std::vector<std::string>{dir / "job-4/script"});
  CHECK(plan->processes[0].executable == dir / "job-4/script");
}

TEST_CASE("a job needs exactly one of argv and script") {
  TempDir dir;
  v1::LaunchJob neither = MakeLaunch(5, {});
  CHECK(PrepareLaunch(neither, Context(dir)).status().code() == absl::StatusCode::kInvalidArgument);
  v1::LaunchJob both = MakeLaunch(6, {"true"});
  both.mutable_spec()->set_script("true");
  CHECK(PrepareLaunch(both, Context(dir)).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("workdir: as given, relative to home, or home when unset") {
  TempDir dir;
  v1::LaunchJob launch = MakeLaunch(7, {"true"});
  auto plan = PrepareLaunch(launch, Context(dir));
  REQUIRE(plan.ok());
  CHECK(plan->processes[0].workdir == OwnHome());

  launch.mutable_spec()->set_workdir("/srv/data");
  CHECK(PrepareLaunch(launch, Context(dir))->processes[0].workdir == "/srv/data");
  launch.mutable_spec()->set_workdir("proj");
  CHECK(PrepareLaunch(launch, Context(dir))->processes[0].workdir == OwnHome() + "/proj");
}

TEST_CASE("each rank gets its own log file, named by its global rank, created up front") {
  TempDir dir;
  v1::LaunchJob launch = MakeLaunch(8, {"true"}, {2, 3});
  launch.set_rank_offset(6);
  launch.set_world_size(8);
  auto plan = PrepareLaunch(launch, Context(dir));
  REQUIRE(plan.ok());
  REQUIRE(plan->processes.size() == 2);
  CHECK(plan->processes[0].rank == 6);
  CHECK(plan->processes[1].rank == 7);
  CHECK(plan->processes[1].log_path == dir / "job-8/rank-7.log");
  CHECK(access((dir / "job-8/rank-6.log").c_str(), F_OK) == 0);
  CHECK(access((dir / "job-8/rank-7.log").c_str(), F_OK) == 0);

  // A log that cannot be created fails the launch before any process exists.
  REQUIRE(mkdir((dir / "job-9").c_str(), 0755) == 0);
  REQUIRE(mkdir((dir / "job-9/rank-1.log").c_str(), 0755) == 0);
  launch.set_job_id(9);
  launch.set_rank_offset(0);
  auto blocked = PrepareLaunch(launch, Context(dir));
  REQUIRE_FALSE(blocked.ok());
  CHECK_THAT(std::string(blocked.status().message()), Catch::Contains("rank-1.log"));
}

TEST_CASE("the job's user: the agent's own, another one only when the agent is root") {
  TempDir dir;
  v1::LaunchJob launch = MakeLaunch(10, {"true"});
  launch.mutable_spec()->set_user("gpusched-no-such-user");
  auto unknown = PrepareLaunch(launch, Context(dir));
  REQUIRE_FALSE(unknown.ok());
  if (geteuid() == 0) {
    CHECK_THAT(std::string(unknown.status().message()), Catch::Contains("no user \"gpusched-no-such-user\""));
    launch.mutable_spec()->set_user("nobody");
    auto plan = PrepareLaunch(launch, Context(dir));
    REQUIRE(plan.ok());
    REQUIRE(plan->processes[0].credentials.has_value());
    CHECK(plan->processes[0].credentials->uid == getpwnam("nobody")->pw_uid);
    // nobody's home does not exist: /tmp rather than a chdir failure.
    CHECK(plan->processes[0].workdir == "/tmp");
  } else {
    CHECK_THAT(std::string(unknown.status().message()), Catch::Contains("cannot start jobs as gpusched-no-such-user"));
  }
}

TEST_CASE("files planted in the job's log directory are not followed") {
  TempDir dir;
  WriteFile(dir / "precious", "keep me\n");
  REQUIRE(mkdir((dir / "job-11").c_str(), 0755) == 0);
  REQUIRE(symlink((dir / "precious").c_str(), (dir / "job-11/rank-0.log").c_str()) == 0);
  auto symlinked = PrepareLaunch(MakeLaunch(11, {"true"}), Context(dir));
  REQUIRE_FALSE(symlinked.ok());
  CHECK_THAT(std::string(symlinked.status().message()), Catch::Contains("is a symbolic link"));

  REQUIRE(mkdir((dir / "job-12").c_str(), 0755) == 0);
  REQUIRE(link((dir / "precious").c_str(), (dir / "job-12/script").c_str()) == 0);
  v1::LaunchJob script = MakeLaunch(12, {});
  script.mutable_spec()->set_script("echo overwritten\n");
  auto hardlinked = PrepareLaunch(script, Context(dir));
  REQUIRE_FALSE(hardlinked.ok());
  CHECK_THAT(std::string(hardlinked.status().message()), Catch::Contains("is not a plain file"));
  CHECK(ReadFile(dir / "precious") == "keep me\n");
}

TEST_CASE("a planted job directory is refused, and nothing is chowned through it") {
  TempDir dir;
  TempDir elsewhere;  // what a link in the log root would hand root to chown
  struct stat before {};
  REQUIRE(stat(elsewhere.path().c_str(), &before) == 0);
  REQUIRE(symlink(elsewhere.path().c_str(), (dir / "job-13").c_str()) == 0);
  v1::LaunchJob launch = MakeLaunch(13, {"true"});
  if (geteuid() == 0) launch.mutable_spec()->set_user("nobody");
  auto linked = PrepareLaunch(launch, Context(dir));
  REQUIRE_FALSE(linked.ok());
  CHECK(std::string(linked.status().message()) ==
        "log directory \"" + dir / "job-13" + "\" is a symbolic link or not a directory: refused");
  struct stat after {};
  REQUIRE(stat(elsewhere.path().c_str(), &after) == 0);
  CHECK(after.st_uid == before.st_uid);
  CHECK(after.st_gid == before.st_gid);
  CHECK_FALSE(std::filesystem::exists(elsewhere / "rank-0.log"));

  if (geteuid() != 0) {
    GPUSCHED_SKIP("the rest of this case: not root, cannot make a directory another user owns");
  }
  // Made by someone else (here: daemon, uid 1) for a job of nobody.
  REQUIRE(mkdir((dir / "job-14").c_str(), 0755) == 0);
  REQUIRE(chown((dir / "job-14").c_str(), 1, 1) == 0);
  v1::LaunchJob foreign = MakeLaunch(14, {"true"});
  foreign.mutable_spec()->set_user("nobody");
  auto refused = PrepareLaunch(foreign, Context(dir));
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("exists and belongs to uid 1, neither the agent nor the job's user"));
  // The job's user's own, from an earlier attempt, is reused.
  REQUIRE(chown((dir / "job-14").c_str(), getpwnam("nobody")->pw_uid, getpwnam("nobody")->pw_gid) == 0);
  CHECK(PrepareLaunch(foreign, Context(dir)).ok());
}

TEST_CASE("a launch that would run as uid 0 needs the daemon's leave, whatever the user is called") {
  if (geteuid() != 0) {
    GPUSCHED_SKIP("not root, so no launch can run as uid 0 here");
  }
  TempDir dir;
  v1::LaunchJob launch = MakeLaunch(15, {"true"});
  launch.set_root_allowed(false);
  for (const char* user : {"", "root"}) {
    INFO("user \"" << user << "\"");
    launch.mutable_spec()->set_user(user);
    auto refused = PrepareLaunch(launch, Context(dir));
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == absl::StatusCode::kPermissionDenied);
    CHECK_THAT(
        std::string(refused.status().message()),
        Catch::Contains("would run as uid 0 (user \"root\") on node-a, and the daemon does not allow jobs as root"));
  }
  launch.set_root_allowed(true);
  CHECK(PrepareLaunch(launch, Context(dir)).ok());
  launch.set_root_allowed(false);
  launch.mutable_spec()->set_user("nobody");
  CHECK(PrepareLaunch(launch, Context(dir)).ok());
}

TEST_CASE("a launch with a GPU share is refused on a node that does not share its GPUs") {
  TempDir dir;
  v1::LaunchJob launch = MakeLaunch(7, {"/bin/true"}, {0});
  launch.set_gpu_share_milli(300);
  launch.set_gpu_mem_limit_mb(8000);
  auto refused = PrepareLaunch(launch, Context(dir));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message() ==
        "the job asks for 30% of GPU 0, but node-a does not share it (gpu_share_mode = exclusive)");
  LaunchContext sliced = Context(dir);
  GpuSharing sharing;
  sharing.modes[0] = v1::GPU_SHARE_MODE_TIMESLICE;
  sliced.sharing = &sharing;
  auto plan = PrepareLaunch(launch, sliced);
  REQUIRE(plan.ok());
  const std::vector<std::string>& env = plan->processes[0].env;
  CHECK(std::find(env.begin(), env.end(), "GPUSCHED_GPU_SHARING=timeslice") != env.end());
}

TEST_CASE("rank 0's output goes to the job's --output file, its patterns filled in; the other ranks keep their logs") {
  TempDir dir;
  v1::LaunchJob launch = MakeLaunch(12, {"true"}, {0, 1});
  launch.mutable_spec()->set_name("train");
  launch.mutable_spec()->set_output(dir / "out-%j-%x-%%.log");
  auto plan = PrepareLaunch(launch, Context(dir));
  REQUIRE(plan.ok());
  REQUIRE(plan->processes.size() == 2);
  CHECK(plan->processes[0].output_path == dir / "out-12-train-%.log");
  CHECK(plan->processes[1].output_path.empty());
  CHECK(plan->processes[0].error_path.empty());

  launch.mutable_spec()->set_error(dir / "err-%j.log");
  auto apart = PrepareLaunch(launch, Context(dir));
  REQUIRE(apart.ok());
  CHECK(apart->processes[0].error_path == dir / "err-12.log");
  CHECK(apart->processes[1].error_path.empty());
}

TEST_CASE("with an error file, rank 0's stderr goes there and its stdout where it went") {
  TempDir dir;
  ProcessSpec spec;
  spec.executable = "/bin/sh";
  spec.argv = {"/bin/sh", "-c", "echo out; echo err >&2"};
  spec.workdir = "/";
  spec.log_path = dir / "rank-0.log";
  spec.error_path = dir / "err.log";
  auto Run = [&] {
    auto pid = SpawnProcess(spec);
    REQUIRE(pid.ok());
    int status = 0;
    REQUIRE(waitpid(*pid, &status, 0) == *pid);
  };
  Run();
  CHECK(ReadFile(dir / "rank-0.log") == "out\n");
  CHECK(ReadFile(dir / "err.log") == "err\n");
  spec.output_path = dir / "out.log";
  Run();
  CHECK(ReadFile(dir / "out.log") == "out\n");
  CHECK(ReadFile(dir / "err.log") == "err\nerr\n");  // appended, as --output is

  spec.error_path = dir / "no-such-dir/err.log";
  auto refused = SpawnProcess(spec);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("error file \"" + dir / "no-such-dir/err.log" + "\": No such file or directory"));
}

TEST_CASE("a process whose output file cannot be opened does not start, and says which file") {
  TempDir dir;
  ProcessSpec spec;
  spec.executable = "/bin/sh";
  spec.argv = {"/bin/sh", "-c", "echo to the file"};
  spec.workdir = "/";
  spec.log_path = dir / "rank-0.log";
  spec.output_path = dir / "out.log";
  auto pid = SpawnProcess(spec);
  REQUIRE(pid.ok());
  int status = 0;
  REQUIRE(waitpid(*pid, &status, 0) == *pid);
  CHECK(ReadFile(dir / "out.log") == "to the file\n");
  CHECK(ReadFile(dir / "rank-0.log").empty());

  spec.output_path = dir / "no-such-dir/out.log";
  auto refused = SpawnProcess(spec);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("output file \"" + dir / "no-such-dir/out.log" + "\": No such file or directory"));
}
