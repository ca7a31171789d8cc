#include "common/estimate_basis_text.h"

#include "absl/strings/str_cat.h"

namespace gpusched {

std::string DescribeEstimateBasis(v1::EstimateBasis basis, int samples, const std::string& user,
                                  const std::string& name) {
  const std::string who = user.empty() ? "its user" : user;
  switch (basis) {
    case v1::ESTIMATE_BASIS_USER_AND_NAME:
      return absl::StrCat("from the last ", samples, " runs of ", who, "'s jobs named ", name);
    case v1::ESTIMATE_BASIS_USER_AND_SIZE:
      return absl::StrCat("from the last ", samples, " runs of ", who, "'s jobs of this size");
    case v1::ESTIMATE_BASIS_SIZE: return absl::StrCat("from the last ", samples, " runs of jobs of this size");
    case v1::ESTIMATE_BASIS_ALL: return absl::StrCat("from the last ", samples, " runs of any job");
    default: return "no run of a similar job has ended yet";
  }
}

}  // namespace gpusched
