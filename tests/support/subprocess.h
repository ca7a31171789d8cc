#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace gpusched::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Starts argv with extra environment variables, stdin from /dev/null and
// stdout/stderr appended to the given files (which may be the same).
pid_t Spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const std::string& stdout_path, const std::string& stderr_path);

// Waits for `pid`; returns the exit code (128+N for signal N).
int WaitForExit(pid_t pid);

// Runs argv to completion with extra environment variables, capturing output.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

// A long-running child (daemon, agent) whose stderr and stdout go to a file.
class Subprocess {
 public:
  Subprocess(std::vector<std::string> argv, std::string log_path);
  ~Subprocess();  // SIGKILL if still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  void Signal(int sig);
  // Waits for exit; returns the exit code (128+N for signal N).
  int Wait();
  bool running();
  pid_t pid() const { return pid_; }
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::string log_path_;
};

std::string ReadFile(const std::string& path);
// True when no process with this pid exists (or it is a zombie nobody reaps).
bool ProcessGone(pid_t pid);

}  // namespace gpusched::testing
