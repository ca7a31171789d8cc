#include "daemon/core/pass_plan.h"

namespace gpusched::core {

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
