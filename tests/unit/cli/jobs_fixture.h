#pragma once

#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gpusched/v1/types.pb.h"
#include "test_context.h"

namespace gpusched::cli::testing {

inline v1::NodeAllocation* AddNode(v1::Job& job, const char* name, int rank, std::vector<int> gpus,
                                   const char* log_dir = "") {
  v1::NodeAllocation* node = job.mutable_allocation()->add_nodes();
  node->set_node(name);
  node->set_node_rank(rank);
  for (int g : gpus) node->add_gpu_indices(g);
  node->set_log_dir(log_dir);
  return node;
}

// Three jobs in three phases of life, relative to TestNow().
inline v1::Job RunningJob() {
  v1::Job job;
  job.set_id(7);
  job.mutable_spec()->set_name("train-llm");
  job.mutable_spec()->set_user("alice");
  job.mutable_spec()->set_queue("research");
  job.mutable_spec()->add_argv("torchrun");
  job.mutable_spec()->add_argv("train.py");
  job.mutable_spec()->add_argv("--note=two words");
  job.mutable_spec()->set_workdir("/home/alice/proj");
  job.mutable_spec()->mutable_resources()->set_nodes(2);
  job.mutable_spec()->mutable_resources()->set_gpus_per_node(4);
  job.mutable_spec()->mutable_resources()->set_cpus_per_gpu(8);
  job.mutable_spec()->mutable_resources()->set_mem_per_gpu_mb(65536);
  job.mutable_spec()->set_time_limit_s(5400);
  job.set_state(v1::JOB_STATE_RUNNING);
  *job.mutable_submit_time() = ToProtoTime(TestNow() - absl::Hours(3));
  *job.mutable_start_time() = ToProtoTime(TestNow() - absl::Seconds(3723));  // 1:02:03 ago
  AddNode(job, "node-b", 1, {3, 0, 1, 2}, "/var/log/gpusched/7/node-b");
  AddNode(job, "node-a", 0, {0, 1}, "/var/log/gpusched/7/node-a");
  job.mutable_allocation()->set_master_addr("10.0.0.1");
  job.mutable_allocation()->set_master_port(29500);
  return job;
}

inline v1::Job PendingJob() {
  v1::Job job;
  job.set_id(8);
  job.mutable_spec()->set_user("bob");
  job.mutable_spec()->add_argv("sleep");
  job.mutable_spec()->mutable_resources()->set_gpus(16);
  job.set_state(v1::JOB_STATE_PENDING);
  job.set_reason("waiting for 16 GPUs under one leaf switch");
  *job.mutable_submit_time() = ToProtoTime(TestNow() - absl::Seconds(65));
  return job;
}

inline v1::Job FailedJob() {
  v1::Job job;
  job.set_id(12);
  job.mutable_spec()->set_name("eval");
  job.mutable_spec()->set_user("carol");
  job.mutable_spec()->set_queue("default");
  job.mutable_spec()->set_script("#!/bin/bash\nset -e\npython eval.py\n");
  job.mutable_spec()->mutable_resources()->set_gpus(1);
  job.set_state(v1::JOB_STATE_FAILED);
  job.set_reason("rank 0 exited with code 3");
  job.set_exit_code(3);
  *job.mutable_submit_time() = ToProtoTime(TestNow() - absl::Hours(30));
  *job.mutable_start_time() = ToProtoTime(TestNow() - absl::Hours(29));
  *job.mutable_end_time() = ToProtoTime(TestNow() - absl::Hours(2));
  AddNode(job, "node-c", 0, {5});
  return job;
}

}  // namespace gpusched::cli::testing
