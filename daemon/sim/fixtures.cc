#include "daemon/sim/fixtures.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpusched::sim {

// Defined in the generated embedded_fixtures.cc.
const std::vector<std::pair<std::string, std::string>>& EmbeddedFixtureTexts();

std::vector<std::string> EmbeddedFixtureNames() {
  std::vector<std::string> names;
  for (const auto& [name, text] : EmbeddedFixtureTexts()) names.push_back(name);
  return names;
}

absl::StatusOr<std::string> LoadFixture(const std::string& name, const std::string& base_dir) {
  if (name.find('/') == std::string::npos) {
    for (const auto& [embedded, text] : EmbeddedFixtureTexts()) {
      if (embedded == name) return text;
    }
  }
  const std::string path = name.starts_with('/') || base_dir.empty() ? name : absl::StrCat(base_dir, "/", name);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("topology \"", name, "\" is neither an embedded fixture (",
                                            absl::StrJoin(EmbeddedFixtureNames(), ", "), ") nor a readable file ",
                                            path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gpusched::sim
