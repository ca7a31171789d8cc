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


}  // namespace gpusched::core::testing
