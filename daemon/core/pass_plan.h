#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "daemon/core/backfill.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// What one scheduling pass decided (pass_planner.h), as a value: the core
// applies it (SchedulerCore::Schedule), tests read it (SchedulerCore::PlanPass).

// Why a pending job does not start this pass: the one catalogue of the
// pass's wait reasons. The reason text says the same for people.
enum class WaitCause {
  kHeld,               // held until released
  kArrayLimit,         // its array's limit on tasks at once
  kDependency,         // waits for other jobs
  kQueueLimit,         // its queue's GPU limit, in all or per user
  kBlocked,            // behind a job of its nodes that can start neither now nor by a reservation
  kReserved,           // holds a reservation: starts by `estimated_start`
  kBehindReservation,  // cannot be placed off a reservation's GPUs, nor end before it starts
  kMayBePassed,        // cannot start or be reserved; jobs behind it may pass until its bound
  kCannotStart,        // cannot start or be reserved, past its bound: holds back jobs of its nodes
  kBetterPlacement,    // waits for a better placement than the free one (wait_or_spread.h)
  kPreempting,         // lower tiers are being stopped to make room for it
  kInternalError,      // the accounting refused the placement: a bug, logged
};

// A time in a reason, read by people across time zones: "2026-12-02 18:40:00".
std::string UtcTime(absl::Time t);

// The kind as the API shows it (Job.wait_cause).
v1::WaitCause ToProto(WaitCause cause);

inline constexpr absl::string_view kHeldReason = "held: waits until released (gpusched release)";
// A job no pass has looked at yet: just submitted, or beyond queue_depth.
inline constexpr absl::string_view kNotYetConsidered = "queued: not yet considered by the scheduler";

struct PlannedStart {
  uint64_t job_id = 0;
  v1::Allocation allocation;
};

struct PlannedWait {
  uint64_t job_id = 0;
  WaitCause cause = WaitCause::kCannotStart;
  std::string reason;
  // Set for kReserved only: every other wait clears the job's estimate.
  std::optional<absl::Time> estimated_start;
};

// Gangs of lower tiers (or demoted gangs of its tier) stopped so that
// `job_id` can start where they were.
struct PlannedPreemption {
  uint64_t job_id = 0;
  std::vector<uint64_t> victims;
  std::string why;  // the victims' reason
  // Those of the victims stopped because their queue had demoted them
  // (Demoted, attained_service.h), not for a higher tier, each with its
  // reason: what it ran against its own threshold.
  std::vector<std::pair<uint64_t, std::string>> demoted;
};

// A reservation and the queues (NodeSlot::queue_mask bits) whose jobs
// compete with it for nodes: only those are held to it. The jobs of one
// pass's reservations never compete with each other for nodes.
struct PlannedReservation {
  Reservation reservation;
  uint64_t competing_queues = 0;
  // Whether jobs may use its GPUs on the strength of their estimated run
  // times, not only of their time limits.
  bool trusts_estimates = true;
  // Whether jobs smaller than a node may use its GPUs whatever their run
  // times: it is for a job of a whole node or more that has waited its
  // starvation bound but not kOverdueFactor times it (end_forecast.h). Such
  // a job went ahead of them at its bound; until then they ranked above it
  // and took GPUs first, and they go on doing so, for a while: each costs it
  // little (few GPU-hours), and the queue's mean wait much.
  bool yields_to_small = false;
  // How many of the plan's starts came before it: it was planned around
  // those (they end by their expected ends); the later ones were held to it.
  size_t after_starts = 0;
};

struct PassPlan {
  std::vector<PlannedStart> starts;  // in the order the pass placed them
  std::vector<PlannedWait> waits;
  std::vector<PlannedPreemption> preemptions;
  std::vector<PlannedReservation> reservations;
  // Jobs whose dependencies can never be met: cancelled with the reason.
  std::vector<std::pair<uint64_t, std::string>> cancels;
  // What the pass found inconsistent in the core's state (Effects::internal_errors).
  std::vector<std::string> internal_errors;

  // Lookups by job, for tests and tools (linear).
  const PlannedStart* StartOf(uint64_t job_id) const;
  const PlannedWait* WaitOf(uint64_t job_id) const;
  const PlannedReservation* ReservationOf(uint64_t job_id) const;
};

}  // namespace gpusched::core
