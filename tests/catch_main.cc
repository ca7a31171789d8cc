// Catch2 v2's main, compiled once and shared by every test executable, with
// one addition: a run in which nothing failed but a case skipped (skip.h)
// exits with kSkipExitCode, so that ctest shows the skip.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/skip.h"

namespace gpusched::testing {
namespace {
int skipped_cases = 0;
}  // namespace

void MarkSkipped() { ++skipped_cases; }
int SkippedCases() { return skipped_cases; }

}  // namespace gpusched::testing

int main(int argc, char* argv[]) {
  const int result = Catch::Session().run(argc, argv);
  if (result == 0 && gpusched::testing::SkippedCases() > 0) return gpusched::testing::kSkipExitCode;
  return result;
}
