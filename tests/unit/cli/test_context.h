#pragma once

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/local_context.h"
#include "common/proto_time.h"
#include "fake_scheduler_client.h"

namespace gpusched::cli::testing {

// A fixed moment so that rendered durations are exact.
inline absl::Time TestNow() { return absl::FromUnixSeconds(1714572000); }  // 2024-05-01 14:00:00 UTC

// A made-up machine: its own environment, user, directory and a clock that
// only sleeps on paper.
struct FakeHost {
  std::map<std::string, std::string> env;
  std::string user = "alice";
  std::string cwd = "/home/alice/proj";
  std::string home = "/home/alice";
  std::string system_config_dir = "/nonexistent/etc/gpusched";
  absl::Time now = TestNow();
  absl::Duration slept = absl::ZeroDuration();

  LocalContext Context() {
    LocalContext ctx;
    ctx.getenv = [this](const std::string& name) -> std::optional<std::string> {
      auto it = env.find(name);
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    ctx.user = user;
    ctx.cwd = cwd;
    ctx.home = home;
    ctx.system_config_dir = system_config_dir;
    ctx.now = [this] { return now; };
    ctx.sleep = [this](absl::Duration d) {
      slept += d;
      now += d;
    };
    ctx.time_zone = absl::UTCTimeZone();
    return ctx;
  }
};

// What one `gpusched ...` invocation did.
struct Invocation {
  int exit_code = -1;
  std::string out;
  std::string err;
  std::string address;  // what the client was created for
  bool tls = false;     // whether it was given TLS material
};

// Runs the real command line against `client`, which stays owned by the test.
inline Invocation RunGpusched(const std::vector<std::string>& args, FakeSchedulerClient& client, FakeHost& host) {
  Invocation result;
  std::ostringstream out, err;
  LocalContext ctx = host.Context();
  ClientFactory factory = [&](const DaemonEndpoint& endpoint) -> std::unique_ptr<SchedulerClient> {
    result.address = endpoint.address;
    result.tls = endpoint.tls.has_value();
    struct Borrowed final : SchedulerClient {
      explicit Borrowed(SchedulerClient& inner) : c(inner) {}
      SchedulerClient& c;
      absl::StatusOr<v1::SubmitJobResponse> SubmitJob(const v1::SubmitJobRequest& r) override { return c.SubmitJob(r); }
      absl::StatusOr<v1::Job> GetJob(uint64_t id) override { return c.GetJob(id); }
      absl::StatusOr<v1::ListJobsResponse> ListJobs(const v1::ListJobsRequest& r) override { return c.ListJobs(r); }
      absl::StatusOr<v1::CancelJobResponse> CancelJob(const v1::CancelJobRequest& r) override { return c.CancelJob(r); }
      absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& r) override { return c.ListNodes(r); }
      absl::StatusOr<v1::Node> DrainNode(const v1::DrainNodeRequest& r) override { return c.DrainNode(r); }
      absl::StatusOr<v1::Node> ResumeNode(const v1::ResumeNodeRequest& r) override { return c.ResumeNode(r); }
      absl::StatusOr<v1::Node> ProbeNode(const v1::ProbeNodeRequest& r) override { return c.ProbeNode(r); }
      absl::StatusOr<v1::Node> InterruptNode(const v1::InterruptNodeRequest& r) override { return c.InterruptNode(r); }
      absl::StatusOr<v1::ListPoolsResponse> ListPools() override { return c.ListPools(); }
      absl::StatusOr<v1::Job> HoldJob(const v1::HoldJobRequest& r) override { return c.HoldJob(r); }
      absl::StatusOr<v1::Job> ReleaseJob(const v1::ReleaseJobRequest& r) override { return c.ReleaseJob(r); }
      absl::Status WatchJobs(const v1::WatchJobsRequest& r, absl::Duration t,
                             const std::function<bool(const v1::JobEvent&)>& f) override {
        return c.WatchJobs(r, t, f);
      }
      absl::StatusOr<std::unique_ptr<AttachStream>> Attach() override { return c.Attach(); }
    };
    return std::make_unique<Borrowed>(client);
  };
  result.exit_code = RunCli(args, ctx, factory, out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

inline google::protobuf::Timestamp At(absl::Time t) { return ToProtoTime(t); }

}  // namespace gpusched::cli::testing
