#pragma once

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/config/settings_table.h"

namespace gpusched::testing {

// What is wrong with a shipped example settings file against its binary's
// table: every key of the table is either set to its default (`key = ...`)
// or shown commented out (`#key = ...`), each once; every key written at the
// top level, set or commented, is one of the table's. `file` is the example
// as read (its values and the keys it set); only lines above the first
// [table] header, set or commented, count.
template <typename Values>
std::vector<std::string> ExampleProblems(const config::SettingsTable<Values>& table,
                                         const config::SettingsFromFile<Values>& file, const std::string& text) {
  std::vector<std::string> problems;
  std::multiset<std::string> commented, written;
  std::set<std::string> known;
  for (const config::Setting<Values>& row : table) known.insert(row.spec.key);
  const std::regex key_line(R"(^(#?)([a-z_]+) = .*)");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("[", 0) == 0 || line.rfind("#[", 0) == 0) break;  // a table, set or commented
    std::smatch m;
    if (!std::regex_match(line, m, key_line)) continue;
    (m[1].length() > 0 ? commented : written).insert(m[2]);
    if (known.count(m[2]) == 0) problems.push_back("the example writes " + m[2].str() + ", which is no setting");
  }
  const Values defaults;
  for (const config::Setting<Values>& row : table) {
    const std::string key = row.spec.key;
    const size_t times = commented.count(key) + written.count(key);
    if (times == 0) problems.push_back(key + " is not in the example");
    if (times > 1) problems.push_back(key + " is in the example " + std::to_string(times) + " times");
    if (file.Sets(key) && config::ValueOf(row, file.values) != config::ValueOf(row, defaults)) {
      problems.push_back(key + " is set to " + config::FormatSetting(config::ValueOf(row, file.values)) +
                         ", not its default " + config::FormatSetting(config::ValueOf(row, defaults)));
    }
  }
  return problems;
}

}  // namespace gpusched::testing
