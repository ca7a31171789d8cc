// Time limits in Slurm notation arrive from every `gpusched submit --time`.
#include <string>

#include "common/time_limit.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto seconds = gpusched::ParseTimeLimit(text);
  if (!seconds.ok()) return 0;
  FUZZ_CHECK(*seconds >= 0);
  if (*seconds == 0) return 0;
  auto again = gpusched::ParseTimeLimit(gpusched::FormatTimeLimit(*seconds));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *seconds);
  return 0;
}
