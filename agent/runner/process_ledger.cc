#include "agent/runner/process_ledger.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/time/clock.h"
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

ProcessLedger::ProcessLedger(std::string dir, absl::Duration max_report_age)
    : dir_(std::move(dir)), max_report_age_(max_report_age) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
}

std::string ProcessLedger::PathOf(uint64_t job_id) const { return absl::StrCat(dir_, "/job-", job_id); }

namespace {

// The whole text or nothing: written under a temporary name, then renamed.
// Errors name the file and say what the kernel said (a full disk: ENOSPC).
absl::Status WriteAtomically(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  auto failed = [&temp](const char* step, int error) {
    return absl::ResourceExhaustedError(absl::StrCat(step, " ", temp, ": ", std::strerror(error)));
  };
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return failed("cannot create", errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      unlink(temp.c_str());
      return failed("cannot write", error);
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    return failed("cannot write", error);
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    return failed("cannot rename", error);
  }
  return absl::OkStatus();
}

absl::Time ModifiedAt(const std::filesystem::path& path) {
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(path, ec);
  if (ec) return absl::InfinitePast();
  const auto system = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      written - std::filesystem::file_time_type::clock::now() + std::chrono::system_clock::now());
  return absl::FromChrono(system);
}

}  // namespace

absl::Status ProcessLedger::Record(uint64_t job_id, int attempt, const std::vector<pid_t>& process_groups) {
  std::string text = absl::StrCat("boot ", BootId(), "\nattempt ", attempt, "\n");
  for (pid_t pgid : process_groups) absl::StrAppend(&text, "group ", pgid, " ", ProcessStartTime(pgid), "\n");
  return WriteAtomically(PathOf(job_id), text);
}

absl::Status ProcessLedger::Finished(const v1::JobUpdate& report, absl::Time now) {
  PruneReports(now);
  std::string encoded;
  absl::Base64Escape(report.SerializeAsString(), &encoded);
  return WriteAtomically(PathOf(report.job_id()), absl::StrCat("report ", encoded, "\n"));
}

void ProcessLedger::PruneReports(absl::Time now) {
  if (now - last_prune_ < absl::Minutes(5)) return;
  last_prune_ = now;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    std::ifstream in(entry.path());
    std::string key;
    if (in >> key && key == "report" && now - ModifiedAt(entry.path()) > max_report_age_) {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}

ProcessLedger::Loaded ProcessLedger::Load() {
  Loaded loaded;
  const std::string boot = BootId();
  const absl::Time now = absl::Now();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    uint64_t job_id = 0;
    if (!absl::SimpleAtoi(absl::StripPrefix(name, "job-"), &job_id)) {
      std::filesystem::remove(entry.path(), ec);  // a .tmp of a record never finished
      continue;
    }
    std::ifstream in(entry.path());
    std::string key, value;
    if (in >> key && key == "report") {
      std::string decoded;
      v1::JobUpdate report;
      if (in >> value && absl::Base64Unescape(value, &decoded) && report.ParseFromString(decoded) &&
          now - ModifiedAt(entry.path()) <= max_report_age_) {
        loaded.reports.push_back(std::move(report));
        continue;  // kept until it ages out
      }
      std::filesystem::remove(entry.path(), ec);
      continue;
    }
    Leftover leftover{job_id, 0, 0};
    bool same_boot = false;
    do {
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
    } while (in >> key);
    std::filesystem::remove(entry.path(), ec);
    loaded.killed.push_back(leftover);
  }
  return loaded;
}

}  // namespace gpusched::agent
