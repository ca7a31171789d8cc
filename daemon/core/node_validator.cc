#include "daemon/core/node_validator.h"

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/convert/topology_proto.h"
#include "common/display_text.h"

namespace gpusched::core {
namespace {

// More than any GPU has: A100 and H100 split into at most 7.
constexpr int kMaxMigInstances = 64;

// A GPU's MIG instances: each with a UUID and profile a job can be given,
// distinct indices and UUIDs; a GPU shared as MIG instances has MIG on.
absl::Status ValidateMigInstances(const v1::GpuInfo& gpu, const std::string& field) {
  if (gpu.share_mode() == v1::GPU_SHARE_MODE_MIG && !gpu.mig_enabled()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": shared as MIG instances, but MIG mode is off"));
  }
  if (gpu.mig_instances_size() > kMaxMigInstances) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".mig_instances has ", gpu.mig_instances_size(), " entries; at most ", kMaxMigInstances));
  }
  std::set<int32_t> indices;
  std::set<std::string> uuids;
  for (int k = 0; k < gpu.mig_instances_size(); ++k) {
    const v1::MigInstance& mig = gpu.mig_instances(k);
    const std::string at = absl::StrCat(field, ".mig_instances[", k, "]");
    if (absl::Status s = CheckDisplayText(at + ".uuid", mig.uuid(), 96); !s.ok()) return s;
    if (absl::Status s = CheckDisplayText(at + ".profile", mig.profile(), 32); !s.ok()) return s;
    if (mig.uuid().empty() || mig.profile().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(at, " has no uuid or no profile"));
    }
    if (!indices.insert(mig.index()).second || !uuids.insert(mig.uuid()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ": index ", mig.index(), " or uuid ", mig.uuid(), " is repeated"));
    }
    if (mig.memory_mb() < 0) return absl::InvalidArgumentError(absl::StrCat(at, ".memory_mb is negative"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateNodeInfo(const v1::NodeInfo& node) {
  if (node.name().empty()) return absl::InvalidArgumentError("node.name is empty");
  // A node name goes into tables, log lines and the topology file's
  // hostlists; the 59 bytes are what a node certificate's CN (node:NAME, at
  // most 64) can hold.
  if (absl::Status s = CheckDisplayText("node.name", node.name(), kMaxNodeNameBytes); !s.ok()) return s;
  for (const auto& [key, value] : node.labels()) {
    if (absl::Status s = CheckDisplayText("node.labels (a key)", key, kMaxLabelBytes); !s.ok()) return s;
    if (absl::Status s = CheckDisplayText(absl::StrCat("node.labels[", key, "]"), value, kMaxLabelBytes); !s.ok()) {
      return s;
    }
  }
  if (node.cpus() < 0) return absl::InvalidArgumentError(absl::StrCat("node.cpus is negative: ", node.cpus()));
  if (node.memory_mb() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("node.memory_mb is negative: ", node.memory_mb()));
  }
  for (int i = 0; i < node.gpus_size(); ++i) {
    if (node.gpus(i).memory_mb() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("node.gpus[", i, "].memory_mb is negative: ", node.gpus(i).memory_mb()));
    }
    if (absl::Status s = ValidateMigInstances(node.gpus(i), absl::StrCat("node.gpus[", i, "]")); !s.ok()) return s;
  }
  // Shown by `nodes show` and quoted in submit errors.
  const v1::ContainerSupport& containers = node.containers();
  if (absl::Status s = CheckDisplayText("node.containers.runtime", containers.runtime(), kMaxLabelBytes); !s.ok())
    return s;
  for (const std::string& registry : containers.registries()) {
    if (absl::Status s = CheckDisplayText("node.containers.registries", registry, kMaxLabelBytes); !s.ok()) return s;
  }
  for (const std::string& source : containers.mount_sources()) {
    if (source.empty() || source.front() != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("node.containers.mount_sources: \"", source, "\" is not absolute"));
    }
    if (absl::Status s = CheckDisplayText("node.containers.mount_sources", source, 4096); !s.ok()) return s;
  }
  absl::Status topology = convert::TopologyFromProto(node).status();
  if (!topology.ok()) return absl::InvalidArgumentError(absl::StrCat("node.", topology.message()));
  return absl::OkStatus();
}

absl::Status ValidateNodeProbe(const v1::NodeProbe& probe, int gpus, const std::string& field) {
  constexpr size_t kMaxMessage = 4096;
  constexpr double kMaxGbps = 100'000;
  auto bad_figure = [&](double gbps) { return !std::isfinite(gbps) || gbps < 0 || gbps > kMaxGbps; };
  if (probe.pairs_size() > int64_t{gpus} * (gpus - 1) / 2) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".pairs has ", probe.pairs_size(),
                                                   " entries, more than the node's ", gpus, " GPUs have pairs"));
  }
  for (int i = 0; i < probe.pairs_size(); ++i) {
    const v1::GpuPairBandwidth& pair = probe.pairs(i);
    if (bad_figure(pair.busbw_gbps()) || bad_figure(pair.estimated_gbps())) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".pairs[", i, "]: a bandwidth is not a number in [0, ", kMaxGbps, "] GB/s"));
    }
  }
  if (bad_figure(probe.all_gpus_busbw_gbps())) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".all_gpus_busbw_gbps is not a number in [0, ", kMaxGbps, "] GB/s"));
  }
  for (const auto& [name, text] : {std::pair{"error", &probe.error()},
                                   {"unavailable", &probe.unavailable()},
                                   {"nccl_version", &probe.nccl_version()}}) {
    if (text->size() > kMaxMessage) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".", name, " is ", text->size(), " bytes long, at most ", kMaxMessage));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpusched::core
