// Hostlist expressions come from topology files and cluster specs written by
// hand. Expansion must stay bounded, and compressing what expanded must give
// the same names back.
#include <set>
#include <string>

#include "common/net/hostlist.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string expr(reinterpret_cast<const char*>(data), size);
  auto names = gpusched::ExpandHostlist(expr);
  if (!names.ok()) return 0;
  const std::set<std::string> expanded(names->begin(), names->end());
  auto round_trip = gpusched::ExpandHostlist(gpusched::CompressHostlist(*names));
  FUZZ_CHECK(round_trip.ok());
  FUZZ_CHECK(std::set<std::string>(round_trip->begin(), round_trip->end()) == expanded);
  return 0;
}
