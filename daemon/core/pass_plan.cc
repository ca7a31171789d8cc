#include "daemon/core/pass_plan.h"

namespace gpusched::core {

std::string UtcTime(absl::Time t) { return absl::FormatTime("%Y-%m-%d %H:%M:%S", t, absl::UTCTimeZone()); }

v1::WaitCause ToProto(WaitCause cause) {
  switch (cause) {
    case WaitCause::kHeld: return v1::WAIT_CAUSE_HELD;
    case WaitCause::kArrayLimit: return v1::WAIT_CAUSE_ARRAY_LIMIT;
    case WaitCause::kDependency: return v1::WAIT_CAUSE_DEPENDENCY;
    case WaitCause::kQueueLimit: return v1::WAIT_CAUSE_QUEUE_LIMIT;
    case WaitCause::kBlocked: return v1::WAIT_CAUSE_BLOCKED;
    case WaitCause::kReserved: return v1::WAIT_CAUSE_RESERVED;
    case WaitCause::kBehindReservation: return v1::WAIT_CAUSE_BEHIND_RESERVATION;
    case WaitCause::kMayBePassed: return v1::WAIT_CAUSE_MAY_BE_PASSED;
    case WaitCause::kCannotStart: return v1::WAIT_CAUSE_CANNOT_START;
    case WaitCause::kBetterPlacement: return v1::WAIT_CAUSE_BETTER_PLACEMENT;
    case WaitCause::kPreempting: return v1::WAIT_CAUSE_PREEMPTING;
    case WaitCause::kInternalError: return v1::WAIT_CAUSE_INTERNAL_ERROR;
  }
  return v1::WAIT_CAUSE_UNSPECIFIED;
}

const PlannedStart* PassPlan::StartOf(uint64_t job_id) const {
  for (const PlannedStart& s : starts) {
    if (s.job_id == job_id) return &s;
  }
  return nullptr;
}

const PlannedWait* PassPlan::WaitOf(uint64_t job_id) const {
  for (const PlannedWait& w : waits) {
    if (w.job_id == job_id) return &w;
  }
  return nullptr;
}

const PlannedReservation* PassPlan::ReservationOf(uint64_t job_id) const {
  for (const PlannedReservation& r : reservations) {
    if (r.reservation.job_id == job_id) return &r;
  }
  return nullptr;
}

}  // namespace gpusched::core
