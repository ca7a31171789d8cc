// The shipped scrape config and alert rules, checked by Prometheus' own
// promtool: syntax, and that each alert fires when it should (and only then)
// on the scenarios in data/gpusched_alerts_test.yml.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/skip.h"
#include "tests/support/subprocess.h"

namespace {

using gpusched::testing::CommandResult;
using gpusched::testing::RunCommand;

bool HavePromtool() {
  if (std::string(GPUSCHED_PROMTOOL).empty() || access(GPUSCHED_PROMTOOL, X_OK) != 0) {
    WARN("SKIPPED: promtool not found (Debian package prometheus)");
    gpusched::testing::MarkSkipped();
    return false;
  }
  return true;
}

void Promtool(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {GPUSCHED_PROMTOOL};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv);
  INFO("promtool output:\n" << r.out << r.err);
  CHECK(r.exit_code == 0);
}

const std::string kDir = GPUSCHED_PACKAGING_DIR "/prometheus";

}  // namespace

TEST_CASE("the example scrape config and the alert rules pass promtool's checks") {
  if (!HavePromtool()) return;
  Promtool({"check", "rules", kDir + "/gpusched-alerts.yml"});
  Promtool({"check", "config", kDir + "/prometheus.yml"});
}

TEST_CASE(
    "the alert rules fire on GPU down, node not responding or down, a stuck queue, no active replica, and only then") {
  if (!HavePromtool()) return;
  Promtool({"test", "rules", GPUSCHED_METRICS_TEST_DATA "/gpusched_alerts_test.yml"});
}
