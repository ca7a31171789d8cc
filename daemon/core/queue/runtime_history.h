#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/time/time.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// How long a job that gives no time limit is expected to run, learned from
// the jobs that ended on their own (completed or failed). Most jobs are
// submitted without --time: without an estimate backfill cannot plan a
// reservation, and the queue cannot tell short work from long.
//
// An estimate comes from the most specific group with enough recent runs:
// the same user and job name, then the same user and size class, then the
// size class, then every job. Its uncertainty is kept as the spread of
// that group's recent runs: `typical` (the median) ranks the queue, `high`
// (the 90th percentile) is what backfill plans with, since a job that runs
// past the plan delays the reserved one.
enum class EstimateBasis { kNone, kUserAndName, kUserAndSize, kSize, kAll };
v1::EstimateBasis ToProto(EstimateBasis basis);

struct RuntimeEstimate {
  absl::Duration typical = absl::InfiniteDuration();
  absl::Duration high = absl::InfiniteDuration();
  // The mean of the recent runs: what a cost is weighed with (run times
  // are heavy-tailed, so the median understates what a slower run costs).
  absl::Duration mean = absl::InfiniteDuration();
  int samples = 0;
  EstimateBasis basis = EstimateBasis::kNone;

  bool known() const { return basis != EstimateBasis::kNone; }
  // "from 12 runs of alice's jobs named train" and the like, for people.
  std::string Describe(const v1::JobSpec& spec) const;
};

class RuntimeHistory {
 public:
  static constexpr int kKept = 32;   // recent runs a group remembers
  static constexpr int kEnough = 3;  // runs before a group's estimate is used
  // Groups by user and name beyond this many are not made (each costs a
  // few hundred bytes): their jobs fall back to the coarser groups.
  static constexpr size_t kMaxNamedGroups = 100'000;

  // Size classes: 0 GPUs, 1, 2, 3-4, 5-8, 9-16, ... (powers of two).
  static int SizeClass(int64_t gpus);

  // A run that ended on its own after `ran`.
  void Record(const v1::JobSpec& spec, absl::Duration ran);
  RuntimeEstimate Estimate(const v1::JobSpec& spec) const;
  // Counts the Record calls: estimates made at one revision hold until the next.
  uint64_t revision() const { return revision_; }

 private:
  struct Group {
    std::vector<float> recent;  // seconds, a ring of at most kKept
    int next = 0;
    float typical_s = 0;
    float high_s = 0;
    float mean_s = 0;

    void Add(double seconds);
    int samples() const { return static_cast<int>(recent.size()); }
  };

  static std::string NameKey(const v1::JobSpec& spec);
  static std::string UserSizeKey(const v1::JobSpec& spec);

  absl::node_hash_map<std::string, Group> by_name_;
  absl::node_hash_map<std::string, Group> by_user_size_;
  absl::node_hash_map<int, Group> by_size_;
  uint64_t revision_ = 0;
  Group all_;
};

}  // namespace gpusched::core
