#include "agent/runner/nccl_topo_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/runner/safe_open.h"
#include "common/topology/nccl_topo_xml.h"

namespace gpusched::agent {
namespace {

constexpr char kFileName[] = "nccl-topo.xml";

// Several agents may share a process (`gpuschedd dev`); the counter keeps
// their temporary names apart even if an operator points two at one directory.
std::atomic<int> temp_counter{0};

absl::Status WriteAll(int fd, const std::string& text) {
  const int error = WriteFully(fd, text);
  return error == 0 ? absl::OkStatus() : absl::InternalError(std::strerror(error));
}

}  // namespace

absl::StatusOr<std::string> WriteNcclTopoFile(const topology::NodeTopology& topo, const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/", kFileName);
  const std::string temp = absl::StrCat(dir, "/.", kFileName, ".", getpid(), ".", temp_counter++, ".tmp");
  auto failed = [&](const std::string& what) {
    unlink(temp.c_str());
    return absl::FailedPreconditionError(absl::StrCat("NCCL topology file \"", path, "\": ", what));
  };
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return failed(absl::StrCat("creating \"", temp, "\": ", std::strerror(errno)));
  absl::Status written = WriteAll(fd, topology::WriteNcclTopoXml(topo));
  // The umask would otherwise decide whether jobs of other users can read it.
  if (written.ok() && fchmod(fd, 0644) != 0) written = absl::InternalError(std::strerror(errno));
  if (close(fd) != 0 && written.ok()) written = absl::InternalError(std::strerror(errno));
  if (!written.ok()) return failed(absl::StrCat("writing: ", written.message()));
  if (rename(temp.c_str(), path.c_str()) != 0) return failed(absl::StrCat("rename: ", std::strerror(errno)));
  return path;
}

}  // namespace gpusched::agent
