#include "common/io/config_file/settings_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace gpusched::config {

std::optional<std::string> SettingsFileToRead(const std::string& flag_path, const char* default_path) {
  if (!flag_path.empty()) return flag_path;
  std::error_code ec;
  if (std::filesystem::exists(default_path, ec)) return std::string(default_path);
  return std::nullopt;
}

absl::StatusOr<std::string> ReadConfigText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    std::string why = absl::StrCat("cannot read ", path, ": ", std::strerror(error));
    return error == ENOENT ? absl::NotFoundError(why) : absl::InvalidArgumentError(why);
  }
  // Bounded: a path to /dev/zero or a log file by mistake must fail, not
  // eat the machine's memory. Read as it comes: a buffer of the largest
  // size, zeroed, cost every call 16 MiB of page faults (10 ms of CPU for
  // a CLI command reading its CA file).
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxConfigFileBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is larger than ", kMaxConfigFileBytes >> 20, " MiB: not a settings file"));
    }
  }
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  return text;
}

absl::StatusOr<TomlValue> ReadTomlFile(const std::string& path) {
  auto text = ReadConfigText(path);
  if (!text.ok()) return text.status();
  return ParseToml(*text, path);
}

}  // namespace gpusched::config
