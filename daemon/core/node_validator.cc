#include "daemon/core/node_validator.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/display_text.h"
#include "common/convert/topology_proto.h"

namespace gpusched::core {

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
      return absl::InvalidArgumentError(absl::StrCat(field, ".pairs[", i, "]: a bandwidth is not a number in [0, ",
                                                     kMaxGbps, "] GB/s"));
    }
  }
  if (bad_figure(probe.all_gpus_busbw_gbps())) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".all_gpus_busbw_gbps is not a number in [0, ", kMaxGbps, "] GB/s"));
  }
  for (const auto& [name, text] : {std::pair{"error", &probe.error()}, {"unavailable", &probe.unavailable()},
                                   {"nccl_version", &probe.nccl_version()}}) {
    if (text->size() > kMaxMessage) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".", name, " is ", text->size(), " bytes long, at most ", kMaxMessage));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpusched::core
