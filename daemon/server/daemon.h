#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/defaults.h"
#include "daemon/core/scheduler_core.h"
#include "daemon/store/job_store.h"

namespace grpc {
class Server;
}

namespace gpusched::server {

struct DaemonOptions {
  std::string listen_address = kDefaultDaemonAddress;  // port 0 picks a free one
  std::string state_dir;                               // holds gpusched.db
  absl::Duration tick = absl::Milliseconds(200);       // time-limit checks, periodic passes
  int read_threads = 2;
  core::CoreOptions core;
};

class AgentGatewayService;
class BatchCommitter;
class JobEventHub;
class ReadPool;
class SchedulerLoop;
class SchedulerService;

// gpuschedd put together: state file, scheduler thread, gRPC services (with
// health checking and reflection) on one listening address.
class Daemon {
 public:
  // Recovers the state in state_dir and starts serving. Fails with a message
  // naming the directory, file or address at fault.
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(const DaemonOptions& options, const Clock& clock);
  ~Daemon();

  void Shutdown();
  int port() const { return port_; }
  std::string address() const;  // host:port actually bound
  const std::string& db_path() const { return db_path_; }

 private:
  Daemon() = default;

  DaemonOptions options_;
  std::string db_path_;
  int lock_fd_ = -1;
  int port_ = 0;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<core::SchedulerCore> core_;
  std::unique_ptr<JobEventHub> hub_;
  std::unique_ptr<BatchCommitter> committer_;
  std::unique_ptr<SchedulerLoop> loop_;
  std::unique_ptr<ReadPool> reads_;
  std::unique_ptr<SchedulerService> scheduler_service_;
  std::unique_ptr<AgentGatewayService> agent_service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace gpusched::server
