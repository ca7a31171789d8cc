#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "daemon/core/sharing/fragmentation.h"
#include "daemon/core/sharing/pack_node.h"

namespace gpusched::core::sharing {

// A fractional size counts as a filler when at least this share of the mix's
// fractional one-GPU tasks asks for it: rarer sizes cannot be counted on to
// fill a hole. Measured among the tasks that fill holes, not the whole mix,
// so that a mix with more sharing does not count its rare sizes as fillers
// only because every size is more frequent (on the openb mixes, 3% keeps the
// six sizes from 0.23 up that each make 4% or more of the shares, and leaves
// out those of 2.4% or less).
inline constexpr double kFillSizeShare = 0.03;

// How much of the fillable share a node's CPU or memory cannot feed counts as
// waste. Not all of it: the CPU and memory a filler asks vary widely (of the
// openb list's whole-GPU pods, one in eight asks about 3 cores a GPU, half
// 11-12, a fifth 14 or more), so a shortfall reckoned at the mean is often
// met. On the openb default pod list (seeds 42-51), weights 0, 0.25, 0.5,
// 0.75 and 1 leave 4.39%, 3.91%, 3.92%, 3.95% and 3.96% unallocated; with a
// third of its GPU pods limited to one model, 0.25, 0.5 and 1 leave 4.54%,
// 4.37% and 4.18%.
inline constexpr double kStrandedWeight = 0.5;

// The GPU share, in thousandths, that a node will likely never give out to
// the mix's tasks: what the fillers cannot fill of each GPU, plus
// (kStrandedWeight of) the share they could fill but the node's free CPU or
// memory cannot feed. fill-fgd places a task where this grows least.
class NodeWaste {
 public:
  explicit NodeWaste(const TaskMix& mix);

  // In thousandths, exact: compare placements by Growth.
  double Of(const PackNode& node) const;

  // How much a placement grows its node's waste, from Of() before and after
  // it: in whole thousandths, so that placements that grow it alike compare
  // equal and the next measure decides between them. Rounded once, on the
  // difference: rounding each side could part two equal growths by one.
  static int64_t Growth(double before, double after);

  // The least a GPU with `free_milli` free can be left with once filled by
  // the fillers (any number of each): an unbounded knapsack. 0 for a whole
  // free GPU where the mix has whole-GPU tasks, one of which takes it.
  int Leftover(int free_milli) const { return fill_[free_milli].leftover; }

 private:
  // How a GPU with a given free share is best filled: what is left, and the
  // CPU and memory the fill asks (the fillers' means; among fills that leave
  // the same, the one asking least CPU). A whole free GPU's fill is a
  // whole-GPU task's mean per GPU where the mix has whole-GPU tasks.
  struct Fill {
    int leftover = 0;
    double cpu_milli = 0;
    double memory_mib = 0;
  };
  std::vector<Fill> fill_;  // by free thousandths, 0..kWholeGpuMilli
  // A whole-GPU task's mean ask per GPU; none when the mix has no such tasks.
  std::optional<Fill> whole_gpu_task_;
};

}  // namespace gpusched::core::sharing
