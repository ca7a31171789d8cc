#include "daemon/core/policy/share_packing.h"

#include <utility>

namespace gpusched::core {
namespace {

struct NamedPacking {
  SharePacking packing;
  absl::string_view name;
};
constexpr NamedPacking kPackings[] = {{SharePacking::kBestFit, "best-fit"},
                                      {SharePacking::kSpread, "spread"},
                                      {SharePacking::kFgd, "fgd"},
                                      {SharePacking::kFillFgd, "fill-fgd"}};

}  // namespace

std::vector<std::string> SharePackingNames() {
  std::vector<std::string> names;
  for (const NamedPacking& p : kPackings) names.emplace_back(p.name);
  return names;
}

std::optional<SharePacking> ParseSharePacking(absl::string_view name) {
  for (const NamedPacking& p : kPackings) {
    if (p.name == name) return p.packing;
  }
  return std::nullopt;
}

absl::string_view SharePackingName(SharePacking packing) {
  for (const NamedPacking& p : kPackings) {
    if (p.packing == packing) return p.name;
  }
  return "unknown";
}

ShareWeighing ShareWeighing::Of(SharePacking packing, sharing::TaskMix mix) {
  ShareWeighing weighing{packing, std::move(mix), {}};
  if (packing == SharePacking::kFillFgd) weighing.waste.emplace(weighing.mix);
  return weighing;
}

}  // namespace gpusched::core
