// A full state disk (the SQLite file's, or PostgreSQL's): the daemon refuses
// changes and keeps serving reads, and takes changes again once there is room,
// losing nothing it had accepted.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "tests/integration/test_cluster.h"
#include "tests/skip.h"
#include "tests/support/postgres_server.h"
#include "tests/support/temp_dir.h"

using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

namespace {

// A submit over the cluster's stub; `deadline_ms` bounds the wait for its commit.
grpc::Status Submit(const TestCluster& cluster, const std::string& request_id, const std::string& command,
                    size_t padding, int deadline_ms, v1::SubmitJobResponse* response) {
  v1::SubmitJobRequest request;
  request.set_client_request_id(request_id);
  request.mutable_spec()->set_workdir("/tmp");
  request.mutable_spec()->add_argv("/bin/sh");
  request.mutable_spec()->add_argv("-c");
  request.mutable_spec()->add_argv(command);
  // Bytes for the state file to hold: the disk fills sooner.
  if (padding > 0) request.mutable_spec()->add_argv(std::string(padding, 'p'));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
  return cluster.stub().SubmitJob(&ctx, request, response);
}

// Fills the filesystem at `dir` with one file; returns its path.
std::string Fill(const std::string& dir) {
  const std::string filler = dir + "/filler";
  const int fd = open(filler.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  REQUIRE(fd >= 0);
  const std::string block(65536, 'x');
  while (write(fd, block.data(), block.size()) > 0) {
  }
  const std::string small(512, 'x');
  while (write(fd, small.data(), small.size()) > 0) {
  }
  close(fd);
  return filler;
}

// Submits padded jobs until one is refused or not answered in time (the
// disk is full); returns its request id, and its status in `status`.
std::string SubmitUntilRefused(const TestCluster& cluster, grpc::Status* status) {
  std::string request;
  *status = grpc::Status::OK;
  for (int i = 0; i < 400 && status->ok(); ++i) {
    request = "fill-" + std::to_string(i);
    v1::SubmitJobResponse response;
    *status = Submit(cluster, request, "exit 0", 16384, 2000, &response);
  }
  return request;
}

// With room again: a new submit is taken and runs, and the submit whose reply
// never came was taken: sent again under its request id, it is a
// duplicate, not a second job.
void TakesChangesAgain(const TestCluster& cluster, const std::string& stuck_request) {
  v1::SubmitJobResponse again;
  grpc::Status after;
  for (int i = 0; i < 100; ++i) {
    after = Submit(cluster, "after", "exit 0", 0, 5000, &again);
    if (after.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(after.ok());
  CHECK(cluster.WaitForEnd(again.job().id()).state() == v1::JOB_STATE_COMPLETED);
  v1::SubmitJobResponse retried;
  REQUIRE(Submit(cluster, stuck_request, "exit 0", 16384, 5000, &retried).ok());
  CHECK(retried.duplicate());
}

// A small tmpfs mounted for one test, unmounted and removed at its end.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(const std::string& options) {
    char tmpl[] = "/tmp/gpusched-fulldisk-XXXXXX";
    path_ = mkdtemp(tmpl);
    if (mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      why_not_ = std::string("cannot mount a tmpfs here: ") + std::strerror(errno);
    }
  }
  ~SmallTmpfs() {
    if (why_not_.empty()) umount2(path_.c_str(), MNT_DETACH);
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  const std::string& why_not() const { return why_not_; }  // empty: mounted

 private:
  std::string path_;
  std::string why_not_;
};

}  // namespace

TEST_CASE("a full state disk: changes are refused with RESOURCE_EXHAUSTED, reads go on, and all resumes with room",
          "[integration]") {
  if (geteuid() != 0) {
    GPUSCHED_SKIP("not root, cannot mount a small tmpfs for the state");
  }
  const SmallTmpfs disk("size=4m");
  if (!disk.why_not().empty()) GPUSCHED_SKIP(disk.why_not());
  const std::string& state = disk.path();

  TestCluster cluster({{"node-a", 2}}, {"--state-dir", state});
  const uint64_t before = cluster.Submit({"--", "/bin/true"});
  REQUIRE(cluster.WaitForEnd(before).state() == v1::JOB_STATE_COMPLETED);
  const std::string gate = cluster.dir() + "/gate";
  const uint64_t running =
      cluster.Submit({"--", "/bin/sh", "-c", "while [ ! -e " + gate + " ]; do sleep 0.05; done; exit 0"});
  cluster.WaitForState(running, v1::JOB_STATE_RUNNING);

  const std::string filler = Fill(state);
  // Changes go on being accepted while the state file still has room in it;
  // the first that does not fit waits for its commit, which fails.
  grpc::Status status;
  const std::string stuck_request = SubmitUntilRefused(cluster, &status);
  REQUIRE_FALSE(status.ok());
  CHECK((status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED));

  // Now every change is refused at once, saying why.
  v1::SubmitJobResponse refused_response;
  const grpc::Status refused = Submit(cluster, "refused", "exit 0", 0, 5000, &refused_response);
  CHECK(refused.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK_THAT(refused.error_message(), Catch::Contains("cannot write its state") && Catch::Contains("full"));
  const auto cancel = cluster.Cli({"cancel", std::to_string(running)});
  CHECK(cancel.exit_code != 0);
  CHECK_THAT(cancel.err, Catch::Contains("cannot write its state"));

  // Reads still work, and the daemon is up.
  CHECK(cluster.GetJob(before).state() == v1::JOB_STATE_COMPLETED);
  CHECK(cluster.Cli({"status", std::to_string(running)}).exit_code == 0);
  CHECK(cluster.Cli({"nodes"}).exit_code == 0);
  // The job that was running ends meanwhile; its end is kept in memory.
  std::ofstream(gate) << "go\n";
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  CHECK_THAT(cluster.DaemonLog(), Catch::Contains("cannot write scheduler state"));

  // Room again: what was accepted is written, and changes are taken again.
  REQUIRE(unlink(filler.c_str()) == 0);
  CHECK(cluster.WaitForEnd(running, 30).state() == v1::JOB_STATE_COMPLETED);
  TakesChangesAgain(cluster, stuck_request);
  CHECK_THAT(cluster.DaemonLog(), Catch::Contains("scheduler state written again"));
}

TEST_CASE("a full PostgreSQL disk: changes are refused with RESOURCE_EXHAUSTED, and all resumes with room",
          "[integration]") {
  if (geteuid() != 0) {
    GPUSCHED_SKIP("not root, cannot mount a small tmpfs for PostgreSQL's data");
  }
  const SmallTmpfs disk("size=96m,mode=0755");  // PostgreSQL's own files take about 40 MB
  if (!disk.why_not().empty()) GPUSCHED_SKIP(disk.why_not());
  auto pg = gpusched::testing::PostgresServer::Start(disk.path());
  if (absl::IsNotFound(pg.status())) GPUSCHED_SKIP(pg.status().message());
  REQUIRE(pg.ok());
  auto url = (*pg)->CreateDatabase("gpusched");
  REQUIRE(url.ok());

  TestCluster cluster({{"node-a", 2}}, {"--store", *url});
  const uint64_t before = cluster.Submit({"--", "/bin/true"});
  REQUIRE(cluster.WaitForEnd(before).state() == v1::JOB_STATE_COMPLETED);

  const std::string filler = Fill(disk.path());
  grpc::Status status;
  const std::string stuck_request = SubmitUntilRefused(cluster, &status);
  INFO((*pg)->Log());
  REQUIRE_FALSE(status.ok());
  v1::SubmitJobResponse refused_response;
  const grpc::Status refused = Submit(cluster, "refused", "exit 0", 0, 5000, &refused_response);
  CHECK(refused.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK_THAT(refused.error_message(),
             Catch::Contains("cannot write its state") && Catch::Contains("No space left on device"));
  CHECK(cluster.GetJob(before).state() == v1::JOB_STATE_COMPLETED);  // reads go on

  REQUIRE(unlink(filler.c_str()) == 0);
  TakesChangesAgain(cluster, stuck_request);
}

TEST_CASE("a second daemon on the same SQLite store, with a state directory of its own, is refused at start",
          "[integration]") {
  gpusched::testing::TempDir dir;
  const std::string db = (dir.path() / "shared.db").string();
  TestCluster cluster({{"node-a", 1}}, {"--store", "sqlite://" + db});
  REQUIRE(cluster.WaitForEnd(cluster.Submit({"--", "/bin/true"})).state() == v1::JOB_STATE_COMPLETED);
  const gpusched::testing::CommandResult second =
      gpusched::testing::RunCommand({GPUSCHEDD_BIN, "serve", "--listen", "127.0.0.1:0", "--state-dir",
                                     (dir.path() / "other-state").string(), "--store", "sqlite://" + db});
  CHECK(second.exit_code == 1);
  CHECK_THAT(second.err, Catch::Contains("another gpuschedd is already using the SQLite store " + db));
}
