#include "cli/script_directives.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/errors.h"
#include "common/display_text.h"

namespace gpusched::cli {

bool OnlyOnCommandLine(absl::string_view option) {
  return option == "--script" || option == "--json" || option == "--request-id";
}

const char* const kHonouredSbatchOptions =
    "--gpus/-G, --nodes/-N, --gpus-per-node, --cpus-per-gpu, --mem-per-gpu, --time/-t, --job-name/-J, "
    "--partition/-p, --account/-A, --array/-a, --dependency/-d, --hold/-H, --chdir/-D, --output/-o, "
    "--error/-e";

namespace {

constexpr absl::string_view kGpuschedPrefix = "#GPUSCHED";
constexpr absl::string_view kSbatchPrefix = "#SBATCH";

// Splits a directive's text into words as a shell would for plain words:
// whitespace separates, '...' and "..." quote, and an unquoted # starts a
// comment. nullopt on an unterminated quote.
std::optional<std::vector<std::string>> SplitWords(absl::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) return std::nullopt;
  if (in_word) words.push_back(std::move(word));
  return words;
}

// "--opt=value" -> {"--opt", "value"}; "--opt" -> {"--opt", nullopt}.
std::pair<std::string, std::optional<std::string>> SplitOption(const std::string& word) {
  const size_t eq = word.find('=');
  if (!absl::StartsWith(word, "--") || eq == std::string::npos) return {word, std::nullopt};
  return {word.substr(0, eq), word.substr(eq + 1)};
}

absl::Status LineError(absl::string_view path, int line, absl::string_view what) {
  return UsageError(absl::StrCat(path, ":", line, ": ", what));
}

// The sbatch option's gpusched equivalent, or what stops it.
struct Translation {
  std::string flag;  // the gpusched option
  bool takes_value = true;
};

std::optional<Translation> SbatchEquivalent(absl::string_view option) {
  struct Entry {
    absl::string_view long_name, short_name, flag;
    bool takes_value;
  };
  static constexpr Entry kTable[] = {
      {"--gpus", "-G", "--gpus", true},
      {"--nodes", "-N", "--nodes", true},
      {"--gpus-per-node", "", "--gpus-per-node", true},
      {"--cpus-per-gpu", "", "--cpus-per-gpu", true},
      {"--mem-per-gpu", "", "--mem-per-gpu", true},
      {"--time", "-t", "--time", true},
      {"--job-name", "-J", "--name", true},
      {"--partition", "-p", "--queue", true},
      {"--account", "-A", "--account", true},
      {"--array", "-a", "--array", true},
      {"--dependency", "-d", "--dependency", true},
      {"--hold", "-H", "--hold", false},
      {"--chdir", "-D", "--workdir", true},
      {"--output", "-o", "--output", true},
      {"--error", "-e", "--error", true},
  };
  for (const Entry& e : kTable) {
    if (option == e.long_name || (!e.short_name.empty() && option == e.short_name)) {
      return Translation{std::string(e.flag), e.takes_value};
    }
  }
  return std::nullopt;
}

// Why an sbatch option that gpusched does not honour is refused, where
// there is more to say than that.
std::string WhyNot(absl::string_view option) {
  if (option == "--gres") return "ask for GPUs with --gpus or --gpus-per-node";
  if (option == "--ntasks" || option == "-n" || option == "--ntasks-per-node") {
    return "gpusched starts one process per GPU (or per node with #GPUSCHED --launch per-node)";
  }
  return absl::StrCat("it reads only ", kHonouredSbatchOptions, "; use a #GPUSCHED line for the others");
}

// An sbatch GPU count may name the type: "h100:8".
void AddGpuCount(const std::string& flag, const std::string& value, std::vector<std::string>& words) {
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos) {
    words.insert(words.end(), {flag, value});
    return;
  }
  words.insert(words.end(), {flag, value.substr(colon + 1), "--gpu-model", value.substr(0, colon)});
}

absl::StatusOr<std::vector<std::string>> TranslateSbatch(const std::vector<std::string>& given, absl::string_view path,
                                                         int line) {
  std::vector<std::string> words;
  for (size_t i = 0; i < given.size(); ++i) {
    auto [option, value] = SplitOption(given[i]);
    if (!absl::StartsWith(option, "-")) {
      return LineError(path, line, absl::StrCat("#SBATCH: \"", given[i], "\" is not an option"));
    }
    std::optional<Translation> t = SbatchEquivalent(option);
    if (!t.has_value()) {
      return LineError(path, line, absl::StrCat("#SBATCH ", option, " is not honoured by gpusched: ", WhyNot(option)));
    }
    if (!t->takes_value) {
      if (value.has_value()) return LineError(path, line, absl::StrCat("#SBATCH ", option, " takes no value"));
      words.push_back(t->flag);
      continue;
    }
    if (!value.has_value()) {
      if (i + 1 >= given.size()) return LineError(path, line, absl::StrCat("#SBATCH ", option, " needs a value"));
      value = given[++i];
    }
    if (option == "--nodes" || option == "-N") {
      if (value->find('-') != std::string::npos) {
        return LineError(
            path, line,
            absl::StrCat("#SBATCH ", option, " ", *value, ": gpusched takes an exact node count, not a range"));
      }
    }
    if ((option == "--partition" || option == "-p") && value->find(',') != std::string::npos) {
      return LineError(path, line,
                       absl::StrCat("#SBATCH ", option, " ", *value, ": gpusched submits to one queue; name one"));
    }
    if ((option == "--dependency" || option == "-d") &&
        (value->find('?') != std::string::npos || absl::StrContains(*value, "singleton"))) {
      return LineError(path, line,
                       absl::StrCat("#SBATCH ", option, " ", *value,
                                    ": gpusched takes dependencies that must all hold (KIND:ID[:ID],...); "
                                    "neither ? (any of) nor singleton"));
    }
    if (option == "--gpus" || option == "-G" || option == "--gpus-per-node") {
      AddGpuCount(t->flag, *value, words);
    } else {
      words.insert(words.end(), {t->flag, *value});
    }
  }
  return words;
}

absl::StatusOr<std::vector<std::string>> CheckGpusched(const std::vector<std::string>& given, absl::string_view path,
                                                       int line) {
  for (const std::string& word : given) {
    if (!absl::StartsWith(word, "-")) continue;
    const std::string option = SplitOption(word).first;
    if (OnlyOnCommandLine(option)) {
      return LineError(path, line, absl::StrCat("#GPUSCHED ", option, " belongs on the command line, not in a script"));
    }
  }
  if (!given.empty() && !absl::StartsWith(given.front(), "-")) {
    return LineError(path, line,
                     absl::StrCat("#GPUSCHED: \"", given.front(), "\" is not an option (the script is the command)"));
  }
  return given;
}

// "script line 3: #SBATCH --gpus=8": the line with its whitespace made
// single spaces, cut short where long (the daemon keeps it with the job).
std::string Origin(int number, absl::string_view line) {
  constexpr size_t kMaxShown = 120;
  std::string text;
  for (char c : ToDisplayText(line, line.size())) {
    if (c == ' ' && (text.empty() || text.back() == ' ')) continue;
    text += c;
  }
  const std::string shown = ToDisplayText(text, kMaxShown);
  return absl::StrCat("script line ", number, ": ", shown, shown.size() < text.size() ? "..." : "");
}

}  // namespace

absl::StatusOr<std::vector<DirectiveLine>> ReadScriptDirectives(absl::string_view script, absl::string_view path) {
  std::vector<DirectiveLine> out;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(script, '\n')) {
    ++number;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (number == 1 && absl::StartsWith(line, "#!")) continue;
    if (line.empty()) continue;
    if (!absl::StartsWith(line, "#")) break;  // the first command: directives end here
    absl::string_view prefix;
    if (absl::StartsWith(line, kGpuschedPrefix)) {
      prefix = kGpuschedPrefix;
    } else if (absl::StartsWith(line, kSbatchPrefix)) {
      prefix = kSbatchPrefix;
    } else {
      continue;  // a plain comment
    }
    absl::string_view rest = line.substr(prefix.size());
    // "#SBATCHX" is a comment that happens to start alike, as sbatch has it.
    if (!rest.empty() && !absl::ascii_isspace(static_cast<unsigned char>(rest.front()))) continue;
    std::optional<std::vector<std::string>> given = SplitWords(rest);
    if (!given.has_value()) return LineError(path, number, absl::StrCat(prefix, ": a quote is not closed"));
    if (given->empty()) continue;
    auto words = prefix == kSbatchPrefix ? TranslateSbatch(*given, path, number) : CheckGpusched(*given, path, number);
    if (!words.ok()) return words.status();
    out.push_back({number, Origin(number, line), *std::move(words)});
  }
  return out;
}

}  // namespace gpusched::cli
