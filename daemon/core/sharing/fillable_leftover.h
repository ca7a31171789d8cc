#pragma once

#include <vector>

#include "daemon/core/sharing/fragmentation.h"

namespace gpusched::core::sharing {

// A fractional size counts as a filler when at least this share of the mix's
// fractional one-GPU tasks asks for it: rarer sizes cannot be counted on to
// fill a hole. Measured among the tasks that fill holes, not the whole mix,
// so that a mix with more sharing does not count its rare sizes as fillers
// only because every size is more frequent (on the openb mixes, 3% keeps the
// six sizes from 0.23 up that each make 4% or more of the shares, and leaves
// out those of 2.4% or less).
inline constexpr double kFillSizeShare = 0.03;

// By free thousandths h = 0..kWholeGpuMilli of one GPU, the least it can be
// left with once filled by the mix's fillers (any number of each): an
// unbounded knapsack. 0 for a whole free GPU, which a whole-GPU task takes.
// fill-fgd places a share where this grows least.
std::vector<int> FillableLeftovers(const TaskMix& mix);

}  // namespace gpusched::core::sharing
