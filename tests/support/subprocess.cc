#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpusched::testing {
namespace {

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string TempPath(const char* tag) {
  char path[] = "/tmp/gpusched-test-XXXXXX";
  int fd = mkstemp(path);  // reserves a unique name
  close(fd);
  unlink(path);
  return std::string(path) + tag;
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  auto close_paren = stat.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < stat.size() && stat[close_paren + 2] == 'Z';
}

pid_t Spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const std::string& stdout_path, const std::string& stderr_path) {
  std::vector<std::string> args = argv;
  std::vector<char*> cargs = CStrings(args);
  pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    int err = stderr_path == stdout_path ? out : open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    int in = open("/dev/null", O_RDONLY);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execv(cargs[0], cargs.data());
    _exit(127);
  }
  return pid;
}

int WaitForExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return DecodeStatus(status);
}

CommandResult RunCommand(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  const std::string out_path = TempPath(".out"), err_path = TempPath(".err");
  CommandResult result;
  result.exit_code = WaitForExit(Spawn(argv, env, out_path, err_path));
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return result;
}

Subprocess::Subprocess(std::vector<std::string> argv, std::string log_path)
    : pid_(Spawn(argv, {}, log_path, log_path)), log_path_(std::move(log_path)) {}

Subprocess::~Subprocess() {
  if (pid_ > 0 && status_ == -1) {
    kill(pid_, SIGKILL);
    Wait();
  }
}

void Subprocess::Signal(int sig) {
  if (status_ == -1) kill(pid_, sig);
}

int Subprocess::Wait() {
  if (status_ == -1) status_ = WaitForExit(pid_);
  return status_;
}

bool Subprocess::running() {
  if (status_ != -1) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    status_ = DecodeStatus(status);
    return false;
  }
  return true;
}

std::string Subprocess::Log() const { return ReadFile(log_path_); }

}  // namespace gpusched::testing
