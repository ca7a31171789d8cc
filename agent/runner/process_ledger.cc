#include "agent/runner/process_ledger.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "agent/runner/process_start_time.h"

namespace gpusched::agent {
namespace {

std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

}  // namespace

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

absl::Status ProcessLedger::Record(uint64_t job_id, int attempt) {
  return WriteAtomically(PathOf(job_id), absl::StrCat("boot ", BootId(), "\nattempt ", attempt, "\n"));
}

std::string ProcessLedger::ExitsPathOf(uint64_t job_id) const { return absl::StrCat(PathOf(job_id), ".exits"); }

absl::Status ProcessLedger::Finished(const v1::JobUpdate& report, absl::Time now) {
  PruneReports(now);
  std::string encoded;
  absl::Base64Escape(report.SerializeAsString(), &encoded);
  absl::Status written = WriteAtomically(PathOf(report.job_id()), absl::StrCat("report ", encoded, "\n"));
  // Kept when the report could not be: the next agent can still read it.
  if (written.ok()) unlink(ExitsPathOf(report.job_id()).c_str());
  return written;
}

void ProcessLedger::Forget(uint64_t job_id) {
  unlink(PathOf(job_id).c_str());
  unlink(ExitsPathOf(job_id).c_str());
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
  // Report files are aged by their times on disk: the kernel's clock.
  const absl::Time now = absl::Now();
  std::error_code ec;
  std::set<uint64_t> with_record;
  std::vector<std::pair<uint64_t, std::filesystem::path>> exits_files;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    uint64_t job_id = 0;
    absl::string_view rest = name;
    if (absl::ConsumeSuffix(&rest, ".exits") && absl::ConsumePrefix(&rest, "job-") && absl::SimpleAtoi(rest, &job_id)) {
      exits_files.emplace_back(job_id, entry.path());
      continue;
    }
    if (!absl::SimpleAtoi(absl::StripPrefix(name, "job-"), &job_id)) {
      std::filesystem::remove(entry.path(), ec);  // a .tmp of a record never finished
      continue;
    }
    with_record.insert(job_id);
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
    Recorded recorded;
    recorded.job_id = job_id;
    std::vector<ShimExits::Group> legacy_groups;
    do {
      if (key == "boot" && in >> value) recorded.this_boot = value == boot;
      if (key == "attempt") in >> recorded.attempt;
      if (key == "group") {
        // An agent from before the shims recorded its ranks' groups here.
        ShimExits::Group g;
        in >> g.pgid >> g.start_time;
        if (g.pgid > 1) legacy_groups.push_back(g);
      }
    } while (in >> key);
    std::ifstream exits(ExitsPathOf(job_id));
    recorded.shim =
        ParseShimExits(std::string(std::istreambuf_iterator<char>(exits), std::istreambuf_iterator<char>()));
    // With no shim to adopt, they are killed like those of a dead shim.
    if (recorded.shim.shim_pid == 0 && recorded.shim.groups.empty()) recorded.shim.groups = std::move(legacy_groups);
    loaded.recorded.push_back(std::move(recorded));
  }
  // No record, no job: what is left of a finished one.
  for (const auto& [job_id, path] : exits_files) {
    if (!with_record.contains(job_id)) std::filesystem::remove(path, ec);
  }
  return loaded;
}

}  // namespace gpusched::agent
