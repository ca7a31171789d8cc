#pragma once

// Invariants of the core's accounting that must hold after every step of a
// randomized run: no GPU given twice, gangs whole, GPUs, CPUs and memory
// accounted exactly as the placed jobs hold them, no internal error.

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "common/proto_time.h"
#include "tests/unit/core/core_harness.h"

namespace gpusched::core::testing {

inline void CheckInvariants(const CoreHarness& h, const std::set<uint64_t>& ids) {
  std::map<std::pair<std::string, int32_t>, uint64_t> held;  // (node, gpu) -> job
  for (uint64_t id : ids) {
    const v1::Job* job = h.core.FindActive(id);
    if (job == nullptr) continue;
    if (job->state() == v1::JOB_STATE_PENDING) {
      CHECK(job->allocation().nodes_size() == 0);
      continue;
    }
    // All or nothing: a placed gang holds every GPU of every node part.
    int64_t gpus = 0;
    for (const auto& part : job->allocation().nodes()) {
      const auto* slot = h.core.cluster().Find(part.node());
      REQUIRE(slot != nullptr);
      CHECK(slot->jobs.contains(id));
      for (int32_t index : part.gpu_indices()) {
        ++gpus;
        CHECK(slot->gpu_owner[slot->PositionOf(index)] == id);
        auto [it, fresh] = held.emplace(std::pair(part.node(), index), id);
        INFO("GPU " << index << " of " << part.node() << " given to jobs " << it->second << " and " << id);
        CHECK(fresh);  // never given twice
      }
    }
    CHECK(gpus == job->spec().resources().gpus());
    // Never running past its limit without being stopped.
    if (job->state() == v1::JOB_STATE_RUNNING && job->spec().time_limit_s() > 0 &&
        h.clock.Now() - FromProtoTime(job->start_time()) > absl::Seconds(job->spec().time_limit_s())) {
      CHECK(job->stopping_as() != v1::JOB_STATE_UNSPECIFIED);  // TIMEOUT, or already stopping for another reason
    }
  }
  // Nothing else is held: accounting matches the jobs exactly, GPUs, CPUs
  // and memory alike (the pass's reservation hold is gone after it).
  std::map<std::string, std::pair<int64_t, int64_t>> cpus_mem;  // by node
  for (uint64_t id : ids) {
    const v1::Job* job = h.core.FindActive(id);
    if (job == nullptr || job->state() == v1::JOB_STATE_PENDING) continue;
    for (const auto& part : job->allocation().nodes()) {
      cpus_mem[part.node()].first += part.cpus();
      cpus_mem[part.node()].second += part.mem_mb();
    }
  }
  CHECK(h.fx.internal_errors.empty());
  for (const auto& [name, slot] : h.core.cluster().nodes()) {
    INFO("node " << name);
    CHECK(slot.cpus_used == cpus_mem[name].first);
    CHECK(slot.mem_used_mb == cpus_mem[name].second);
    for (size_t i = 0; i < slot.gpu_owner.size(); ++i) {
      if (slot.gpu_owner[i] == 0) continue;
      CHECK(held.contains(std::pair(name, slot.info.gpus(static_cast<int>(i)).index())));
    }
  }
}

// One pass, as CoreHarness::Pass, that first reads the plan the pass will
// apply and checks it: each job has one outcome; the starts fit together
// on GPUs no placed job holds; a start on a reservation's GPUs is gone
// before it starts (EASY's promise); every reservation's job waits for it;
// and the applied pass starts exactly the planned jobs where planned.
inline void PlannedPass(CoreHarness& h) {
  h.core.Tick(h.fx);
  h.core.MakeArrayTasks(h.fx);
  const PassPlan plan = h.core.PlanPass();
  const absl::Time now = h.clock.Now();
  std::set<uint64_t> decided;
  for (const PlannedStart& s : plan.starts) CHECK(decided.insert(s.job_id).second);
  for (const PlannedWait& w : plan.waits) CHECK(decided.insert(w.job_id).second);
  for (const auto& [id, reason] : plan.cancels) CHECK(decided.insert(id).second);

  std::map<std::pair<std::string, int32_t>, size_t> taken;  // (node, gpu) -> index in plan.starts
  for (size_t i = 0; i < plan.starts.size(); ++i) {
    const PlannedStart& s = plan.starts[i];
    const v1::Job* job = h.core.FindActive(s.job_id);
    REQUIRE(job != nullptr);
    CHECK(job->state() == v1::JOB_STATE_PENDING);
    for (const auto& part : s.allocation.nodes()) {
      const NodeSlot* slot = h.core.cluster().Find(part.node());
      REQUIRE(slot != nullptr);
      for (int32_t index : part.gpu_indices()) {
        INFO("job " << s.job_id << " planned on GPU " << index << " of " << part.node());
        CHECK(slot->gpu_owner[slot->PositionOf(index)] == 0);
        CHECK(taken.emplace(std::pair(part.node(), index), i).second);
      }
    }
  }
  for (const PlannedReservation& r : plan.reservations) {
    const PlannedWait* wait = plan.WaitOf(r.reservation.job_id);
    REQUIRE(wait != nullptr);
    CHECK(r.reservation.start >= now);
    for (const auto& part : r.reservation.allocation.nodes()) {
      for (int32_t index : part.gpu_indices()) {
        // Starts planned before it are what it was planned around.
        auto user = taken.find(std::pair(part.node(), index));
        if (user == taken.end() || user->second < r.after_starts) continue;
        const uint64_t backfilled = plan.starts[user->second].job_id;
        const v1::JobSpec& spec = h.core.FindActive(backfilled)->spec();
        INFO("job " << backfilled << " planned on GPU " << index << " of " << part.node() << ", reserved for job "
                    << r.reservation.job_id);
        // A job smaller than a node, on the GPUs of a reservation that yields
        // to such jobs (its job has not waited twice its starvation bound).
        if (r.yields_to_small && spec.resources().gpus() < h.core.cluster().LargestNodeGpus()) continue;
        // Gone before it starts: by its time limit, else by the high end of its estimate.
        if (spec.time_limit_s() > 0) {
          CHECK(now + absl::Seconds(spec.time_limit_s()) <= r.reservation.start);
        } else {
          const RuntimeEstimate estimate = h.core.EstimateRunTime(spec);
          REQUIRE(estimate.known());
          CHECK(now + estimate.high <= r.reservation.start);
        }
      }
    }
  }

  h.core.Schedule(h.fx);
  for (const PlannedStart& s : plan.starts) {
    const v1::Job* job = h.core.FindActive(s.job_id);
    REQUIRE(job != nullptr);
    CHECK(job->state() == v1::JOB_STATE_STARTING);
    CHECK(job->allocation().nodes_size() == s.allocation.nodes_size());
    for (int i = 0; i < job->allocation().nodes_size() && i < s.allocation.nodes_size(); ++i) {
      CHECK(job->allocation().nodes(i).node() == s.allocation.nodes(i).node());
      CHECK(
          std::vector<int32_t>(job->allocation().nodes(i).gpu_indices().begin(),
                               job->allocation().nodes(i).gpu_indices().end()) ==
          std::vector<int32_t>(s.allocation.nodes(i).gpu_indices().begin(), s.allocation.nodes(i).gpu_indices().end()));
    }
  }
  for (const PlannedWait& w : plan.waits) {
    const v1::Job* job = h.core.FindActive(w.job_id);
    REQUIRE(job != nullptr);
    CHECK(job->reason() == w.reason);
  }
}

}  // namespace gpusched::core::testing
