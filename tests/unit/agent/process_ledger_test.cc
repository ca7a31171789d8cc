#include "agent/runner/process_ledger.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/runner/process_start_time.h"
#include "tests/unit/agent/test_util.h"

using gpusched::agent::ProcessLedger;
using gpusched::agent::ProcessStartTime;
using gpusched::agent::testing::ReadFile;
using gpusched::agent::testing::TempDir;
using gpusched::agent::testing::WriteFile;
using gpusched::v1::JobUpdate;

namespace {

JobUpdate Exited(uint64_t job_id, int exit_code) {
  JobUpdate report;
  report.set_job_id(job_id);
  report.set_kind(JobUpdate::KIND_EXITED);
  report.set_exit_code(exit_code);
  report.set_message("a message with spaces and\nnewlines");
  return report;
}

std::string BootId() {
  std::string boot = ReadFile("/proc/sys/kernel/random/boot_id");
  return boot.substr(0, boot.find('\n'));
}

}  // namespace

TEST_CASE("the ledger tells the next agent which jobs started and how the ended ones ended") {
  TempDir dir;
  {
    ProcessLedger ledger(dir.path());
    REQUIRE(ledger.Record(1, 0).ok());
    REQUIRE(ledger.Record(2, 3).ok());
    REQUIRE(ledger.Record(3, 0).ok());
    WriteFile(ledger.ExitsPathOf(2), "shim 1 2\n");
    REQUIRE(ledger.Finished(Exited(2, 7), absl::Now()).ok());
    ledger.Forget(3);
  }
  ProcessLedger next(dir.path());
  CHECK_FALSE(std::filesystem::exists(next.ExitsPathOf(2)));  // gone with its report
  const ProcessLedger::Loaded loaded = next.Load();
  REQUIRE(loaded.recorded.size() == 1);
  CHECK(loaded.recorded[0].job_id == 1);
  CHECK(loaded.recorded[0].attempt == 0);
  CHECK(loaded.recorded[0].this_boot);
  REQUIRE(loaded.reports.size() == 1);
  CHECK(loaded.reports[0].job_id() == 2);
  CHECK(loaded.reports[0].exit_code() == 7);
  CHECK(loaded.reports[0].message() == "a message with spaces and\nnewlines");

  // Loaded again, it says the same: Load rewrites the journal, it does not forget.
  ProcessLedger third(dir.path());
  const ProcessLedger::Loaded again = third.Load();
  CHECK(again.recorded.size() == 1);
  CHECK(again.reports.size() == 1);
}

TEST_CASE("a record from another boot says nothing runs; the record of a restarted job says its last attempt") {
  TempDir dir;
  WriteFile(dir / "journal", "start 4 0 another-boot\nstart 5 0 " + BootId() + "\nstart 5 2 " + BootId() + "\n");
  ProcessLedger ledger(dir.path());
  const ProcessLedger::Loaded loaded = ledger.Load();
  REQUIRE(loaded.recorded.size() == 2);
  CHECK(loaded.recorded[0].job_id == 4);
  CHECK_FALSE(loaded.recorded[0].this_boot);
  CHECK(loaded.recorded[1].job_id == 5);
  CHECK(loaded.recorded[1].attempt == 2);
  CHECK(loaded.recorded[1].this_boot);
}

TEST_CASE("a report older than its age limit is not loaded, and leaves the journal") {
  TempDir dir;
  {
    ProcessLedger ledger(dir.path(), absl::Hours(1));
    REQUIRE(ledger.Finished(Exited(8, 0), absl::Now() - absl::Minutes(61)).ok());
    REQUIRE(ledger.Finished(Exited(9, 0), absl::Now() - absl::Minutes(59)).ok());
  }
  ProcessLedger ledger(dir.path(), absl::Hours(1));
  const ProcessLedger::Loaded loaded = ledger.Load();
  REQUIRE(loaded.reports.size() == 1);
  CHECK(loaded.reports[0].job_id() == 9);
  CHECK(ReadFile(ledger.JournalPath()).find("report 8 ") == std::string::npos);
  CHECK(ReadFile(ledger.JournalPath()).find("report 9 ") != std::string::npos);
}

TEST_CASE("a line torn by a crash is dropped, and the next line appended is read whole") {
  TempDir dir;
  // The machine went down in the middle of a write.
  WriteFile(dir / "journal", "start 11 0 " + BootId() + "\nreport 12 17000");
  {
    ProcessLedger ledger(dir.path());
    // Appended before any Load: it must not be glued to the torn line.
    REQUIRE(ledger.Record(13, 1).ok());
  }
  ProcessLedger ledger(dir.path());
  const ProcessLedger::Loaded loaded = ledger.Load();
  CHECK(loaded.reports.empty());
  REQUIRE(loaded.recorded.size() == 2);
  CHECK(loaded.recorded[0].job_id == 11);
  CHECK(loaded.recorded[1].job_id == 13);
  CHECK(loaded.recorded[1].attempt == 1);
}

TEST_CASE("lines the ledger cannot read are skipped, the rest still counts") {
  TempDir dir;
  WriteFile(dir / "journal",
            "garbage\nstart x 0 b\nreport 14 notatime AAAA\nreport 15 1 %%%\nstart 16 0 " + BootId() + "\nforget\n");
  ProcessLedger ledger(dir.path());
  const ProcessLedger::Loaded loaded = ledger.Load();
  CHECK(loaded.reports.empty());  // job 15's report does not decode
  REQUIRE(loaded.recorded.size() == 1);
  CHECK(loaded.recorded[0].job_id == 16);
}

TEST_CASE("the journal is rewritten as it grows: a busy node's ledger stays the size of what it still says") {
  TempDir dir;
  ProcessLedger ledger(dir.path(), absl::Minutes(10));
  const absl::Time old = absl::Now() - absl::Hours(1);
  // 40,000 jobs whose reports aged out long ago, 4 lines each way.
  for (uint64_t job = 1; job <= 40'000; ++job) {
    REQUIRE(ledger.Record(job, 0).ok());
    REQUIRE(ledger.Finished(Exited(job, 0), old).ok());
  }
  REQUIRE(ledger.Record(40'001, 0).ok());
  const auto size = std::filesystem::file_size(ledger.JournalPath());
  CHECK(size < 2u << 20);
  ProcessLedger next(dir.path(), absl::Minutes(10));
  const ProcessLedger::Loaded loaded = next.Load();
  CHECK(loaded.reports.empty());
  REQUIRE(loaded.recorded.size() == 1);
  CHECK(loaded.recorded[0].job_id == 40'001);
}

TEST_CASE("an older agent's per-job files are read as it wrote them, and go once the job is done with") {
  TempDir dir;
  const pid_t self = getpid();
  WriteFile(dir / "job-21",
            absl::StrCat("boot ", BootId(), "\nattempt 2\ngroup ", self, " ", ProcessStartTime(self), "\n"));
  WriteFile(dir / "job-22", "boot " + BootId() + "\nattempt 0\n");
  WriteFile(dir / "job-22.exits", "shim 1 2\n");
  WriteFile(dir / "job-23.tmp", "boot");          // a write that never finished
  WriteFile(dir / "job-24.exits", "shim 1 2\n");  // no record: what is left of a finished job
  ProcessLedger ledger(dir.path());
  const ProcessLedger::Loaded loaded = ledger.Load();
  REQUIRE(loaded.recorded.size() == 2);
  const ProcessLedger::Recorded& with_groups =
      loaded.recorded[0].job_id == 21 ? loaded.recorded[0] : loaded.recorded[1];
  CHECK(with_groups.attempt == 2);
  CHECK(with_groups.this_boot);
  REQUIRE(with_groups.shim.groups.size() == 1);
  CHECK(with_groups.shim.groups[0].pgid == self);
  CHECK_FALSE(std::filesystem::exists(dir / "job-23.tmp"));
  CHECK_FALSE(std::filesystem::exists(dir / "job-24.exits"));

  ledger.Forget(21);
  REQUIRE(ledger.Finished(Exited(22, 1), absl::Now()).ok());
  CHECK_FALSE(std::filesystem::exists(dir / "job-21"));
  CHECK_FALSE(std::filesystem::exists(dir / "job-22"));
  CHECK_FALSE(std::filesystem::exists(dir / "job-22.exits"));
  ProcessLedger next(dir.path());
  const ProcessLedger::Loaded after = next.Load();
  CHECK(after.recorded.empty());
  REQUIRE(after.reports.size() == 1);
  CHECK(after.reports[0].job_id() == 22);
}

TEST_CASE("a process's start time is read from /proc, and a pid that is gone has none") {
  const pid_t self = getpid();
  const std::string stat = ReadFile(absl::StrCat("/proc/", self, "/stat"));
  const std::string after_name = stat.substr(stat.rfind(')') + 2);
  // Field 22 of stat is the 20th after the name.
  size_t at = 0;
  for (int i = 0; i < 19; ++i) at = after_name.find(' ', at) + 1;
  const uint64_t expected = std::stoull(after_name.substr(at, after_name.find(' ', at) - at));
  CHECK(ProcessStartTime(self) == expected);
  CHECK(ProcessStartTime(self) > 0);
  CHECK(ProcessStartTime(0x7ffffff0) == 0);
}
