#pragma once

// A real Prometheus server (Debian's `prometheus` binary) on loopback for
// integration tests: scrapes the targets it is given every second and is
// asked through its HTTP query API, as an operator's dashboards ask it.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace gpusched::testing {

struct ScrapeJob {
  std::string name;                  // job_name, the `job` label
  std::vector<std::string> targets;  // host:port
};

class PrometheusServer {
 public:
  // Empty when the binary is not installed: the caller skips its test.
  static std::string Binary();

  // Starts Prometheus in `dir` with a generated config (scrape and
  // evaluation interval 1 s, `rule_files` loaded as given) and waits until it
  // is ready; REQUIREs that it is.
  PrometheusServer(const std::string& dir, const std::vector<ScrapeJob>& jobs,
                   const std::vector<std::string>& rule_files = {});
  ~PrometheusServer();

  struct Sample {
    std::map<std::string, std::string> labels;
    double value = 0;
  };
  // An instant query at the current time; REQUIREs a successful answer.
  std::vector<Sample> Query(const std::string& promql) const;
  // Polls `promql` until it gives exactly one sample that `ok` accepts, and
  // returns its value; FAILs after `seconds`, showing the last answer.
  double WaitFor(const std::string& promql, const std::function<bool(double)>& ok, double seconds = 30) const;
  double WaitForValue(const std::string& promql, double expected, double seconds = 30) const {
    return WaitFor(
        promql, [expected](double v) { return v == expected; }, seconds);
  }
  // GET on the HTTP API (e.g. "/api/v1/rules"); REQUIREs status 200.
  std::string Get(const std::string& target) const;

  int port() const { return port_; }
  std::string Log() const { return process_->Log(); }

 private:
  int port_ = 0;
  std::unique_ptr<Subprocess> process_;
};

}  // namespace gpusched::testing
