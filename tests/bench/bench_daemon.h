#pragma once

// The processes a benchmark measures: one real `gpuschedd serve` on loopback,
// in a fresh state directory, and timed runs of the real `gpusched` CLI.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpusched::bench {

class BenchDaemon {
 public:
  // Starts gpuschedd (no agents) and waits until it serves. `keep_dir` leaves
  // the state directory behind for inspection.
  BenchDaemon(std::string gpuschedd_bin, bool keep_dir);
  // The same, with more `serve` flags after the ones above (a bench with real
  // agents wants e.g. a shorter --kill-grace-ms).
  BenchDaemon(std::string gpuschedd_bin, bool keep_dir, const std::vector<std::string>& extra_serve_args);
  ~BenchDaemon();  // SIGTERM, wait, remove the directory
  BenchDaemon(const BenchDaemon&) = delete;
  BenchDaemon& operator=(const BenchDaemon&) = delete;

  const std::string& address() const { return address_; }
  const std::string& dir() const { return dir_; }
  std::string db_path() const { return dir_ + "/state/gpusched.db"; }
  pid_t pid() const { return pid_; }

  int64_t RssKb() const;           // VmRSS
  int64_t HighWaterRssKb() const;  // VmHWM
  int Threads() const;
  double CpuSeconds() const;                         // user + system, all threads
  int64_t FileBytes(const std::string& path) const;  // -1 when missing

 private:
  std::string Status(const std::string& key) const;

  std::string dir_;
  std::string address_;
  pid_t pid_ = -1;
  bool keep_dir_ = false;
};

struct TimedRun {
  int exit_code = -1;
  double wall_ms = 0;
  int64_t stdout_bytes = 0;
  int64_t stdout_lines = 0;
  std::string stderr_text;
};

// Runs argv to completion with GPUSCHED_ADDR set, stdout into `out_path`.
TimedRun RunTimed(const std::vector<std::string>& argv, const std::string& addr, const std::string& out_path);

// CPU seconds (user + system) of this process so far.
double SelfCpuSeconds();
// CPU seconds (user + system) of process `pid`, plus those of its children it
// has reaped when `reaped_children` (an agent's finished job processes). -1
// when the process is gone.
double ProcessCpuSeconds(pid_t pid, bool reaped_children);
// CPU seconds every CPU of the machine spent busy (not idle or iowait) since boot.
double MachineBusySeconds();
std::string LoadAverage();  // /proc/loadavg, first three fields

}  // namespace gpusched::bench
