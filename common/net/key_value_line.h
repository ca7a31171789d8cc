#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched {

// One Key=Value pair of a Slurm-style configuration line.
struct KeyValue {
  std::string key;    // as written; Slurm compares keys case-insensitively
  std::string value;  // without surrounding quotes; may be empty ("Nodes=")
  int column = 0;     // 1-based column of the key, for error messages
};

// Splits one line of a Slurm-style configuration file, such as
//
//   SwitchName=s1 Nodes=n[1-4] LinkSpeed=400  # comment
//
// into its pairs, in order. Pairs are separated by whitespace; a value may be
// double-quoted to hold whitespace or '#'; a '#' outside quotes starts a
// comment. A blank or comment-only line gives no pairs. A word without '=',
// an empty key or an unterminated quote is an InvalidArgument naming the
// column; the caller adds the file and line.
absl::StatusOr<std::vector<KeyValue>> SplitKeyValueLine(absl::string_view line);

}  // namespace gpusched
