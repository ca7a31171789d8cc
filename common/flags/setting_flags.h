#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/config/settings_table.h"

namespace gpusched::flags {

// The command a setting's flag is on: the program itself for program-wide
// settings, else `command`.
inline CLI::App* FlagHome(CLI::App* command, const config::SettingSpec& spec) {
  if (!spec.program_wide) return command;
  while (command->get_parent() != nullptr) command = command->get_parent();
  return command;
}

// One flag per row of `table`, bound to its member of `values`, with the
// row's help, its check (range, choices, address) and, where there is one,
// its default. A bool that defaults to false is a switch (--allow-root-jobs);
// one that defaults to true takes a value (--keep-jobs-on-stop=false).
template <typename Values>
void AddSettingFlags(CLI::App* command, const config::SettingsTable<Values>& table, Values* values) {
  for (const config::Setting<Values>& row : table) {
    const config::SettingSpec& spec = row.spec;
    CLI::App* home = FlagHome(command, spec);
    std::visit(
        [&](auto member) {
          auto& target = values->*member;
          using T = std::decay_t<decltype(target)>;
          CLI::Option* option = nullptr;
          if constexpr (std::is_same_v<T, bool>) {
            option = target ? home->add_option(config::FlagName(spec), target, spec.help)->capture_default_str()
                            : home->add_flag(config::FlagName(spec), target, spec.help);
          } else {
            option = home->add_option(config::FlagName(spec), target, spec.help);
          }
          if constexpr (std::is_same_v<T, std::string>) {
            if (!target.empty()) option->capture_default_str();
            option->check(CLI::Validator([spec](std::string& text) { return config::CheckSettingText(spec, text); }, "",
                                         "setting"));
          }
          if constexpr (std::is_same_v<T, int64_t>) {
            option->check(CLI::Range(spec.min, spec.max))->capture_default_str();
          }
          if (spec.type == config::SettingType::kChoice) option->check(CLI::IsMember(spec.choices));
          if (spec.type == config::SettingType::kExistingFile) option->check(CLI::ExistingFile);
        },
        row.target);
  }
}

// Whether `spec`'s flag was on the command line.
inline bool FlagGiven(CLI::App* command, const config::SettingSpec& spec) {
  return FlagHome(command, spec)->get_option(config::FlagName(spec))->count() > 0;
}

// The settings file under the command line: each key the file set counts
// where its flag was not given.
template <typename Values>
void ApplyFileUnderFlags(CLI::App* command, const config::SettingsTable<Values>& table,
                         const config::SettingsFromFile<Values>& file, Values* values) {
  for (const config::Setting<Values>& row : table) {
    if (file.Sets(row.spec.key) && !FlagGiven(command, row.spec)) {
      config::CopySetting(row, file.values, *values);
    }
  }
}

}  // namespace gpusched::flags
