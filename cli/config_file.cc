#include "cli/config_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "cli/address.h"

namespace gpusched::cli {
namespace {

bool IsBareKeyChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// Reads a TOML basic string starting at the opening quote; `rest` is what
// follows the closing quote.
bool ParseBasicString(absl::string_view text, std::string* value, absl::string_view* rest,
                      std::string* why) {
  value->clear();
  for (size_t i = 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      *rest = text.substr(i + 1);
      return true;
    }
    if (c == '\\') {
      if (++i == text.size()) break;
      switch (text[i]) {
        case '"': value->push_back('"'); break;
        case '\\': value->push_back('\\'); break;
        case 'n': value->push_back('\n'); break;
        case 't': value->push_back('\t'); break;
        default:
          *why = absl::StrCat("unsupported escape \\", std::string(1, text[i]));
          return false;
      }
      continue;
    }
    value->push_back(c);
  }
  *why = "unterminated string";
  return false;
}

}  // namespace

absl::StatusOr<CliConfig> ParseCliConfig(absl::string_view text, absl::string_view path) {
  CliConfig config;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    auto fail = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", line_no, ": ", why));
    };
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line.front() == '#') continue;

    size_t key_end = 0;
    while (key_end < line.size() && IsBareKeyChar(line[key_end])) ++key_end;
    if (key_end == 0) return fail("expected `key = \"value\"`");
    absl::string_view key = line.substr(0, key_end);
    absl::string_view after_key = absl::StripLeadingAsciiWhitespace(line.substr(key_end));
    if (after_key.empty() || after_key.front() != '=') {
      return fail(absl::StrCat("expected '=' after \"", key, "\""));
    }
    absl::string_view value_text = absl::StripLeadingAsciiWhitespace(after_key.substr(1));
    if (value_text.empty() || value_text.front() != '"') {
      return fail(absl::StrCat("the value of \"", key, "\" must be a quoted string"));
    }
    std::string value, why;
    absl::string_view rest;
    if (!ParseBasicString(value_text, &value, &rest, &why)) return fail(why);
    rest = absl::StripAsciiWhitespace(rest);
    if (!rest.empty() && rest.front() != '#') {
      return fail(absl::StrCat("unexpected text after the value of \"", key, "\""));
    }

    if (key == "address") {
      if (!IsValidDaemonAddress(value)) {
        return fail(absl::StrCat("address \"", value, "\" is not HOST:PORT"));
      }
      config.address = value;
    } else {
      return fail(absl::StrCat("unknown key \"", key, "\" (known keys: address)"));
    }
  }
  return config;
}

absl::StatusOr<std::optional<CliConfig>> ReadCliConfig(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return std::optional<CliConfig>();
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto config = ParseCliConfig(text.str(), path);
  if (!config.ok()) return config.status();
  return std::optional<CliConfig>(*std::move(config));
}

}  // namespace gpusched::cli
