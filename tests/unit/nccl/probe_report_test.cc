#include "agent/nccl/probe_report.h"

#include <catch2/catch.hpp>

namespace gpusched::agent {
namespace {

// What gpusched-nccl-probe --json prints, shortened to two sizes.
constexpr char kReport[] = R"({"nccl_version": "2.28.9", "gpus": [0, 1], "nranks": 2, "first_rank": 0, "type": "float",
 "op": "sum", "warmup_iters": 5, "iters": 20,
 "rows": [
  {"bytes": 8, "count": 2, "time_us": 10.512, "algbw_gbps": 0.000761, "busbw_gbps": 0.000761},
  {"bytes": 134217728, "count": 33554432, "time_us": 1021.733, "algbw_gbps": 131.362, "busbw_gbps": 131.362}],
 "peak_busbw_gbps": 131.362}
)";

std::string ErrorOf(const std::string& json) {
  auto report = ParseProbeReport(json);
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(report.status().message());
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

TEST_CASE("ParseProbeReport reads the probe's JSON") {
  auto report = ParseProbeReport(kReport);
  REQUIRE(report.ok());
  CHECK(report->nccl_version == "2.28.9");
  CHECK(report->gpus == std::vector<int>{0, 1});
  CHECK(report->nranks == 2);
  CHECK(report->peak_busbw_gbps == Approx(131.362));
  REQUIRE(report->rows.size() == 2);
  CHECK(report->rows[1].bytes == 134217728);
  CHECK(report->rows[1].count == 33554432);
  CHECK(report->rows[1].time_us == Approx(1021.733));
  CHECK(report->rows[1].algbw_gbps == Approx(131.362));
  CHECK(report->rows[0].busbw_gbps == Approx(0.000761));
}

TEST_CASE("ParseProbeReport names what is wrong") {
  CHECK(ErrorOf("") == "NCCL probe report: empty output");
  CHECK(ErrorOf("Segmentation fault").find("not valid JSON") != std::string::npos);
  CHECK(ErrorOf(std::string(kReport).substr(0, 200)).find("not valid JSON") != std::string::npos);
  CHECK(ErrorOf(Replace(kReport, R"("nranks": 2, )", "")) == "NCCL probe report: nranks is missing");
  CHECK(ErrorOf(Replace(kReport, R"("2.28.9")", "2.28")) == "NCCL probe report: nccl_version is not a string");
  CHECK(ErrorOf(Replace(kReport, "[0, 1]", R"([0, "1"])")) == "NCCL probe report: gpus[1] is not a whole number >= 0");
  CHECK(ErrorOf(Replace(kReport, R"(, "busbw_gbps": 131.362})", "}")) ==
        "NCCL probe report: rows[1].busbw_gbps is missing");
  CHECK(ErrorOf(Replace(kReport, R"("bytes": 8,)", R"("bytes": 8.5,)")) ==
        "NCCL probe report: rows[0].bytes is not a whole number >= 0");
  CHECK(ErrorOf(R"({"nccl_version": "2.28.9", "gpus": [0], "nranks": 1, "rows": [], "peak_busbw_gbps": 0})") ==
        "NCCL probe report: rows is empty: the probe measured nothing");
  CHECK(ErrorOf(R"({"nccl_version": "2.28.9", "gpus": [0], "nranks": 1, "rows": [3], "peak_busbw_gbps": 0})") ==
        "NCCL probe report: rows[0] is not an object");
}

}  // namespace
}  // namespace gpusched::agent
