#include "daemon/sim/trace_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/sim/csv_trace.h"
#include "daemon/sim/openb_trace.h"
#include "daemon/sim/sacct_trace.h"

namespace gpusched::sim {

absl::StatusOr<TraceText> ReadTraceText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read trace file ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  TraceText read{buffer.str(), false};
  // Spreadsheet exports start with a UTF-8 byte-order mark; the header would
  // then not match.
  constexpr absl::string_view kBom = "\xEF\xBB\xBF";
  read.had_bom = absl::StartsWith(read.text, kBom);
  if (read.had_bom) read.text.erase(0, kBom.size());
  return read;
}

absl::StatusOr<Trace> LoadTrace(const std::string& path, TraceFormat format, const TraceOptions& options) {
  absl::StatusOr<TraceText> read = ReadTraceText(path);
  if (!read.ok()) return read.status();
  const std::string& text = read->text;
  const bool bom = read->had_bom;
  if (format == TraceFormat::kAuto) {
    const std::string header = text.substr(0, text.find('\n'));
    format = header.find('|') != std::string::npos    ? TraceFormat::kSacct
             : absl::StrContains(header, "gpu_milli") ? TraceFormat::kOpenb
                                                      : TraceFormat::kCsv;
  }
  if (format == TraceFormat::kOpenb && !options.queue.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": an openb pod list has no queues; replay it without --queue"));
  }
  auto trace = format == TraceFormat::kSacct   ? ParseSacctTrace(text, options)
               : format == TraceFormat::kOpenb ? ParseOpenbTrace(text)
                                               : ParseCsvTrace(text, options);
  if (!trace.ok()) return absl::Status(trace.status().code(), absl::StrCat(path, ": ", trace.status().message()));
  if (bom) trace->warnings.insert(trace->warnings.begin(), "line 1: a UTF-8 byte-order mark, skipped");
  if (!options.queue.empty() && !trace->queues.contains(options.queue)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no row is in queue \"", options.queue,
                                                   "\" (queues: ", absl::StrJoin(trace->queues, ", "), ")"));
  }
  return trace;
}

}  // namespace gpusched::sim
