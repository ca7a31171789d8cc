// SchedulerCore, job arrays: submitted as one record, their tasks made
// jobs as passes get to them (array_backlog.h), and the commands that act
// on a whole array (scheduler_core.h).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/job_array.h"
#include "common/proto_time.h"
#include "daemon/core/scheduler_core.h"

namespace gpusched::core {
namespace {

// What the tasks an array's record stands for wait for, as they are shown:
// a release, the array's limit on tasks at once, or a pass to get to them.
void SetBacklogWait(v1::Job& prototype) {
  if (prototype.held()) {
    prototype.set_reason(std::string(kHeldReason));
    prototype.set_wait_cause(v1::WAIT_CAUSE_HELD);
  } else if (prototype.array().max_running() > 0) {
    prototype.set_reason(LimitLedger::ArrayLimitReason(prototype));
    prototype.set_wait_cause(v1::WAIT_CAUSE_ARRAY_LIMIT);
  } else {
    prototype.set_reason(std::string(kNotYetConsidered));
    prototype.set_wait_cause(v1::WAIT_CAUSE_UNSPECIFIED);
  }
}

}  // namespace

absl::StatusOr<SubmitOutcome> SchedulerCore::SubmitArray(v1::JobSpec spec, absl::string_view array,
                                                         const std::string& client_request_id, Effects& fx) {
  if (absl::Status s = CheckClientRequestId(client_request_id); !s.ok()) return s;
  if (auto earlier = Retried(spec, client_request_id)) return *earlier;
  auto parsed = ParseJobArraySpec(array, options_.limits.max_array_tasks);
  if (!parsed.ok()) return parsed.status();
  if (absl::Status s = Admit(spec); !s.ok()) return s;
  const size_t tasks = parsed->indices.size();
  if (const size_t bytes = spec.ByteSizeLong(); bytes * tasks > options_.limits.max_array_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "array \"", array, "\": ", tasks, " tasks of a ", bytes / 1024, " KiB spec would store ",
        absl::StrFormat("%.1f", static_cast<double>(bytes * tasks) / (1 << 20)), " MiB, more than the ",
        options_.limits.max_array_bytes >> 20, " MiB an array may; keep the script in a file the tasks share"));
  }
  ArrayBacklog::Entry entry;
  JobArrayRecord& record = entry.record;
  v1::Job& prototype = record.prototype;
  const uint64_t array_id = jobs_.TakeIds(tasks);
  prototype.set_id(array_id);
  prototype.set_state(v1::JOB_STATE_PENDING);
  *prototype.mutable_spec() = std::move(spec);
  *prototype.mutable_submit_time() = ToProtoTime(clock_.Now());
  prototype.set_client_request_id(client_request_id);
  prototype.set_held(prototype.spec().hold());
  v1::ArrayTask& task = *prototype.mutable_array();
  task.set_array_id(array_id);
  task.set_count(static_cast<int32_t>(tasks));
  task.set_max_running(parsed->max_running);
  SetBacklogWait(prototype);
  record.indices = std::string(array);
  entry.indices = std::move(parsed->indices);
  jobs_.NoteArray(array_id, task.count());
  arrays_.Add(std::move(entry));
  // The first task is a job at once: it names the array, answers a retried
  // request id, and is what the submit replies with.
  MakeTasks(*arrays_.Find(array_id), 1, fx);
  return SubmitOutcome{array_id, false};
}

absl::Status SchedulerCore::RestoreArrays(std::vector<JobArrayRecord> records) {
  for (JobArrayRecord& record : records) {
    if (record.done()) continue;
    absl::StatusOr<std::vector<int32_t>> indices = ArrayRecordIndices(record);
    if (!indices.ok()) return indices.status();
    const uint64_t array_id = record.array_id();
    jobs_.NoteArray(array_id, record.count());
    jobs_.ContinueAfter(array_id + static_cast<uint64_t>(record.count()) - 1);
    arrays_.Add(ArrayBacklog::Entry{std::move(record), *std::move(indices)});
  }
  return absl::OkStatus();
}

void SchedulerCore::MakeTasks(ArrayBacklog::Entry& entry, int32_t count, Effects& fx) {
  const uint64_t array_id = entry.record.array_id();
  for (int32_t made = 0; made < count && entry.remaining() > 0; ++made) {
    const int32_t position = entry.record.materialized++;
    EnqueueJob(ArrayRecordTask(entry.record, position, entry.indices[position]), fx);
  }
  fx.arrays[array_id] = entry.record;
  if (entry.record.done()) arrays_.Erase(array_id);
}

void SchedulerCore::MakeTasksThrough(uint64_t job_id, Effects& fx) {
  if (ArrayBacklog::Entry* entry = arrays_.Covering(job_id)) {
    MakeTasks(*entry, static_cast<int32_t>(job_id - entry->next_id() + 1), fx);
  }
}

void SchedulerCore::MakeArrayTasks(Effects& fx) {
  std::vector<std::pair<uint64_t, int32_t>> due;  // array, tasks to make
  for (const auto& [array_id, entry] : arrays_.entries()) {
    if (entry.record.prototype.held()) continue;
    const int32_t limit = entry.record.prototype.array().max_running();
    const int32_t wanted =
        limit > 0 ? limit : static_cast<int32_t>(std::min<size_t>(options_.queue_depth, entry.record.count()));
    int32_t pending = 0;
    for (uint64_t id : ActiveArrayTasks(array_id)) pending += jobs_.at(id).job.state() == v1::JOB_STATE_PENDING;
    if (pending < wanted) due.emplace_back(array_id, wanted - pending);
  }
  for (const auto& [array_id, count] : due) MakeTasks(*arrays_.Find(array_id), count, fx);
}

std::optional<v1::JobState> SchedulerCore::StateOf(uint64_t job_id) const {
  if (std::optional<v1::JobState> state = jobs_.StateOf(job_id)) return state;
  if (arrays_.Covering(job_id) != nullptr) return v1::JOB_STATE_PENDING;
  return std::nullopt;
}

std::vector<uint64_t> SchedulerCore::ActiveArrayTasks(uint64_t array_id) const {
  return jobs_.ActiveTasks(array_id, options_.limits.max_array_tasks);
}

const v1::Job* SchedulerCore::FindActiveArrayTask(uint64_t array_id) const {
  std::vector<uint64_t> tasks = ActiveArrayTasks(array_id);
  if (!tasks.empty()) return &jobs_.at(tasks.front()).job;
  const ArrayBacklog::Entry* entry = arrays_.Find(array_id);
  return entry == nullptr ? nullptr : &entry->record.prototype;
}

absl::StatusOr<v1::Job> SchedulerCore::ForEachTask(uint64_t array_id,
                                                   const std::function<absl::StatusOr<v1::Job>(uint64_t)>& act) {
  const std::vector<uint64_t> tasks = ActiveArrayTasks(array_id);
  if (tasks.empty()) return absl::NotFoundError(absl::StrCat("job array ", array_id, " has no unfinished task"));
  std::optional<absl::StatusOr<v1::Job>> first;
  for (uint64_t id : tasks) {
    absl::StatusOr<v1::Job> result = act(id);
    if (!first.has_value() || (result.ok() && !first->ok())) first = std::move(result);
  }
  return *std::move(first);
}

absl::StatusOr<v1::Job> SchedulerCore::CancelArray(uint64_t array_id, const std::string& reason, Effects& fx) {
  // Each task ends with a row of its own, as one cancelled alone does.
  if (ArrayBacklog::Entry* entry = arrays_.Find(array_id)) MakeTasks(*entry, entry->remaining(), fx);
  return ForEachTask(array_id, [&](uint64_t id) { return Cancel(id, reason, fx); });
}

absl::StatusOr<v1::Job> SchedulerCore::HoldOrReleaseArray(uint64_t array_id, bool hold, Effects& fx) {
  absl::StatusOr<v1::Job> changed =
      ForEachTask(array_id, [&](uint64_t id) { return hold ? Hold(id, fx) : Release(id, fx); });
  ArrayBacklog::Entry* entry = arrays_.Find(array_id);
  if (entry == nullptr) return changed;
  entry->record.prototype.set_held(hold);
  SetBacklogWait(entry->record.prototype);
  fx.arrays[array_id] = entry->record;
  if (changed.ok()) return changed;
  const int32_t next = entry->record.materialized;
  return ArrayRecordTask(entry->record, next, entry->indices[next]);
}

absl::StatusOr<v1::Job> SchedulerCore::HoldArray(uint64_t array_id, Effects& fx) {
  return HoldOrReleaseArray(array_id, /*hold=*/true, fx);
}

absl::StatusOr<v1::Job> SchedulerCore::ReleaseArray(uint64_t array_id, Effects& fx) {
  return HoldOrReleaseArray(array_id, /*hold=*/false, fx);
}

}  // namespace gpusched::core
