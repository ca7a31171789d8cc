#include "daemon/core/queue/runtime_history.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/estimate_basis_text.h"

namespace gpusched::core {

int RuntimeHistory::SizeClass(int64_t gpus) {
  if (gpus <= 0) return 0;
  int size_class = 1;
  for (int64_t top = 1; top < gpus; top *= 2) ++size_class;
  return size_class;
}

void RuntimeHistory::Group::Add(double seconds) {
  if (recent.size() < kKept) {
    recent.push_back(static_cast<float>(seconds));
  } else {
    recent[static_cast<size_t>(next)] = static_cast<float>(seconds);
    next = (next + 1) % kKept;
  }
  std::vector<float> sorted = recent;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  typical_s = sorted[(n - 1) / 2];
  high_s = sorted[static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n))) - 1];
  double sum = 0;
  for (float v : sorted) sum += v;
  mean_s = static_cast<float>(sum / static_cast<double>(n));
}

std::string RuntimeHistory::NameKey(const v1::JobSpec& spec) { return absl::StrCat(spec.user(), "\n", spec.name()); }

std::string RuntimeHistory::UserSizeKey(const v1::JobSpec& spec) {
  return absl::StrCat(spec.user(), "\n", SizeClass(spec.resources().gpus()));
}

void RuntimeHistory::Record(const v1::JobSpec& spec, absl::Duration ran) {
  ++revision_;
  const double seconds = std::max(1.0, absl::ToDoubleSeconds(ran));
  if (!spec.name().empty()) {
    std::string key = NameKey(spec);
    auto it = by_name_.find(key);
    if (it == by_name_.end() && by_name_.size() < kMaxNamedGroups) it = by_name_.try_emplace(std::move(key)).first;
    if (it != by_name_.end()) it->second.Add(seconds);
  }
  by_user_size_[UserSizeKey(spec)].Add(seconds);
  by_size_[SizeClass(spec.resources().gpus())].Add(seconds);
  all_.Add(seconds);
}

RuntimeEstimate RuntimeHistory::Estimate(const v1::JobSpec& spec) const {
  auto from = [](const Group& g, EstimateBasis basis) {
    RuntimeEstimate e;
    e.typical = absl::Seconds(g.typical_s);
    e.high = absl::Seconds(g.high_s);
    e.mean = absl::Seconds(g.mean_s);
    e.samples = g.samples();
    e.basis = basis;
    return e;
  };
  if (!spec.name().empty()) {
    if (auto it = by_name_.find(NameKey(spec)); it != by_name_.end() && it->second.samples() >= kEnough) {
      return from(it->second, EstimateBasis::kUserAndName);
    }
  }
  if (auto it = by_user_size_.find(UserSizeKey(spec)); it != by_user_size_.end() && it->second.samples() >= kEnough) {
    return from(it->second, EstimateBasis::kUserAndSize);
  }
  if (auto it = by_size_.find(SizeClass(spec.resources().gpus()));
      it != by_size_.end() && it->second.samples() >= kEnough) {
    return from(it->second, EstimateBasis::kSize);
  }
  if (all_.samples() >= kEnough) return from(all_, EstimateBasis::kAll);
  return RuntimeEstimate{};
}

v1::EstimateBasis ToProto(EstimateBasis basis) {
  switch (basis) {
    case EstimateBasis::kUserAndName: return v1::ESTIMATE_BASIS_USER_AND_NAME;
    case EstimateBasis::kUserAndSize: return v1::ESTIMATE_BASIS_USER_AND_SIZE;
    case EstimateBasis::kSize: return v1::ESTIMATE_BASIS_SIZE;
    case EstimateBasis::kAll: return v1::ESTIMATE_BASIS_ALL;
    case EstimateBasis::kNone: break;
  }
  return v1::ESTIMATE_BASIS_NONE;
}

std::string RuntimeEstimate::Describe(const v1::JobSpec& spec) const {
  return DescribeEstimateBasis(ToProto(basis), samples, spec.user(), spec.name());
}

}  // namespace gpusched::core
