// Traces come from anywhere: shared/traces CSVs, sacct exports, the Alibaba
// openb lists, spreadsheets that touched them. `gpuschedd simulate` must read
// any bytes or refuse them with a line, never crash, and what it reads must
// be a trace it can replay.
#include <string>

#include "daemon/sim/csv_trace.h"
#include "daemon/sim/openb_cluster.h"
#include "daemon/sim/openb_trace.h"
#include "daemon/sim/sacct_trace.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

void CheckReplayable(const absl::StatusOr<gpusched::sim::Trace>& trace) {
  if (!trace.ok()) {
    FUZZ_CHECK(!trace.status().message().empty());
    return;
  }
  int64_t last_submit = 0;
  for (const auto& job : trace->jobs) {
    // FinishTrace sorts by submission and rebases on the first job.
    FUZZ_CHECK(job.submit_s >= last_submit);
    last_submit = job.submit_s;
    FUZZ_CHECK(job.gpus > 0);
    FUZZ_CHECK(job.duration_s >= 0);
    FUZZ_CHECK(job.gpu_milli > 0 && job.gpu_milli <= 1000);
    FUZZ_CHECK(job.cpu_milli >= 0 && job.memory_mib >= 0);
  }
  FUZZ_CHECK(static_cast<int64_t>(trace->jobs.size()) <= trace->rows);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  CheckReplayable(gpusched::sim::ParseCsvTrace(text, {}));
  CheckReplayable(gpusched::sim::ParseSacctTrace(text, {}));
  CheckReplayable(gpusched::sim::ParseOpenbTrace(text));
  auto nodes = gpusched::sim::ParseOpenbNodes(text);
  if (!nodes.ok()) {
    FUZZ_CHECK(!nodes.status().message().empty());
  } else if (!nodes->empty()) {
    auto cluster = gpusched::sim::BuildOpenbCluster(*nodes, "fuzz");
    if (!cluster.ok()) FUZZ_CHECK(!cluster.status().message().empty());
  }
  return 0;
}
