#include "daemon/dev/demo_job.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/job_states.h"
#include "gpusched/v1/scheduler.grpc.pb.h"
#include "grpcpp/create_channel.h"

namespace gpusched::dev {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

absl::Status RunDemoJob(const std::string& daemon_address) {
  auto stub = v1::Scheduler::NewStub(grpc::CreateChannel(daemon_address, grpc::InsecureChannelCredentials()));
  v1::SubmitJobRequest request;
  v1::JobSpec* spec = request.mutable_spec();
  spec->set_name("hello-gang");
  spec->add_argv("/bin/sh");
  spec->add_argv("-c");
  spec->add_argv(
      "echo \"rank $RANK of $WORLD_SIZE on $GPUSCHED_NODE: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES "
      "LOCAL_RANK=$LOCAL_RANK MASTER_ADDR=$MASTER_ADDR:$MASTER_PORT\"");
  spec->mutable_resources()->set_gpus(2);
  spec->set_time_limit_s(60);
  request.set_client_request_id(absl::StrCat("gpuschedd-dev-demo-", absl::ToUnixNanos(absl::Now())));

  grpc::ClientContext submit_ctx;
  submit_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::SubmitJobResponse submitted;
  grpc::Status status = stub->SubmitJob(&submit_ctx, request, &submitted);
  if (!status.ok()) return absl::UnavailableError(absl::StrCat("demo submit failed: ", status.error_message()));
  const uint64_t id = submitted.job().id();
  std::cout << "demo: submitted job " << id << " (2 GPUs): " << spec->argv(2).substr(0, 40) << "...\n";

  v1::Job job;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (true) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::GetJobRequest get;
    get.set_job_id(id);
    status = stub->GetJob(&ctx, get, &job);
    if (!status.ok()) return absl::UnavailableError(absl::StrCat("demo: GetJob failed: ", status.error_message()));
    if (IsTerminal(job.state())) break;
    if (absl::Now() > deadline) return absl::DeadlineExceededError("demo job did not finish within 30 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const v1::JobEvent& event : job.events()) {
    std::cout << "demo: job " << id << " " << StateName(event.state()) << ": " << event.reason() << "\n";
  }
  for (const v1::NodeAllocation& part : job.allocation().nodes()) {
    std::cout << "demo: placed on " << part.node() << " GPUs [" << absl::StrJoin(part.gpu_indices(), ",")
              << "], logs in " << part.log_dir() << "\n";
    for (int rank = 0; rank < part.gpu_indices_size(); ++rank) {
      std::string out = ReadFile(absl::StrCat(part.log_dir(), "/rank-", rank, ".log"));
      if (!out.empty()) std::cout << "demo: rank-" << rank << ".log: " << out;
    }
  }
  if (job.state() != v1::JOB_STATE_COMPLETED) {
    return absl::InternalError(absl::StrCat("demo job ended ", StateName(job.state()), ": ", job.reason()));
  }
  std::cout << "demo: job " << id << " COMPLETED with exit code " << job.exit_code() << "\n";
  return absl::OkStatus();
}

}  // namespace gpusched::dev
