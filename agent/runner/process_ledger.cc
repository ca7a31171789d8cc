#include "agent/runner/process_ledger.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "agent/runner/small_file.h"

namespace gpusched::agent {
namespace {

// The journal is rewritten once it has doubled, and never below this size:
// a few thousand jobs' lines.
constexpr int64_t kMinRewriteBytes = 1 << 20;

std::string BootId() {
  std::string id = ReadSmallFile("/proc/sys/kernel/random/boot_id").value_or("");
  return std::string(absl::StripTrailingAsciiWhitespace(id));
}

absl::Status WriteError(const char* step, const std::string& path, int error) {
  return absl::ResourceExhaustedError(absl::StrCat(step, " ", path, ": ", std::strerror(error)));
}

// All of `text` to `fd`, or the errno of the write that failed.
int WriteAll(int fd, absl::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<size_t>(n);
  }
  return 0;
}

absl::Time ModifiedAt(const std::filesystem::path& path) {
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(path, ec);
  if (ec) return absl::InfinitePast();
  const auto system = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      written - std::filesystem::file_time_type::clock::now() + std::chrono::system_clock::now());
  return absl::FromChrono(system);
}

std::optional<v1::JobUpdate> DecodeReport(absl::string_view encoded) {
  std::string decoded;
  v1::JobUpdate report;
  if (!absl::Base64Unescape(encoded, &decoded) || !report.ParseFromString(decoded)) return std::nullopt;
  return report;
}

}  // namespace

ProcessLedger::ProcessLedger(std::string dir, absl::Duration max_report_age)
    : dir_(std::move(dir)), max_report_age_(max_report_age), boot_id_(BootId()) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
}

ProcessLedger::~ProcessLedger() {
  MutexLock lock(&mu_);
  if (fd_ >= 0) close(fd_);
}

std::string ProcessLedger::LegacyPathOf(uint64_t job_id) const { return absl::StrCat(dir_, "/job-", job_id); }

std::string ProcessLedger::ExitsPathOf(uint64_t job_id) const { return absl::StrCat(LegacyPathOf(job_id), ".exits"); }

std::string ProcessLedger::JournalPath() const { return absl::StrCat(dir_, "/journal"); }

absl::Status ProcessLedger::OpenLocked() {
  const std::string path = JournalPath();
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) return WriteError("cannot open", path, errno);
  struct stat st {};
  size_ = fstat(fd_, &st) == 0 ? st.st_size : 0;
  // A line torn by a crash would swallow the next one appended: it goes.
  char last = '\n';
  if (size_ > 0 && pread(fd_, &last, 1, size_ - 1) == 1 && last != '\n') {
    const std::string text = ReadSmallFile(path).value_or("");
    const size_t end = text.rfind('\n');
    size_ = end == std::string::npos ? 0 : static_cast<int64_t>(end + 1);
    if (ftruncate(fd_, size_) != 0) {
      const int error = errno;
      close(fd_);
      fd_ = -1;
      return WriteError("cannot cut the torn last line of", path, error);
    }
  }
  rewrite_at_ = std::max<int64_t>(kMinRewriteBytes, 2 * size_);
  return absl::OkStatus();
}

absl::Status ProcessLedger::Append(const std::string& line) {
  MutexLock lock(&mu_);
  if (fd_ < 0) {
    if (absl::Status opened = OpenLocked(); !opened.ok()) return opened;
  }
  if (const int error = WriteAll(fd_, line); error != 0) {
    // Cut off what part of the line went in: the next line must start a line.
    if (ftruncate(fd_, size_) != 0) {
      close(fd_);
      fd_ = -1;
    }
    return WriteError("cannot write", JournalPath(), error);
  }
  size_ += static_cast<int64_t>(line.size());
  if (size_ >= rewrite_at_) {
    // A journal that cannot be rewritten (a full disk) still takes lines.
    const auto live = LiveLocked(absl::Now());
    if (!live || !RewriteLocked(*live).ok()) rewrite_at_ = 2 * size_;
  }
  return absl::OkStatus();
}

ProcessLedger::Entry ProcessLedger::Entry::Record(int attempt, std::string boot_id) {
  Entry entry;
  entry.attempt = attempt;
  entry.boot_id = std::move(boot_id);
  return entry;
}

ProcessLedger::Entry ProcessLedger::Entry::Report(absl::Time reported, std::string report) {
  Entry entry;
  entry.reported = reported;
  entry.report = std::move(report);
  return entry;
}

std::string ProcessLedger::LineOf(uint64_t job_id, const Entry& entry) {
  if (entry.is_report()) {
    return absl::StrCat("report ", job_id, " ", absl::ToUnixSeconds(entry.reported), " ", entry.report, "\n");
  }
  return absl::StrCat("start ", job_id, " ", entry.attempt, " ", entry.boot_id, "\n");
}

std::optional<std::vector<std::pair<uint64_t, ProcessLedger::Entry>>> ProcessLedger::LiveLocked(absl::Time now) {
  std::map<uint64_t, Entry> live;
  const std::optional<std::string> read = ReadSmallFile(JournalPath());
  if (!read && access(JournalPath().c_str(), F_OK) == 0) return std::nullopt;
  const std::string text = read.value_or("");
  // A last line without its newline was torn by a crash: it says nothing.
  const absl::string_view whole = absl::string_view(text).substr(0, text.rfind('\n') + 1);
  for (absl::string_view line : absl::StrSplit(whole, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    uint64_t job_id = 0;
    if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &job_id)) continue;
    if (fields[0] == "forget" && fields.size() == 2) {
      live.erase(job_id);
    } else if (fields[0] == "start" && fields.size() == 4) {
      int attempt = 0;
      if (!absl::SimpleAtoi(fields[2], &attempt)) attempt = 0;
      live[job_id] = Entry::Record(attempt, std::string(fields[3]));
    } else if (int64_t written = 0;
               fields[0] == "report" && fields.size() == 4 && absl::SimpleAtoi(fields[2], &written)) {
      live[job_id] = Entry::Report(absl::FromUnixSeconds(written), std::string(fields[3]));
    }
  }
  std::vector<std::pair<uint64_t, Entry>> kept;
  for (auto& [job_id, entry] : live) {
    const bool aged_out = entry.is_report() && now - entry.reported > max_report_age_;
    if (!aged_out) kept.emplace_back(job_id, std::move(entry));
  }
  return kept;
}

absl::Status ProcessLedger::RewriteLocked(const std::vector<std::pair<uint64_t, Entry>>& live) {
  const std::string path = JournalPath();
  const std::string temp = path + ".tmp";
  std::string text;
  for (const auto& [job_id, entry] : live) text += LineOf(job_id, entry);
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return WriteError("cannot create", temp, errno);
  int error = WriteAll(fd, text);
  // On disk before it replaces the journal, and the rename with it: after a
  // power loss the journal is the old one or the new one, never empty.
  if (error == 0 && fsync(fd) != 0) error = errno;
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    unlink(temp.c_str());
    return WriteError("cannot rewrite", path, error);
  }
  if (const int dir = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    fsync(dir);
    close(dir);
  }
  if (fd_ >= 0) close(fd_);
  return OpenLocked();
}

absl::Status ProcessLedger::Record(uint64_t job_id, int attempt) {
  return Append(LineOf(job_id, Entry::Record(attempt, boot_id_)));
}

absl::Status ProcessLedger::Finished(const v1::JobUpdate& report, absl::Time now) {
  std::string encoded;
  absl::Base64Escape(report.SerializeAsString(), &encoded);
  absl::Status written = Append(LineOf(report.job_id(), Entry::Report(now, std::move(encoded))));
  // Kept when the report could not be: the next agent can still read it.
  if (written.ok()) {
    unlink(ExitsPathOf(report.job_id()).c_str());
    unlink(LegacyPathOf(report.job_id()).c_str());
  }
  return written;
}

void ProcessLedger::Forget(uint64_t job_id) {
  // Not written (a full disk): the next agent finds the job again, and its
  // shim still gone.
  Append(absl::StrCat("forget ", job_id, "\n")).IgnoreError();
  unlink(LegacyPathOf(job_id).c_str());
  unlink(ExitsPathOf(job_id).c_str());
}

ProcessLedger::Loaded ProcessLedger::Load() {
  MutexLock lock(&mu_);
  Loaded loaded;
  // Reports are aged by the kernel's clock, as Finished is told.
  const absl::Time now = absl::Now();
  const auto readable = LiveLocked(now);
  const std::vector<std::pair<uint64_t, Entry>> live = readable.value_or(std::vector<std::pair<uint64_t, Entry>>{});
  std::set<uint64_t> with_record;
  for (const auto& [job_id, entry] : live) {
    with_record.insert(job_id);
    if (entry.is_report()) {
      if (std::optional<v1::JobUpdate> report = DecodeReport(entry.report))
        loaded.reports.push_back(*std::move(report));
      continue;
    }
    Recorded recorded;
    recorded.job_id = job_id;
    recorded.this_boot = entry.boot_id == boot_id_;
    recorded.attempt = entry.attempt;
    recorded.shim = ParseShimExits(ReadSmallFile(ExitsPathOf(job_id)).value_or(""));
    loaded.recorded.push_back(std::move(recorded));
  }
  // Without its torn line and its aged reports: the journal says the same.
  if ((!readable || !RewriteLocked(live).ok()) && fd_ < 0) OpenLocked().IgnoreError();

  // A file per job, from agents before the journal: read as they wrote it,
  // and removed once the job is forgotten or its report has aged out.
  std::error_code ec;
  std::vector<std::pair<uint64_t, std::filesystem::path>> exits_files;
  for (const auto& file : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = file.path().filename().string();
    uint64_t job_id = 0;
    absl::string_view rest = name;
    if (!absl::ConsumePrefix(&rest, "job-")) continue;
    if (absl::ConsumeSuffix(&rest, ".exits") && absl::SimpleAtoi(rest, &job_id)) {
      exits_files.emplace_back(job_id, file.path());
      continue;
    }
    if (!absl::SimpleAtoi(rest, &job_id) || with_record.contains(job_id)) {
      std::filesystem::remove(file.path(), ec);  // a .tmp never finished, or what the journal says anew
      continue;
    }
    with_record.insert(job_id);
    std::istringstream in(ReadSmallFile(file.path()).value_or(""));
    std::string key, value;
    if (in >> key && key == "report") {
      std::optional<v1::JobUpdate> report = in >> value ? DecodeReport(value) : std::nullopt;
      if (report.has_value() && now - ModifiedAt(file.path()) <= max_report_age_) {
        loaded.reports.push_back(*std::move(report));
        continue;  // kept until it ages out
      }
      std::filesystem::remove(file.path(), ec);
      continue;
    }
    Recorded recorded;
    recorded.job_id = job_id;
    std::vector<ShimExits::Group> legacy_groups;
    do {
      if (key == "boot" && in >> value) recorded.this_boot = value == boot_id_;
      if (key == "attempt") in >> recorded.attempt;
      if (key == "group") {
        // An agent from before the shims recorded its ranks' groups here.
        ShimExits::Group g;
        in >> g.pgid >> g.start_time;
        if (g.pgid > 1) legacy_groups.push_back(g);
      }
    } while (in >> key);
    recorded.shim = ParseShimExits(ReadSmallFile(ExitsPathOf(job_id)).value_or(""));
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
