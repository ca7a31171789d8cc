#pragma once

// A process run short of file descriptors, for the tests of what a server
// does when accept(2) fails for want of them.

#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

namespace gpusched::testing {

// A sanitizer build cannot be run short of descriptors: UBSan's vptr check
// opens a pipe to probe memory, and without one it reports an object of the
// wrong type where there is none and stops the process. (The daemon under
// test is built with the tests' flags.)
inline constexpr bool kSanitizedBuild =
#if defined(__SANITIZE_ADDRESS__)
    true;
#else
    false;
#endif

// The user and system CPU `pid` has used, in seconds.
inline double CpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Fields after the command name, which may hold spaces, in its parentheses.
  std::istringstream after(text.substr(text.rfind(')') + 2));
  std::string field;
  long ticks[2] = {0, 0};
  for (int i = 3; i <= 15 && after >> field; ++i) {
    if (i == 14) ticks[0] = std::stol(field);
    if (i == 15) ticks[1] = std::stol(field);
  }
  return static_cast<double>(ticks[0] + ticks[1]) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// While in scope, `pid` may open at most `spare` descriptors more. A new
// descriptor takes the lowest free number, and the limit bounds numbers, not
// their count: it is set just above the lowest free one.
class ScarceDescriptors {
 public:
  ScarceDescriptors(pid_t pid, int spare) : pid_(pid) {
    REQUIRE(prlimit(pid_, RLIMIT_NOFILE, nullptr, &before_) == 0);
    std::set<long> open;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/fd")) {
      open.insert(std::stol(entry.path().filename().string()));
    }
    long lowest_free = 0;
    while (open.count(lowest_free) > 0) ++lowest_free;
    rlimit scarce = before_;
    scarce.rlim_cur = static_cast<rlim_t>(lowest_free + spare);
    REQUIRE(prlimit(pid_, RLIMIT_NOFILE, &scarce, nullptr) == 0);
  }
  ~ScarceDescriptors() { prlimit(pid_, RLIMIT_NOFILE, &before_, nullptr); }
  ScarceDescriptors(const ScarceDescriptors&) = delete;
  ScarceDescriptors& operator=(const ScarceDescriptors&) = delete;

 private:
  const pid_t pid_;
  rlimit before_{};
};

}  // namespace gpusched::testing
