#include "cli/history.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/format.h"
#include "cli/table.h"
#include "common/gpu_fraction.h"
#include "common/job_states.h"
#include "common/proto_time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"

namespace gpusched::cli {

JobAccounting AccountFor(const v1::Job& job) {
  JobAccounting a;
  const absl::Time submitted = FromProtoTime(job.submit_time());
  const absl::Time ended = FromProtoTime(job.end_time());
  if (IsSet(job.start_time())) {
    const absl::Time started = FromProtoTime(job.start_time());
    a.waited = started - submitted;
    if (IsSet(job.end_time())) a.ran = ended - started;
  } else if (IsSet(job.end_time())) {
    a.waited = ended - submitted;
  }
  a.gpu_hours = HeldGpus(job.spec().resources()) * absl::ToDoubleHours(a.ran);
  return a;
}

std::string RenderHistoryTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, absl::TimeZone zone) {
  Table table({"ID", "NAME", "USER", "QUEUE", "STATE", "GPUS", "WAITED", "RAN", "GPU-H", "ENDED", "NODES"});
  double total_gpu_hours = 0;
  absl::Duration total_wait;
  for (const v1::Job& job : jobs) {
    const v1::JobSpec& spec = job.spec();
    const JobAccounting a = AccountFor(job);
    total_gpu_hours += a.gpu_hours;
    total_wait += a.waited;
    table.AddRow({ArrayTaskLabel(job), spec.name(), spec.user(), spec.queue(), std::string(StateName(job.state())),
                  GpusLabel(spec.resources()), FormatElapsed(a.waited), FormatElapsed(a.ran),
                  absl::StrFormat("%.2f", a.gpu_hours), FormatTimestamp(job.end_time(), zone),
                  FormatPlacement(job.allocation())});
  }
  std::string out = table.ToString();
  if (!jobs.empty()) {
    absl::StrAppend(&out, jobs.size(), jobs.size() == 1 ? " job, " : " jobs, ",
                    absl::StrFormat("%.2f", total_gpu_hours), " GPU-hours, mean wait ",
                    FormatElapsed(total_wait / jobs.size()), "\n");
  }
  return out;
}

std::string RenderHistoryJson(const google::protobuf::RepeatedPtrField<v1::Job>& jobs) {
  using google::protobuf::util::TimeUtil;
  google::protobuf::Struct root;
  google::protobuf::ListValue* list = (*root.mutable_fields())["jobs"].mutable_list_value();
  double total_gpu_hours = 0;
  for (const v1::Job& job : jobs) {
    const v1::JobSpec& spec = job.spec();
    const JobAccounting a = AccountFor(job);
    total_gpu_hours += a.gpu_hours;
    auto& f = *list->add_values()->mutable_struct_value()->mutable_fields();
    f["id"].set_number_value(static_cast<double>(job.id()));
    if (job.has_array()) {
      f["array_id"].set_number_value(static_cast<double>(job.array().array_id()));
      f["array_index"].set_number_value(job.array().index());
    }
    f["name"].set_string_value(spec.name());
    f["user"].set_string_value(spec.user());
    f["account"].set_string_value(spec.account());
    f["queue"].set_string_value(spec.queue());
    f["state"].set_string_value(std::string(StateName(job.state())));
    f["gpus"].set_number_value(static_cast<double>(RequestedGpus(spec.resources())));
    if (!spec.resources().mig_profile().empty()) f["mig_profile"].set_string_value(spec.resources().mig_profile());
    if (spec.resources().gpu_share_milli() > 0) {
      f["gpu_share_percent"].set_number_value(spec.resources().gpu_share_milli() / 10.0);
    }
    f["submit_time"].set_string_value(TimeUtil::ToString(job.submit_time()));
    if (IsSet(job.start_time())) f["start_time"].set_string_value(TimeUtil::ToString(job.start_time()));
    if (IsSet(job.end_time())) f["end_time"].set_string_value(TimeUtil::ToString(job.end_time()));
    f["wait_s"].set_number_value(absl::ToDoubleSeconds(a.waited));
    f["run_s"].set_number_value(absl::ToDoubleSeconds(a.ran));
    f["gpu_hours"].set_number_value(a.gpu_hours);
    f["attempts"].set_number_value(job.attempt() + 1);
    f["exit_code"].set_number_value(job.exit_code());
    f["reason"].set_string_value(job.reason());
    f["placement"].set_string_value(FormatPlacement(job.allocation()));
  }
  (*root.mutable_fields())["gpu_hours"].set_number_value(total_gpu_hours);
  std::string json;
  // A Struct of strings and numbers always converts.
  (void)google::protobuf::util::MessageToJsonString(root, &json);
  return json + "\n";
}

}  // namespace gpusched::cli
