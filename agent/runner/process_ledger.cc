#include "agent/runner/process_ledger.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace gpusched::agent {
namespace {

std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

}  // namespace

uint64_t ProcessStartTime(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) {
      uint64_t start = 0;
      return absl::SimpleAtoi(field, &start) ? start : 0;
    }
  }
  return 0;
}

ProcessLedger::ProcessLedger(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
}

std::string ProcessLedger::PathOf(uint64_t job_id) const { return absl::StrCat(dir_, "/job-", job_id); }

bool ProcessLedger::Record(uint64_t job_id, int attempt, const std::vector<pid_t>& process_groups) {
  const std::string path = PathOf(job_id);
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << "boot " << BootId() << "\nattempt " << attempt << "\n";
    for (pid_t pgid : process_groups) out << "group " << pgid << " " << ProcessStartTime(pgid) << "\n";
    if (!out.flush()) return false;
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  return !ec;
}

void ProcessLedger::Forget(uint64_t job_id) {
  std::error_code ec;
  std::filesystem::remove(PathOf(job_id), ec);
}

std::vector<ProcessLedger::Leftover> ProcessLedger::KillLeftovers() {
  std::vector<Leftover> found;
  const std::string boot = BootId();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    uint64_t job_id = 0;
    if (!absl::SimpleAtoi(absl::StripPrefix(name, "job-"), &job_id)) {
      std::filesystem::remove(entry.path(), ec);  // a .tmp of a record never finished
      continue;
    }
    Leftover leftover{job_id, 0, 0};
    std::ifstream in(entry.path());
    std::string key, value;
    bool same_boot = false;
    while (in >> key) {
      if (key == "boot" && in >> value) same_boot = value == boot;
      if (key == "attempt") in >> leftover.attempt;
      if (key == "group") {
        pid_t pgid = 0;
        uint64_t start = 0;
        in >> pgid >> start;
        // After a reboot nothing recorded runs; a reused pid is not ours.
        if (same_boot && pgid > 1 && start != 0 && ProcessStartTime(pgid) == start && kill(-pgid, SIGKILL) == 0) {
          ++leftover.killed;
        }
      }
    }
    std::filesystem::remove(entry.path(), ec);
    found.push_back(leftover);
  }
  return found;
}

}  // namespace gpusched::agent
