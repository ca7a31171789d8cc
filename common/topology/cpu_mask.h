#pragma once

#include <string>
#include <vector>

namespace gpusched::topology {

// CPU ids as a Linux cpumap mask, the form of /sys/devices/system/node/node*/
// cpumap and of NCCL's <cpu affinity="...">: 32-bit words as 8 hex digits,
// most significant word first, joined by commas. {0-23, 48-71} over 3 words
// is "000000ff,ffff0000,00ffffff".
//
// At least `min_words` words are written (callers pass the width that the
// node's highest CPU needs, so that every mask of one node has the same
// shape, as the kernel prints them); more when `cpus` needs them. Negative ids
// are ignored. "" for an empty list.
std::string FormatCpuMask(const std::vector<int>& cpus, int min_words = 1);

// Words needed to hold CPU `max_cpu_id`: 1 for 0..31, 2 for 32..63, ...
int CpuMaskWords(int max_cpu_id);

}  // namespace gpusched::topology
