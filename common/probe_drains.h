#pragma once

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched {

// The first words of the drain reasons the NCCL probe sets, for people:
// who drained a node is its drain kind (Node.drain_kind), never read back
// from the text.
inline constexpr absl::string_view kProbeDrainPrefix = "NCCL probe: ";
inline constexpr absl::string_view kPreflightDrainPrefix = "NCCL preflight: ";

// The daemon lifts a probe's and a preflight's drain by itself (a later
// calibration that passes); `gpusched nodes probe` reports them.
inline bool IsProbeDrain(v1::DrainKind kind) {
  return kind == v1::DRAIN_KIND_LINK_PROBE || kind == v1::DRAIN_KIND_PREFLIGHT;
}

// For rows stored before drains had a kind: what their text says. Read once,
// as a node is restored; an operator's drain that happens to start like the
// probe's can only be mistaken in those old rows.
inline v1::DrainKind LegacyDrainKind(absl::string_view reason) {
  if (reason.empty()) return v1::DRAIN_KIND_NONE;
  if (absl::StartsWith(reason, kProbeDrainPrefix)) return v1::DRAIN_KIND_LINK_PROBE;
  if (absl::StartsWith(reason, kPreflightDrainPrefix)) return v1::DRAIN_KIND_PREFLIGHT;
  return v1::DRAIN_KIND_OPERATOR;
}

}  // namespace gpusched
