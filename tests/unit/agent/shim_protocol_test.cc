#include "agent/runner/shim_protocol.h"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <string>

using namespace gpusched::agent;

namespace {

ShimSpec TwoRanks() {
  ShimSpec spec;
  spec.job_id = 42;
  spec.lease = absl::Milliseconds(22500);
  ProcessSpec a;
  a.rank = 0;
  a.executable = "/usr/bin/python3";
  a.argv = {"python3", "train.py", "--lr", ""};
  a.env = {"RANK=0", "SECRET=a\nb=c", std::string("NUL\0INSIDE", 10)};
  a.workdir = "/home/ml";
  a.log_path = "/var/lib/gpusched/logs/job-42/rank-0.log";
  a.credentials = Credentials{"ml", 1000, 1000, {1000, 44, 27}};
  a.cpus = {0, 1, 2, 3};
  a.stdin_path = "/var/lib/gpusched/logs/job-42/stdin";
  a.cleanup_argv = {"/usr/bin/podman", "rm", "--force", "gpusched-42-0"};
  a.output_path = "/home/ml/slurm-42.out";
  a.error_path = "/home/ml/slurm-42.err";
  ProcessSpec b = a;
  b.rank = 1;
  b.credentials.reset();
  b.cpus.clear();
  b.cleanup_argv.clear();
  spec.ranks = {a, b};
  return spec;
}

}  // namespace

TEST_CASE("a shim spec comes back as it was written, bytes and all") {
  const ShimSpec spec = TwoRanks();
  auto decoded = DecodeShimSpec(EncodeShimSpec(spec));
  REQUIRE(decoded.ok());
  CHECK(decoded->job_id == 42);
  CHECK(decoded->lease == absl::Milliseconds(22500));
  REQUIRE(decoded->ranks.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const ProcessSpec& want = spec.ranks[i];
    const ProcessSpec& got = decoded->ranks[i];
    CHECK(got.rank == want.rank);
    CHECK(got.executable == want.executable);
    CHECK(got.argv == want.argv);
    CHECK(got.env == want.env);
    CHECK(got.workdir == want.workdir);
    CHECK(got.log_path == want.log_path);
    CHECK(got.cpus == want.cpus);
    CHECK(got.stdin_path == want.stdin_path);
    CHECK(got.cleanup_argv == want.cleanup_argv);
    CHECK(got.output_path == want.output_path);
    CHECK(got.error_path == want.error_path);
    REQUIRE(got.credentials.has_value() == want.credentials.has_value());
    if (want.credentials) {
      CHECK(got.credentials->user == want.credentials->user);
      CHECK(got.credentials->uid == want.credentials->uid);
      CHECK(got.credentials->gid == want.credentials->gid);
      CHECK(got.credentials->groups == want.credentials->groups);
    }
  }
}

TEST_CASE("a truncated or padded shim spec is refused, at every length") {
  const std::string bytes = EncodeShimSpec(TwoRanks());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto decoded = DecodeShimSpec(bytes.substr(0, n));
    INFO("first " << n << " bytes");
    CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK_THAT(std::string(DecodeShimSpec(bytes + "x").status().message()), Catch::Contains("bytes after its last rank"));
}

TEST_CASE("a spec from another version names both, instead of being misread") {
  auto decoded = DecodeShimSpec("gpusched-shim-spec 3\n...");
  CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(decoded.status().message()), Catch::Contains("gpusched-shim-spec 4") &&
                                                          Catch::Contains("gpusched-shim-spec 3") &&
                                                          Catch::Contains("different versions"));
}

TEST_CASE("a huge count in a corrupt spec is refused without allocating it") {
  std::string bytes = EncodeShimSpec(TwoRanks());
  // The rank count follows the magic line, the job id and the lease.
  const size_t count_at = bytes.find('\n') + 1 + 16;
  bytes.replace(count_at, 8, std::string(8, '\xff'));
  CHECK(DecodeShimSpec(bytes).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("the shim's reply: the ranks' groups, or its error as it said it") {
  auto groups = ParseShimReply("started 1234 1240\n");
  REQUIRE(groups.ok());
  CHECK(*groups == std::vector<pid_t>{1234, 1240});
  auto failed = ParseShimReply("failed rank 1: exec \"trian.py\": No such file or directory\n");
  CHECK(failed.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(failed.status().message() == "rank 1: exec \"trian.py\": No such file or directory");
  CHECK_THAT(std::string(ParseShimReply("").status().message()), Catch::Contains("exited without a word"));
  CHECK_FALSE(ParseShimReply("started 1 x").ok());
}

TEST_CASE("the exits file is read line by line, a half-written last line left for later") {
  std::string text = FormatShimLine(900, 12345) + FormatGroupLine({0, 901, 12346}) + FormatGroupLine({1, 902, 12347}) +
                     FormatRankExit({1, 3 << 8, 0}) + "garbage line\n" + FormatRankExit({0, 0, 10});
  ShimExits exits = ParseShimExits(text + "exi");
  CHECK(exits.shim_pid == 900);
  CHECK(exits.shim_start == 12345);
  REQUIRE(exits.groups.size() == 2);
  CHECK(exits.groups[1].pgid == 902);
  REQUIRE(exits.exits.size() == 2);
  CHECK(exits.exits[0].rank == 1);
  CHECK(WEXITSTATUS(exits.exits[0].wait_status) == 3);
  CHECK(exits.exits[1].lost_errno == 10);
  CHECK_FALSE(exits.ended);
  exits = ParseShimExits(text + std::string(kShimFencedLine) + std::string(kShimEndLine));
  CHECK(exits.fenced);
  CHECK(exits.ended);
}
