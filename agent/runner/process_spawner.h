#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched::agent {

// The user a child switches to before exec (only when the agent runs as root).
struct Credentials {
  std::string user;  // for messages only
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

// One job process, fully prepared: the child of fork() may only copy pointers.
struct ProcessSpec {
  int rank = 0;
  std::string executable;         // path handed to execve
  std::vector<std::string> argv;  // argv[0] is what error messages name
  std::vector<std::string> env;   // "KEY=value"
  std::string workdir;
  std::string log_path;    // stdout and stderr, appended
  std::string stdin_path;  // read as stdin; "" = /dev/null
  // stdout and stderr go here instead of log_path, opened (append) once the
  // process is the job's user, so that its rights decide; "" = log_path.
  std::string output_path;
  // stderr alone goes here, opened the same way; "" = with stdout.
  std::string error_path;
  std::optional<Credentials> credentials;
  // CPUs to bind the process to (sched_setaffinity before exec); empty: it
  // keeps the affinity of the thread that spawns it.
  std::vector<int> cpus;
  // Run by the shim, as itself, before the process starts and after it
  // ended, however it ended: what removes a container the process left
  // (WrapInContainer). Empty: nothing.
  std::vector<std::string> cleanup_argv;
  // Descriptors the process gets as stdin, stdout and stderr instead of
  // stdin_path and log_path (-1: those), each above 2; and whether its stdin
  // becomes its controlling terminal (a pseudo-terminal's slave). For an
  // interactive session, which the agent starts itself: never sent to a shim.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  bool controlling_tty = false;
};

// `fd` moved above descriptor 2 (close-on-exec), or as it is when it is
// already: an agent started with stdin, stdout or stderr closed gets those
// numbers back from open() and pipe(), and a child's dup2 onto 0-2 would
// then clobber them (or, for dup2(fd, fd), keep O_CLOEXEC). -1 stays -1.
int AboveStdio(int fd);

// Starts the process as the leader of a new session and process group, so that
// its pid is also the group to signal. Returns once the command is exec'd; a
// failure on the way (log file, CPU binding, workdir, user switch, exec) comes back as an
// error a person can act on, e.g. exec "foo": No such file or directory, and
// leaves no process behind.
absl::StatusOr<pid_t> SpawnProcess(const ProcessSpec& spec);

}  // namespace gpusched::agent
