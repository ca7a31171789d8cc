#include <signal.h>
#include <string.h>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/nccl/bandwidth_probe.h"
#include "common/io/process/run_program.h"

namespace gpusched::agent {
namespace {

// The probe's message is its last line; NCCL may warn before it.
std::string LastLine(absl::string_view text) {
  text = absl::StripTrailingAsciiWhitespace(text);
  const size_t newline = text.rfind('\n');
  if (newline != absl::string_view::npos) text.remove_prefix(newline + 1);
  return text.empty() ? "no message on stderr" : std::string(text);
}

}  // namespace

absl::StatusOr<ProbeReport> ProgramBandwidthProbe::Measure(const std::vector<int>& gpus) {
  if (gpus.empty()) return absl::InvalidArgumentError("NCCL probe: no GPUs to measure");
  std::vector<std::string> argv = {options_.program, "--json", "--gpus", absl::StrJoin(gpus, ",")};
  argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  auto run = RunProgram(argv, options_.timeout);
  if (!run.ok()) return run.status();
  if (run->signal != 0) {
    return absl::InternalError(
        absl::StrCat(options_.program, " was killed by signal ", run->signal, " (", strsignal(run->signal), ")"));
  }
  if (run->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat(options_.program, " exited with status ", run->exit_code, ": ", LastLine(run->err)));
  }
  auto report = ParseProbeReport(run->out);
  if (!report.ok())
    return absl::Status(report.status().code(), absl::StrCat(options_.program, ": ", report.status().message()));
  if (report->gpus != gpus) {
    return absl::InternalError(absl::StrCat(options_.program, " measured GPUs ", absl::StrJoin(report->gpus, ","),
                                            ", not the GPUs asked for (", absl::StrJoin(gpus, ","), ")"));
  }
  return report;
}

}  // namespace gpusched::agent
