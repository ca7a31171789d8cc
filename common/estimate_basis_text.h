#pragma once

#include <string>

#include "gpusched/v1/types.pb.h"

namespace gpusched {

// Where a run-time estimate came from, for people: "from the last 12 runs
// of alice's jobs named train" and the like. `user` and `name` are the
// job's own.
std::string DescribeEstimateBasis(v1::EstimateBasis basis, int samples, const std::string& user,
                                  const std::string& name);

}  // namespace gpusched
