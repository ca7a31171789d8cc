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
  // eat the machine's memory.
  std::string text(kMaxConfigFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is larger than ", kMaxConfigFileBytes >> 20, " MiB: not a settings file"));
  }
  return text;
}

absl::StatusOr<TomlValue> ReadTomlFile(const std::string& path) {
  auto text = ReadConfigText(path);
  if (!text.ok()) return text.status();
  return ParseToml(*text, path);
}

}  // namespace gpusched::config
