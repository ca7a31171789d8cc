#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched {

// Most names one expression may expand to. A million covers the largest
// clusters many times over, and it stops a typo such as "n[1-99999999]" from
// allocating gigabytes before anything notices.
inline constexpr size_t kMaxHostlistNames = 1'000'000;

// Expands a hostlist expression in Slurm's notation, so that operators can
// paste what they already write in slurm.conf and topology.conf:
//
//   "gpu[001-004]"           gpu001 gpu002 gpu003 gpu004
//   "n[1-3,7]"               n1 n2 n3 n7
//   "rack[1-2]-gpu[01-02]"   rack1-gpu01 rack1-gpu02 rack2-gpu01 rack2-gpu02
//   "login, gpu[8-10]"       login gpu8 gpu9 gpu10
//
// Items are separated by commas outside brackets; whitespace around them and
// around the elements inside brackets is ignored. Each bracket holds numbers
// and ranges lo-hi; a range keeps the width of its lower bound as written, so
// "[08-10]" gives 08 09 10 and "[8-10]" gives 8 9 10. With several brackets
// in one item the leftmost varies slowest. Names come out in the order
// written; duplicates are kept (the caller decides whether they matter). An
// empty or all-blank expression is an empty list.
//
// Anything else is an InvalidArgument that quotes the expression and gives
// the 1-based position of the offending part: unbalanced or nested brackets,
// an empty item or range, a reversed range ("[5-3]"), a bracket element that
// is not a number or range, whitespace inside a name, or an expansion larger
// than kMaxHostlistNames.
absl::StatusOr<std::vector<std::string>> ExpandHostlist(absl::string_view expr);

// The reverse, for display: {"gpu001", "gpu002", "gpu003", "gpu007", "login"}
// becomes "gpu[001-003,007],login". Names are grouped by their text around
// the last run of digits (and by zero-padded width, so "n08" and "n8" stay
// apart); within a group the numbers are sorted and duplicates dropped;
// groups appear in the order of their first name in the input; names without
// digits, and a group of one, are written as they are. ExpandHostlist of the
// result gives back every name, in that grouped order. Names are expected to
// be host names: one containing '[', ']', ',' or whitespace cannot round-trip.
std::string CompressHostlist(std::vector<std::string> names);

}  // namespace gpusched
