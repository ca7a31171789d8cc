#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "daemon/sim/trace.h"

namespace gpusched::sim {

enum class TraceFormat { kAuto, kCsv, kSacct, kOpenb };

struct TraceText {
  std::string text;
  bool had_bom = false;  // a UTF-8 byte-order mark was there and is removed
};

// A trace file's text, without the byte-order mark spreadsheet exports start
// with. NotFound "cannot read trace file PATH" when it cannot be read.
absl::StatusOr<TraceText> ReadTraceText(const std::string& path);

// Reads a trace file. kAuto tells the formats apart by the header: '|' in
// it means a sacct --parsable2 export, a gpu_milli column the Alibaba openb
// pod list, otherwise the CSV of shared/traces.
// NotFound when the file cannot be read; parse errors are InvalidArgument
// prefixed with the path ("trace.csv: line 7: field num_gpus: ...").
absl::StatusOr<Trace> LoadTrace(const std::string& path, TraceFormat format, const TraceOptions& options);

}  // namespace gpusched::sim
