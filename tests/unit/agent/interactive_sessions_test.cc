// Sessions on the agent: a command started from the job's rank-0 process,
// its output and exit reported in order, its input, and its end when the
// job ends or the client goes away.
#include "agent/runner/interactive_sessions.h"

#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "test_util.h"

using namespace gpusched::agent;
namespace v1 = gpusched::v1;

namespace {

// Collects what the sessions send, from their threads.
struct Outputs {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<v1::SessionOutput> all;

  InteractiveSessions::SendFn Sink() {
    return [this](const v1::SessionOutput& out) {
      std::lock_guard<std::mutex> lock(mu);
      all.push_back(out);
      cv.notify_all();
    };
  }
  // The exit of `session`, waiting up to 10 s for it.
  std::optional<v1::SessionExit> ExitOf(uint64_t session) {
    std::unique_lock<std::mutex> lock(mu);
    std::optional<v1::SessionExit> found;
    cv.wait_for(lock, std::chrono::seconds(10), [&] {
      for (const auto& o : all) {
        if (o.session_id() == session && o.has_exit()) found = o.exit();
      }
      return found.has_value();
    });
    return found;
  }
  std::string StdoutOf(uint64_t session) {
    std::lock_guard<std::mutex> lock(mu);
    std::string text;
    for (const auto& o : all) {
      if (o.session_id() == session && o.has_stdout()) text += o.stdout();
    }
    return text;
  }
};

ProcessSpec RankZero() {
  ProcessSpec p;
  p.env = {"PATH=/usr/bin:/bin", "RANK=0", "CUDA_VISIBLE_DEVICES=3"};
  p.workdir = "/tmp";
  return p;
}

v1::SessionInput Start(uint64_t session, uint64_t job, std::vector<std::string> argv) {
  v1::SessionInput in;
  in.set_session_id(session);
  in.set_job_id(job);
  in.mutable_start()->set_job_id(job);
  for (const std::string& a : argv) in.mutable_start()->add_argv(a);
  return in;
}

}  // namespace

TEST_CASE("a session runs its command with rank 0's environment and reports its output, then its exit") {
  Outputs outputs;
  InteractiveSessions sessions(outputs.Sink(), [](uint64_t job) -> std::optional<ProcessSpec> {
    if (job == 7) return RankZero();
    return std::nullopt;
  });
  sessions.Handle(Start(1, 7, {"sh", "-c", "read x; echo $x $RANK $CUDA_VISIBLE_DEVICES $(pwd); exit 4"}));
  v1::SessionInput input;
  input.set_session_id(1);
  input.set_stdin("hi\n");
  sessions.Handle(input);
  auto exit = outputs.ExitOf(1);
  REQUIRE(exit);
  CHECK(exit->exit_code() == 4);
  CHECK(exit->message().empty());
  CHECK(outputs.StdoutOf(1) == "hi 0 3 /tmp\n");

  // A job that does not run here cannot have sessions.
  sessions.Handle(Start(2, 8, {"true"}));
  auto refused = outputs.ExitOf(2);
  REQUIRE(refused);
  CHECK(refused->exit_code() == -1);
  CHECK_THAT(refused->message(), Catch::Contains("job 8 has no process here"));

  // Nor a command that is not there.
  sessions.Handle(Start(3, 7, {"gpusched-no-such-command"}));
  auto missing = outputs.ExitOf(3);
  REQUIRE(missing);
  CHECK_THAT(missing->message(), Catch::Contains("gpusched-no-such-command"));
}

TEST_CASE("a session ends when its job ends, or its client hangs up, and says why") {
  Outputs outputs;
  InteractiveSessions sessions(outputs.Sink(), [](uint64_t) -> std::optional<ProcessSpec> { return RankZero(); });
  sessions.Handle(Start(1, 7, {"sleep", "300"}));
  sessions.Handle(Start(2, 7, {}));  // holding only, as under gpusched alloc
  sessions.Handle(Start(3, 9, {"sleep", "300"}));
  sessions.EndJob(7, "the job reached its time limit");
  auto ended = outputs.ExitOf(1);
  REQUIRE(ended);
  CHECK(ended->exit_code() == 128 + SIGHUP);
  CHECK(ended->message() == "the job reached its time limit");
  auto held = outputs.ExitOf(2);
  REQUIRE(held);
  CHECK(held->message() == "the job reached its time limit");

  v1::SessionInput hangup;
  hangup.set_session_id(3);
  hangup.set_hangup(true);
  sessions.Handle(hangup);
  auto hung_up = outputs.ExitOf(3);
  REQUIRE(hung_up);
  CHECK(hung_up->message() == "the client went away");
}
