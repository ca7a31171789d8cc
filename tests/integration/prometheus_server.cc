#include "tests/integration/prometheus_server.h"

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/http_client.h"

namespace gpusched::testing {
namespace {

std::string Quoted(const std::string& s) { return absl::StrCat("\"", s, "\""); }

// Scrapes and rule evaluation every second, so that a test sees a change
// within a few seconds; the timeout may not exceed the interval.
std::string Config(const std::vector<ScrapeJob>& jobs, const std::vector<std::string>& rule_files) {
  std::string yaml = "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n";
  if (!rule_files.empty()) {
    yaml += "rule_files:\n";
    for (const std::string& file : rule_files) absl::StrAppend(&yaml, "  - ", Quoted(file), "\n");
  }
  yaml += "scrape_configs:\n";
  for (const ScrapeJob& job : jobs) {
    std::vector<std::string> targets;
    for (const std::string& t : job.targets) targets.push_back(Quoted(t));
    absl::StrAppend(&yaml, "  - job_name: ", Quoted(job.name), "\n    static_configs:\n      - targets: [",
                    absl::StrJoin(targets, ", "), "]\n");
  }
  return yaml;
}

void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

std::string Describe(const std::vector<PrometheusServer::Sample>& samples) {
  if (samples.empty()) return "no samples";
  std::string out;
  for (const auto& s : samples) {
    std::vector<std::string> labels;
    for (const auto& [k, v] : s.labels) labels.push_back(absl::StrCat(k, "=\"", v, "\""));
    absl::StrAppend(&out, "{", absl::StrJoin(labels, ","), "} ", s.value, "\n");
  }
  return out;
}

}  // namespace

std::string PrometheusServer::Binary() {
  const std::string path = GPUSCHED_PROMETHEUS;
  return !path.empty() && access(path.c_str(), X_OK) == 0 ? path : "";
}

PrometheusServer::PrometheusServer(const std::string& dir, const std::vector<ScrapeJob>& jobs,
                                   const std::vector<std::string>& rule_files) {
  std::filesystem::create_directories(dir);
  const std::string config = dir + "/prometheus.yml";
  std::ofstream(config) << Config(jobs, rule_files);
  port_ = FreeLoopbackPort();
  process_ = std::make_unique<Subprocess>(
      std::vector<std::string>{Binary(), "--config.file=" + config, "--storage.tsdb.path=" + dir + "/data",
                               absl::StrCat("--web.listen-address=127.0.0.1:", port_), "--log.level=warn"},
      dir + "/prometheus.log");
  for (int i = 0; i < 600; ++i) {
    INFO("prometheus exited early; its log:\n" << process_->Log());
    REQUIRE(process_->running());
    auto ready = HttpGet("127.0.0.1", port_, "/-/ready", 1000);
    if (ready.ok() && ready->status == 200) return;
    Sleep(50);
  }
  FAIL("prometheus did not become ready in 30 s; its log:\n" << process_->Log());
}

PrometheusServer::~PrometheusServer() {
  process_->Signal(SIGTERM);
  process_->Wait();
}

std::string PrometheusServer::Get(const std::string& target) const {
  auto response = HttpGet("127.0.0.1", port_, target);
  INFO("GET " << target << ": " << (response.ok() ? response->body : response.status().ToString()));
  REQUIRE(response.ok());
  REQUIRE(response->status == 200);
  return response->body;
}

std::vector<PrometheusServer::Sample> PrometheusServer::Query(const std::string& promql) const {
  const std::string body = Get("/api/v1/query?query=" + UrlEncode(promql));
  google::protobuf::Struct answer;
  INFO("query " << promql << " answered " << body);
  REQUIRE(google::protobuf::util::JsonStringToMessage(body, &answer).ok());
  REQUIRE(answer.fields().at("status").string_value() == "success");
  const auto& data = answer.fields().at("data").struct_value();
  REQUIRE(data.fields().at("resultType").string_value() == "vector");
  std::vector<Sample> samples;
  for (const auto& entry : data.fields().at("result").list_value().values()) {
    const auto& fields = entry.struct_value().fields();
    Sample sample;
    for (const auto& [name, value] : fields.at("metric").struct_value().fields()) {
      sample.labels[name] = value.string_value();
    }
    // "value": [<unix time>, "<value as text>"]
    const auto& pair = fields.at("value").list_value();
    REQUIRE(pair.values_size() == 2);
    REQUIRE(absl::SimpleAtod(pair.values(1).string_value(), &sample.value));
    samples.push_back(std::move(sample));
  }
  return samples;
}

double PrometheusServer::WaitFor(const std::string& promql, const std::function<bool(double)>& ok,
                                 double seconds) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(seconds * 1000));
  std::vector<Sample> last;
  while (std::chrono::steady_clock::now() < deadline) {
    last = Query(promql);
    if (last.size() == 1 && ok(last[0].value)) return last[0].value;
    Sleep(200);
  }
  FAIL("prometheus: " << promql << " never gave the expected value in " << seconds << " s; last answer:\n"
                      << Describe(last));
  return 0;
}

}  // namespace gpusched::testing
