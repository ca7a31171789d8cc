#include "daemon/sim/trace_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/sim/csv_trace.h"
#include "daemon/sim/sacct_trace.h"

namespace gpusched::sim {

absl::StatusOr<Trace> LoadTrace(const std::string& path, TraceFormat format, const TraceOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read trace file ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  if (format == TraceFormat::kAuto) {
    const std::string header = text.substr(0, text.find('\n'));
    format = header.find('|') != std::string::npos ? TraceFormat::kSacct : TraceFormat::kCsv;
  }
  auto trace = format == TraceFormat::kSacct ? ParseSacctTrace(text, options) : ParseCsvTrace(text, options);
  if (!trace.ok()) return absl::Status(trace.status().code(), absl::StrCat(path, ": ", trace.status().message()));
  if (!options.queue.empty() && !trace->queues.contains(options.queue)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no row is in queue \"", options.queue,
                                                   "\" (queues: ", absl::StrJoin(trace->queues, ", "), ")"));
  }
  return trace;
}

}  // namespace gpusched::sim
