#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/runner/process_spawner.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// How this agent runs jobs in container images (agent.toml container_*).
struct ContainerSettings {
  // The Podman executable, resolved to a path at start; "" = this node runs
  // no containers.
  std::string runtime;
  std::string oci_runtime;                 // podman --runtime (runc, crun); "" = Podman's own choice
  std::vector<std::string> registries;     // images only from these; empty = any
  std::vector<std::string> mount_sources;  // host paths a job may mount, and what lies below; empty = none
  // More `podman run` arguments for every rank, before the image: what a
  // node needs (--ulimit inside its hard limits, --cgroup-manager).
  std::vector<std::string> run_args;
  absl::Duration pull_timeout = absl::Minutes(15);

  bool enabled() const { return !runtime.empty(); }
  // What the node tells the daemon (NodeInfo.containers).
  v1::ContainerSupport Support() const;
};

// Where the host's NVIDIA driver shows itself: "/" on a node, a made-up
// tree in tests.
struct HostGpuFiles {
  std::string root = "/";
};

// What a rank needs besides its host form to run in the job's container.
struct ContainerRankContext {
  const ContainerSettings* settings = nullptr;
  HostGpuFiles host;
  const topology::NodeTopology* topology = nullptr;  // PCI bus ids of the GPUs; null: none known
  std::string node_name;
  std::string scope;  // ContainerScope of this agent
  // An agent-only directory (0700): each rank's environment file goes there,
  // out of reach of the job's user, since the runtime reads it as root.
  std::string env_dir;
  // The environment Podman itself runs with: the agent's, never the job's (a
  // job's LD_PRELOAD or CONTAINERS_CONF must not reach a root process).
  std::vector<std::string> runtime_env;
  std::string script_path;  // the job's script on the host, when it has one
};

// Whether the job may run here as asked: the image's registry and every mount
// source (links resolved, so a link cannot lead out of an allowed path) are
// allowed, and each source exists. FailedPrecondition says what is refused.
absl::Status CheckContainerLaunch(const v1::ContainerSpec& container, const ContainerSettings& settings,
                                  const std::string& node_name);

// Rewrites `process`, a rank as it would run on the host, into `podman run`
// of the job's image: the rank's command and environment inside (its
// CUDA_VISIBLE_DEVICES renumbered as the container sees its GPUs), the
// node's network, IPC and process namespaces (NCCL's transports and
// rendezvous work as on the host), the job's uid with no capabilities and no
// privilege gain, the allocated GPUs' device nodes and the driver's libraries
// and nvidia-smi, the job's mounts. The rank's log is Podman's output; the
// shim removes the container when the rank ends (process.cleanup_argv), so
// that a SIGKILLed rank leaves none behind.
absl::Status WrapInContainer(const v1::LaunchJob& launch, const ContainerRankContext& context, ProcessSpec& process);

// Which agent's containers: its log directory and node name, so that agents
// of several clusters on one host (tests, `gpuschedd dev`) never take one
// another's containers for their own. Every container carries it as the
// label gpusched.agent.
std::string ContainerScope(const std::string& log_dir, const std::string& node_name);

// Container name of a rank, unique per scope: what its cleanup removes.
std::string ContainerName(const std::string& scope, uint64_t job_id, int rank);

// The agent-only directory of the ranks' environment files, under the
// agent's log directory (ContainerRankContext::env_dir).
std::string ContainerEnvDir(const std::string& log_dir);
// A rank's environment file there: the job's whole environment, secrets
// included, so it goes when the job has ended (RemoveContainerEnvFiles).
std::string ContainerEnvFile(const std::string& env_dir, uint64_t job_id, int rank);
// Removes every environment file of the job's ranks; how many it removed.
int RemoveContainerEnvFiles(const std::string& env_dir, uint64_t job_id);

// CUDA_VISIBLE_DEVICES as the container sees it: each NVML index in `value`
// becomes its place among `allocated` in index order (the order the
// container's CUDA numbers its devices in); UUIDs stay as they are.
std::string RenumberVisibleDevices(const std::string& value, std::vector<int32_t> allocated);

// The device nodes a container needs for the GPUs `indices`: /dev/nvidiaN of
// each (its minor from /proc/driver/nvidia/gpus/BUS/information) and the
// driver's control nodes, those that exist under `host.root`. None on a node
// without an NVIDIA driver (fake GPUs).
std::vector<std::string> GpuDeviceNodes(const HostGpuFiles& host, const topology::NodeTopology* topology,
                                        const std::vector<int32_t>& indices, bool mig);

// The driver's user-space libraries (libcuda, libnvidia-ml, ...) next to
// libnvidia-ml.so.1 under `host.root`, for read-only mounts; empty without a driver.
std::vector<std::string> DriverLibraries(const HostGpuFiles& host);

// Removes the job containers of `scope` (by their gpusched.agent label)
// whose job is not in `running`: what a shim killed with its ranks could
// not remove. Returns how many it removed; a runtime that fails removes none.
int RemoveLeftoverContainers(const ContainerSettings& settings, const std::string& scope,
                             const std::set<uint64_t>& running);

// Makes sure the image is on this node (`podman image exists`, else `podman
// pull` within the pull timeout). The error carries the runtime's own words.
absl::Status EnsureImage(const ContainerSettings& settings, const std::string& image);

}  // namespace gpusched::agent
