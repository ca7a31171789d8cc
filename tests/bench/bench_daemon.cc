#include "tests/bench/bench_daemon.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/support/subprocess.h"

namespace gpusched::bench {

using testing::ReadFile;

BenchDaemon::BenchDaemon(std::string gpuschedd_bin, bool keep_dir)
    : BenchDaemon(std::move(gpuschedd_bin), keep_dir, {}) {}

BenchDaemon::BenchDaemon(std::string gpuschedd_bin, bool keep_dir, const std::vector<std::string>& extra_serve_args)
    : keep_dir_(keep_dir) {
  char tmpl[] = "/tmp/gpusched-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  const std::string log = dir_ + "/daemon.log";
  // Port 0: the daemon picks a free port and logs the address it serves on.
  // A benchmark is one user's cluster: plain TCP, jobs as whoever runs it.
  std::vector<std::string> argv = {std::move(gpuschedd_bin), "serve",    "--init",      "--allow-unauthenticated-tcp",
                                   "--allow-root-jobs",      "--listen", "127.0.0.1:0", "--state-dir",
                                   dir_ + "/state"};
  argv.insert(argv.end(), extra_serve_args.begin(), extra_serve_args.end());
  pid_ = testing::Spawn(argv, {}, log, log);
  const std::string marker = "serving on ";
  for (int i = 0; i < 400; ++i) {
    const std::string text = ReadFile(log);
    if (auto at = text.find(marker); at != std::string::npos) {
      const auto begin = at + marker.size();
      const auto end = text.find_first_of(", \n", begin);
      if (end != std::string::npos) {
        address_ = text.substr(begin, end - begin);
        return;
      }
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("gpuschedd exited at start:\n" + text);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  throw std::runtime_error("gpuschedd did not start within 10 s:\n" + ReadFile(log));
}

BenchDaemon::~BenchDaemon() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    testing::WaitForExit(pid_);
  }
  if (!keep_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string BenchDaemon::Status(const std::string& key) const {
  std::istringstream in(ReadFile("/proc/" + std::to_string(pid_) + "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}

int64_t BenchDaemon::RssKb() const { return std::atoll(Status("VmRSS").c_str()); }
int64_t BenchDaemon::HighWaterRssKb() const { return std::atoll(Status("VmHWM").c_str()); }
int BenchDaemon::Threads() const { return std::atoi(Status("Threads").c_str()); }

double BenchDaemon::CpuSeconds() const {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid_) + "/stat");
  // Fields after the command name (which may hold spaces): state is field 3,
  // utime field 14, stime field 15.
  std::istringstream in(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int n = 3; in >> field; ++n) {
    if (n == 14 || n == 15) ticks += std::atof(field.c_str());
    if (n == 15) break;
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

int64_t BenchDaemon::FileBytes(const std::string& path) const {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

TimedRun RunTimed(const std::vector<std::string>& argv, const std::string& addr, const std::string& out_path) {
  const std::string err_path = out_path + ".err";
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  const auto start = std::chrono::steady_clock::now();
  const int exit_code = testing::WaitForExit(testing::Spawn(argv, {{"GPUSCHED_ADDR", addr}}, out_path, err_path));
  TimedRun run;
  run.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  run.exit_code = exit_code;
  const std::string out = ReadFile(out_path);
  run.stdout_bytes = static_cast<int64_t>(out.size());
  for (char c : out) run.stdout_lines += c == '\n' ? 1 : 0;
  run.stderr_text = ReadFile(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return run;
}

double SelfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double ProcessCpuSeconds(pid_t pid, bool reaped_children) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  // As in CpuSeconds: utime 14, stime 15, then cutime 16, cstime 17.
  std::istringstream in(stat.substr(paren + 2));
  std::string field;
  const int last = reaped_children ? 17 : 15;
  double ticks = 0;
  for (int n = 3; n <= last && in >> field; ++n) {
    if (n >= 14) ticks += std::atof(field.c_str());
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double MachineBusySeconds() {
  std::istringstream in(ReadFile("/proc/stat"));
  std::string cpu;
  in >> cpu;  // the "cpu" line sums every CPU: user nice system idle iowait irq softirq steal ...
  double busy = 0, value = 0;
  for (int field = 0; field < 8 && in >> value; ++field) {
    if (field != 3 && field != 4) busy += value;
  }
  return busy / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::string LoadAverage() {
  std::istringstream in(ReadFile("/proc/loadavg"));
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace gpusched::bench
