#include "common/topology/cpu_mask.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_format.h"

namespace gpusched::topology {

int CpuMaskWords(int max_cpu_id) { return max_cpu_id < 0 ? 1 : max_cpu_id / 32 + 1; }

std::string FormatCpuMask(const std::vector<int>& cpus, int min_words) {
  int max_cpu = -1;
  for (int cpu : cpus) max_cpu = std::max(max_cpu, cpu);
  if (max_cpu < 0) return "";
  std::vector<uint32_t> words(std::max(min_words, CpuMaskWords(max_cpu)), 0);
  for (int cpu : cpus) {
    if (cpu >= 0) words[cpu / 32] |= uint32_t{1} << (cpu % 32);
  }
  std::string out;
  for (size_t w = words.size(); w-- > 0;) {
    absl::StrAppendFormat(&out, "%s%08x", out.empty() ? "" : ",", words[w]);
  }
  return out;
}

}  // namespace gpusched::topology
