// SubmitJob's spec as any client could send it (the bytes are a serialized
// JobSpec): the core must refuse it with a reason or accept and schedule it,
// never crash, and never hand out more GPUs than there are.
#include <string>

#include "common/clock.h"
#include "daemon/core/scheduler_core.h"
#include "tests/fuzz/core_fuzz_cluster.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpusched;
  fuzz::QuietProtobufLogs();
  v1::JobSpec spec;
  if (!spec.ParseFromArray(data, static_cast<int>(size))) return 0;
  ManualClock clock;
  clock.Set(absl::FromUnixSeconds(1'700'000'000));
  core::SchedulerCore core(clock, core::CoreOptions{});
  core::Effects fx;
  fuzz::RegisterSmallCluster(core, fx);
  auto submitted = core.Submit(spec, "", fx);
  if (!submitted.ok()) {
    FUZZ_CHECK(!submitted.status().message().empty());
    return 0;
  }
  core.Tick(fx);
  core.Schedule(fx);
  int64_t allocated = 0;
  for (const auto& [name, slot] : core.cluster().nodes()) allocated += slot.gpu_count - slot.FreeGpus();
  FUZZ_CHECK(allocated >= 0 && allocated <= 20);
  const v1::Job* job = core.FindActive(submitted->job_id);
  FUZZ_CHECK(job != nullptr);
  if (job->state() != v1::JOB_STATE_PENDING) FUZZ_CHECK(allocated == job->spec().resources().gpus());
  return 0;
}
