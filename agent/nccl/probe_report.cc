#include "agent/nccl/probe_report.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace gpusched::agent {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

// Typed reads of one JSON object's fields. The first problem is kept in
// `error` and later reads return defaults, so a caller checks once per object
// instead of after every field.
class Fields {
 public:
  Fields(const Struct& object, std::string where, std::string* error)
      : object_(object), where_(std::move(where)), error_(error) {}

  double Number(const std::string& name) {
    const Value* v = Get(name, Value::kNumberValue, "a number");
    return v == nullptr ? 0 : v->number_value();
  }
  // JSON has only doubles; sizes and ordinals must still be whole and >= 0.
  int64_t Whole(const std::string& name) { return WholeOf(Get(name, Value::kNumberValue, "a number"), name); }
  std::string String(const std::string& name) {
    const Value* v = Get(name, Value::kStringValue, "a string");
    return v == nullptr ? "" : v->string_value();
  }
  const ListValue* List(const std::string& name) {
    const Value* v = Get(name, Value::kListValue, "a list");
    return v == nullptr ? nullptr : &v->list_value();
  }
  int64_t WholeOf(const Value* v, const std::string& name) {
    if (v == nullptr) return 0;
    const double x = v->number_value();
    if (v->kind_case() != Value::kNumberValue || x < 0 || x != std::floor(x) || x > 9e15) {
      Fail(name, "is not a whole number >= 0");
      return 0;
    }
    return static_cast<int64_t>(x);
  }

 private:
  const Value* Get(const std::string& name, Value::KindCase kind, const char* what) {
    if (!error_->empty()) return nullptr;
    auto it = object_.fields().find(name);
    if (it == object_.fields().end()) return Fail(name, "is missing");
    if (it->second.kind_case() != kind) return Fail(name, absl::StrCat("is not ", what));
    return &it->second;
  }
  const Value* Fail(const std::string& name, const std::string& problem) {
    if (error_->empty()) *error_ = absl::StrCat(where_, name, " ", problem);
    return nullptr;
  }

  const Struct& object_;
  std::string where_;
  std::string* error_;
};

absl::Status Malformed(const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("NCCL probe report: ", why));
}

}  // namespace

absl::StatusOr<ProbeReport> ParseProbeReport(const std::string& json) {
  if (absl::StripAsciiWhitespace(json).empty()) return Malformed("empty output");
  Struct root;
  auto parsed = google::protobuf::util::JsonStringToMessage(json, &root);
  if (!parsed.ok()) {
    // protobuf's first line says what is wrong; the next ones quote the input
    // around the spot, which we quote from its start instead, on one line.
    const std::string what = parsed.message().ToString();
    return Malformed(absl::StrCat("not valid JSON (", what.substr(0, what.find('\n')), "); it begins \"",
                                  absl::CHexEscape(json.substr(0, 60)), "\""));
  }
  std::string error;
  Fields top(root, "", &error);
  ProbeReport report;
  report.nccl_version = top.String("nccl_version");
  report.nranks = static_cast<int>(top.Whole("nranks"));
  report.peak_busbw_gbps = top.Number("peak_busbw_gbps");
  const ListValue* gpus = top.List("gpus");
  const ListValue* rows = top.List("rows");
  if (!error.empty()) return Malformed(error);

  for (int i = 0; i < gpus->values_size() && error.empty(); ++i) {
    report.gpus.push_back(static_cast<int>(top.WholeOf(&gpus->values(i), absl::StrCat("gpus[", i, "]"))));
  }
  for (int i = 0; i < rows->values_size() && error.empty(); ++i) {
    const std::string where = absl::StrCat("rows[", i, "]");
    if (rows->values(i).kind_case() != Value::kStructValue) return Malformed(where + " is not an object");
    Fields row(rows->values(i).struct_value(), where + ".", &error);
    report.rows.push_back({row.Whole("bytes"), row.Whole("count"), row.Number("time_us"), row.Number("algbw_gbps"),
                           row.Number("busbw_gbps")});
  }
  if (!error.empty()) return Malformed(error);
  if (report.nranks < 1) return Malformed("nranks is 0");
  if (report.gpus.empty()) return Malformed("gpus is empty");
  if (report.rows.empty()) return Malformed("rows is empty: the probe measured nothing");
  return report;
}

}  // namespace gpusched::agent
