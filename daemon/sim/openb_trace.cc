#include "daemon/sim/openb_trace.h"

#include <array>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "daemon/sim/csv_table.h"
#include "daemon/sim/trace_file.h"

namespace gpusched::sim {
namespace {

constexpr int kMaxGpusPerNode = 64;

absl::StatusOr<int> Count(const std::string& text, int line, absl::string_view field, int64_t max) {
  auto v = CsvWholeNumber(text, line, field);
  if (!v.ok()) return v.status();
  if (*v > max) return CsvFieldError(line, field, absl::StrCat("at most ", max, ", got ", *v));
  return static_cast<int>(*v);
}

template <typename T>
absl::StatusOr<std::vector<T>> Load(const std::string& path,
                                    absl::StatusOr<std::vector<T>> (*parse)(absl::string_view)) {
  absl::StatusOr<TraceText> read = ReadTraceText(path);
  if (!read.ok()) return read.status();
  auto parsed = parse(read->text);
  if (!parsed.ok()) {
    return absl::Status(parsed.status().code(), absl::StrCat(path, ": ", parsed.status().message()));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<std::vector<OpenbNode>> ParseOpenbNodes(absl::string_view text) {
  constexpr std::array<absl::string_view, 5> kColumns = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
  enum { kName, kCpu, kMemory, kGpus, kModel };
  std::vector<OpenbNode> nodes;
  absl::flat_hash_map<std::string, int> line_of;
  absl::Status read = ForEachCsvRow(text, kColumns, [&](const CsvRow& row) -> absl::Status {
    OpenbNode node;
    node.line = row.line();
    node.name = row[kName];
    if (node.name.empty()) return CsvFieldError(row.line(), "sn", "is empty");
    if (auto [it, inserted] = line_of.emplace(node.name, row.line()); !inserted) {
      return CsvFieldError(row.line(), "sn", absl::StrCat("node ", node.name, " is also on line ", it->second));
    }
    auto cpu = CsvWholeNumber(row[kCpu], row.line(), "cpu_milli");
    if (!cpu.ok()) return cpu.status();
    auto memory = CsvWholeNumber(row[kMemory], row.line(), "memory_mib");
    if (!memory.ok()) return memory.status();
    auto gpus = Count(row[kGpus], row.line(), "gpu", kMaxGpusPerNode);
    if (!gpus.ok()) return gpus.status();
    node.cpu_milli = *cpu;
    node.memory_mib = *memory;
    node.gpus = *gpus;
    node.model = row[kModel];
    if (node.gpus > 0 && node.model.empty()) return CsvFieldError(row.line(), "model", "is empty");
    nodes.push_back(std::move(node));
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  if (nodes.empty()) return absl::InvalidArgumentError("no nodes: the file has a header only");
  return nodes;
}

namespace {

// The pod columns both readers take, first in their column lists, so that
// ReadPod finds them at the same positions.
constexpr std::array<absl::string_view, 6> kPodColumns = {"name",    "cpu_milli", "memory_mib",
                                                          "num_gpu", "gpu_milli", "gpu_spec"};
enum PodColumn { kPodName, kPodCpu, kPodMemory, kPodNumGpu, kPodGpuMilli, kPodGpuSpec };

absl::StatusOr<OpenbPod> ReadPod(const CsvRow& row) {
  OpenbPod pod;
  pod.line = row.line();
  pod.name = row[kPodName];
  if (pod.name.empty()) return CsvFieldError(row.line(), "name", "is empty");
  auto cpu = CsvWholeNumber(row[kPodCpu], row.line(), "cpu_milli");
  if (!cpu.ok()) return cpu.status();
  auto memory = CsvWholeNumber(row[kPodMemory], row.line(), "memory_mib");
  if (!memory.ok()) return memory.status();
  auto num_gpu = Count(row[kPodNumGpu], row.line(), "num_gpu", kMaxGpusPerNode);
  if (!num_gpu.ok()) return num_gpu.status();
  auto gpu_milli = Count(row[kPodGpuMilli], row.line(), "gpu_milli", 1000);
  if (!gpu_milli.ok()) return gpu_milli.status();
  if (*num_gpu == 0 && *gpu_milli != 0) {
    return CsvFieldError(row.line(), "gpu_milli", absl::StrCat("is ", *gpu_milli, " but num_gpu is 0"));
  }
  if (*num_gpu > 0 && *gpu_milli == 0) {
    return CsvFieldError(row.line(), "gpu_milli", absl::StrCat("is 0 but num_gpu is ", *num_gpu));
  }
  pod.cpu_milli = *cpu;
  pod.memory_mib = *memory;
  pod.num_gpu = *num_gpu;
  pod.gpu_milli = *gpu_milli;
  if (!row[kPodGpuSpec].empty()) {
    for (absl::string_view model : absl::StrSplit(row[kPodGpuSpec], '|')) {
      if (model.empty()) return CsvFieldError(row.line(), "gpu_spec", "has an empty model name");
      pod.gpu_spec.emplace_back(model);
    }
  }
  return pod;
}

// A time column: seconds from the trace's start; empty reads as -1 (the
// pod never got there).
absl::StatusOr<int64_t> SecondsOrNone(const std::string& text, int line, absl::string_view field) {
  if (text.empty()) return -1;
  return CsvWholeNumber(text, line, field);
}

}  // namespace

absl::StatusOr<std::vector<OpenbPod>> ParseOpenbPods(absl::string_view text) {
  std::vector<OpenbPod> pods;
  absl::Status read = ForEachCsvRow(text, kPodColumns, [&](const CsvRow& row) -> absl::Status {
    auto pod = ReadPod(row);
    if (!pod.ok()) return pod.status();
    pods.push_back(*std::move(pod));
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  if (pods.empty()) return absl::InvalidArgumentError("no pods: the file has a header only");
  return pods;
}

absl::StatusOr<Trace> ParseOpenbTrace(absl::string_view text) {
  std::vector<absl::string_view> columns(kPodColumns.begin(), kPodColumns.end());
  const size_t kCreation = columns.size();
  for (absl::string_view time : {"creation_time", "scheduled_time", "deletion_time"}) columns.push_back(time);
  const size_t kScheduled = kCreation + 1, kDeletion = kCreation + 2;
  Trace trace;
  absl::Status read = ForEachCsvRow(text, columns, [&](const CsvRow& row) -> absl::Status {
    ++trace.rows;
    auto pod = ReadPod(row);
    if (!pod.ok()) return pod.status();
    auto created = CsvWholeNumber(row[kCreation], row.line(), "creation_time");
    if (!created.ok()) return created.status();
    auto scheduled = SecondsOrNone(row[kScheduled], row.line(), "scheduled_time");
    if (!scheduled.ok()) return scheduled.status();
    auto deleted = SecondsOrNone(row[kDeletion], row.line(), "deletion_time");
    if (!deleted.ok()) return deleted.status();
    if (*scheduled >= 0 && *scheduled < *created) {
      return CsvFieldError(row.line(), "scheduled_time",
                           absl::StrCat(*scheduled, " is before creation_time ", *created));
    }
    if (*scheduled >= 0 && *deleted >= 0 && *deleted < *scheduled) {
      return CsvFieldError(row.line(), "deletion_time",
                           absl::StrCat(*deleted, " is before scheduled_time ", *scheduled));
    }
    if (pod->gpu_spec.size() > 1) {
      return CsvFieldError(row.line(), "gpu_spec",
                           absl::StrCat("names ", pod->gpu_spec.size(),
                                        " models; a replay through the core takes one (a job asks for one model)"));
    }
    if (pod->num_gpu == 0) {
      ++trace.skipped_no_gpus;
      return absl::OkStatus();
    }
    // Pending when the trace was taken: how long it would have run is unknown.
    if (*scheduled < 0 || *deleted < 0) {
      ++trace.skipped_unknown_duration;
      return absl::OkStatus();
    }
    TraceJob job;
    job.id = pod->name;
    job.submit_s = *created;
    job.gpus = pod->num_gpu;
    job.duration_s = *deleted - *scheduled;
    job.user = kOpenbUser;
    job.line = row.line();
    job.gpu_milli = pod->gpu_milli;
    job.cpu_milli = pod->cpu_milli;
    job.memory_mib = pod->memory_mib;
    if (!pod->gpu_spec.empty()) job.gpu_model = pod->gpu_spec.front();
    job.one_node = true;
    trace.jobs.push_back(std::move(job));
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  FinishTrace(trace);
  return trace;
}

absl::StatusOr<std::vector<OpenbNode>> LoadOpenbNodes(const std::string& path) {
  return Load<OpenbNode>(path, &ParseOpenbNodes);
}

absl::StatusOr<std::vector<OpenbPod>> LoadOpenbPods(const std::string& path) {
  return Load<OpenbPod>(path, &ParseOpenbPods);
}

}  // namespace gpusched::sim
