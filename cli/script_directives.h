#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::cli {

// A batch script's own submit options, read from the comment lines at its
// top (after an optional #! line, up to the first line that is neither
// blank nor a comment, as sbatch reads them):
//   #GPUSCHED --gpus 8 --time 2:00:00    any `gpusched submit` option
//   #SBATCH --gpus=8                     the sbatch options gpusched honours
// Each line becomes the `gpusched submit` words it stands for; the command
// line parses them (and wins over them).
struct DirectiveLine {
  int line = 0;                    // 1-based, in the script
  std::string origin;              // "script line 3: #SBATCH --gpus=h100:8", for errors and `status`
  std::vector<std::string> words;  // `gpusched submit` words: {"--gpus", "8", "--gpu-model", "h100"}
};

// The directive lines of `script`, read from `path` (named in errors). An
// #SBATCH option gpusched cannot honour, a malformed line, or a #GPUSCHED
// option that has no place in a script is an error naming the line.
absl::StatusOr<std::vector<DirectiveLine>> ReadScriptDirectives(absl::string_view script, absl::string_view path);

// Submit options about this invocation rather than the job (--script,
// --json, --request-id): refused in a script, and not kept with the job.
bool OnlyOnCommandLine(absl::string_view option);

// The sbatch options ReadScriptDirectives honours, for messages and docs.
extern const char* const kHonouredSbatchOptions;

}  // namespace gpusched::cli
