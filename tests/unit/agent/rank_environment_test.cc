#include "agent/runner/rank_environment.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

using gpusched::agent::LocalProcessCount;
using gpusched::agent::RankEnvContext;
using gpusched::agent::RankEnvironment;
namespace v1 = gpusched::v1;

namespace {

RankEnvContext Context() {
  RankEnvContext c;
  c.agent_env = {{"PATH", "/opt/bin:/usr/bin"}, {"LANG", "C.UTF-8"}, {"TZ", "UTC"}};
  c.user = "alice";
  c.home = "/home/alice";
  c.shell = "/bin/bash";
  c.node_name = "node-a";
  c.advertise_address = "10.0.0.7";
  c.job_log_dir = "/var/log/gpusched/job-42";
  return c;
}

v1::LaunchJob Launch(v1::LaunchMode mode, std::vector<int> gpus, int node_rank, int nnodes, int world_size,
                     int rank_offset) {
  v1::LaunchJob l;
  l.set_job_id(42);
  l.mutable_spec()->set_name("train");
  l.mutable_spec()->set_launch_mode(mode);
  for (int g : gpus) l.add_gpu_indices(g);
  l.set_node_rank(node_rank);
  l.set_nnodes(nnodes);
  l.set_world_size(world_size);
  l.set_rank_offset(rank_offset);
  l.set_master_addr("10.0.0.1");
  l.set_master_port(29400);
  return l;
}

}  // namespace

TEST_CASE("rank environment: the scheduler's variables per mode, GPU count and node") {
  struct Case {
    const char* name;
    v1::LaunchMode mode;
    std::vector<int> gpus;
    int node_rank, nnodes, world_size, rank_offset, local_index;
    int processes;  // LocalProcessCount
    const char* cuda_visible_devices;
    const char* rank;
    const char* local_rank;
    const char* local_world_size;
  };
  auto c = GENERATE(values<Case>({
      // srun-style: one process per GPU, all of the node's GPUs visible to each, in the given order.
      {"per-gpu, first process", v1::LAUNCH_MODE_PER_GPU, {3, 1, 2, 0}, 0, 1, 4, 0, 0, 4, "3,1,2,0", "0", "0", "4"},
      {"per-gpu, last process", v1::LAUNCH_MODE_PER_GPU, {3, 1, 2, 0}, 0, 1, 4, 0, 3, 4, "3,1,2,0", "3", "3", "4"},
      {"unspecified mode means per-gpu", v1::LAUNCH_MODE_UNSPECIFIED, {5, 6}, 0, 1, 2, 0, 1, 2, "5,6", "1", "1", "2"},
      // Second node of a 2x8 gang: global ranks continue from the offset.
      {"per-gpu, second node",
       v1::LAUNCH_MODE_PER_GPU,
       {0, 1, 2, 3, 4, 5, 6, 7},
       1,
       2,
       16,
       8,
       2,
       8,
       "0,1,2,3,4,5,6,7",
       "10",
       "2",
       "8"},
      // torchrun-style: one process per node; LOCAL_WORLD_SIZE is the node's GPU count for --nproc-per-node.
      {"per-node, first node", v1::LAUNCH_MODE_PER_NODE, {0, 1, 2, 3}, 0, 2, 2, 0, 0, 1, "0,1,2,3", "0", "0", "4"},
      {"per-node, second node", v1::LAUNCH_MODE_PER_NODE, {4, 5, 6, 7}, 1, 2, 2, 1, 0, 1, "4,5,6,7", "1", "0", "4"},
      // CPU-only: one process, and no GPU visible at all.
      {"cpu-only, per-gpu mode", v1::LAUNCH_MODE_PER_GPU, {}, 0, 1, 1, 0, 0, 1, "", "0", "0", "1"},
      {"cpu-only, per-node mode", v1::LAUNCH_MODE_PER_NODE, {}, 2, 3, 3, 2, 0, 1, "", "2", "0", "1"},
  }));
  INFO(c.name);
  v1::LaunchJob launch = Launch(c.mode, c.gpus, c.node_rank, c.nnodes, c.world_size, c.rank_offset);
  CHECK(LocalProcessCount(launch) == c.processes);
  auto env = RankEnvironment(launch, c.local_index, Context());
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == c.cuda_visible_devices);
  CHECK(env.at("RANK") == c.rank);
  CHECK(env.at("LOCAL_RANK") == c.local_rank);
  CHECK(env.at("LOCAL_WORLD_SIZE") == c.local_world_size);
  CHECK(env.at("WORLD_SIZE") == std::to_string(c.world_size));
  CHECK(env.at("NODE_RANK") == std::to_string(c.node_rank));
  CHECK(env.at("NNODES") == std::to_string(c.nnodes));
  CHECK(env.at("MASTER_ADDR") == "10.0.0.1");
  CHECK(env.at("MASTER_PORT") == "29400");
  CHECK(env.at("GPUSCHED_JOB_ID") == "42");
  CHECK(env.at("GPUSCHED_JOB_NAME") == "train");
  CHECK(env.at("GPUSCHED_NODE") == "node-a");
  CHECK(env.at("GPUSCHED_LOG_DIR") == "/var/log/gpusched/job-42");
}

TEST_CASE("rank environment: a clean base, then spec.env, then the scheduler's variables") {
  RankEnvContext context = Context();
  context.agent_env["SECRET_TOKEN"] = "agent-only";  // never handed to jobs
  v1::LaunchJob launch = Launch(v1::LAUNCH_MODE_PER_GPU, {0}, 0, 1, 1, 0);
  (*launch.mutable_spec()->mutable_env())["LANG"] = "de_DE.UTF-8";
  (*launch.mutable_spec()->mutable_env())["NCCL_DEBUG"] = "INFO";
  (*launch.mutable_spec()->mutable_env())["RANK"] = "99";
  (*launch.mutable_spec()->mutable_env())["CUDA_VISIBLE_DEVICES"] = "0,1,2,3,4,5,6,7";

  auto env = RankEnvironment(launch, 0, context);
  CHECK(env.at("PATH") == "/opt/bin:/usr/bin");
  CHECK(env.at("TZ") == "UTC");
  CHECK(env.at("HOME") == "/home/alice");
  CHECK(env.at("USER") == "alice");
  CHECK(env.at("LOGNAME") == "alice");
  CHECK(env.at("SHELL") == "/bin/bash");
  CHECK_FALSE(env.contains("SECRET_TOKEN"));
  CHECK(env.at("LANG") == "de_DE.UTF-8");  // the job may override the base
  CHECK(env.at("NCCL_DEBUG") == "INFO");
  CHECK(env.at("RANK") == "0");  // but not the scheduler's variables
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "0");
}

TEST_CASE("rank environment: sensible values where the agent's environment or the launch is silent") {
  RankEnvContext context = Context();
  context.agent_env.clear();
  context.shell.clear();
  v1::LaunchJob launch = Launch(v1::LAUNCH_MODE_PER_GPU, {0, 1}, 0, 0, 0, 0);
  launch.clear_master_addr();
  launch.set_master_port(0);
  (*launch.mutable_spec()->mutable_env())["MASTER_PORT"] = "12345";

  auto env = RankEnvironment(launch, 1, context);
  CHECK(env.at("PATH") == "/usr/local/bin:/usr/bin:/bin");
  CHECK_FALSE(env.contains("LANG"));
  CHECK(env.at("SHELL") == "/bin/sh");
  CHECK(env.at("WORLD_SIZE") == "2");
  CHECK(env.at("NNODES") == "1");
  CHECK(env.at("MASTER_ADDR") == "10.0.0.7");  // this node's advertised address
  CHECK(env.at("MASTER_PORT") == "12345");     // no port from the daemon: the job's own stays
}

TEST_CASE("rank environment: a task of a job array sees its index, the array and its size; other jobs do not") {
  v1::LaunchJob launch = Launch(v1::LAUNCH_MODE_PER_GPU, {0}, 0, 1, 1, 0);
  auto plain = RankEnvironment(launch, 0, Context());
  CHECK(plain.count("GPUSCHED_ARRAY_TASK_ID") == 0);
  CHECK(plain.count("SLURM_ARRAY_TASK_ID") == 0);

  launch.mutable_array()->set_array_id(40);
  launch.mutable_array()->set_index(7);
  launch.mutable_array()->set_count(100);
  auto env = RankEnvironment(launch, 0, Context());
  CHECK(env.at("GPUSCHED_ARRAY_TASK_ID") == "7");
  CHECK(env.at("GPUSCHED_ARRAY_JOB_ID") == "40");
  CHECK(env.at("GPUSCHED_ARRAY_TASK_COUNT") == "100");
  CHECK(env.at("SLURM_ARRAY_TASK_ID") == "7");
  CHECK(env.at("SLURM_ARRAY_JOB_ID") == "40");
  CHECK(env.at("GPUSCHED_JOB_ID") == "42");
}

TEST_CASE("rank environment: a GPU share's variables win over the rest, CUDA_VISIBLE_DEVICES included") {
  v1::LaunchJob launch = Launch(v1::LAUNCH_MODE_PER_GPU, {2}, 0, 1, 1, 0);
  (*launch.mutable_spec()->mutable_env())["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = "100";
  RankEnvContext context = Context();
  context.share_env = {{"CUDA_VISIBLE_DEVICES", "GPU-2222"}, {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "30"}};
  auto env = RankEnvironment(launch, 0, context);
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "GPU-2222");
  CHECK(env.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "30");
  const auto whole = RankEnvironment(launch, 0, Context());
  CHECK(whole.at("CUDA_VISIBLE_DEVICES") == "2");
}
