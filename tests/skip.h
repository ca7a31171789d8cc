#pragma once

// A test case that cannot run on this machine (not root, no Prometheus, no
// trace file) says why and ends. The test runner then exits with
// kSkipExitCode when nothing failed, which ctest reports as a skip
// (SKIP_RETURN_CODE; each case is its own ctest test, tests/CMakeLists.txt).

#include <catch2/catch.hpp>

namespace gpusched::testing {

inline constexpr int kSkipExitCode = 77;

// Counts a skipped case (GPUSCHED_SKIP calls it).
void MarkSkipped();
int SkippedCases();

}  // namespace gpusched::testing

// Ends the current test case as skipped, saying why; in a void function only.
#define GPUSCHED_SKIP(why)              \
  do {                                  \
    WARN("SKIPPED: " << why);           \
    ::gpusched::testing::MarkSkipped(); \
    return;                             \
  } while (false)
