#pragma once

#include <string>

#include "CLI/CLI.hpp"
#include "daemon/sim/sharing_command.h"

namespace gpusched::sim {

// The `gpuschedd simulate-sharing` subcommand and its flags (see
// SimulateFlags for the pattern).
class SimulateSharingFlags {
 public:
  explicit SimulateSharingFlags(CLI::App& app);
  bool chosen() const { return command_->parsed(); }
  SimulateSharingOptions Options() const;

 private:
  CLI::App* command_;
  SimulateSharingOptions options_;
  std::string policies_;  // comma-separated; every policy by default
  double inflate_to_percent_ = 130;
  double measure_at_percent_ = 100;
};

}  // namespace gpusched::sim
