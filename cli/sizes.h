#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::cli {

// Memory sizes as Slurm users write them: a plain number is MB, otherwise a
// whole number with M, G or T (binary: 1G = 1024M), case-insensitive, an
// optional trailing B. Returns MB; errors quote the input.
absl::StatusOr<int64_t> ParseSizeMb(absl::string_view text);

// 512 -> "512M", 16384 -> "16G", 1536 -> "1.5G", 386000 -> "377G", 2097152 -> "2T".
std::string FormatSizeMb(int64_t mb);

}  // namespace gpusched::cli
