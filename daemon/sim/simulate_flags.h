#pragma once

#include <string>

#include "CLI/CLI.hpp"
#include "daemon/sim/simulate_command.h"

namespace gpusched::sim {

// The `gpuschedd simulate` subcommand and its flags, so that main.cc stays
// wiring: construct before parsing, then ask chosen() and Options().
class SimulateFlags {
 public:
  explicit SimulateFlags(CLI::App& app);
  bool chosen() const { return command_->parsed(); }
  SimulateOptions Options() const;

 private:
  CLI::App* command_;
  SimulateOptions options_;
  std::string policies_ = "topology,best-fit,first-fit,spread";
  std::string format_ = "auto";
  std::string topology_ = "prefer";
  std::string order_ = "multifactor";
  std::string share_packing_ = core::kDefaultSharePacking;
  bool no_slowdown_ = false;
};

}  // namespace gpusched::sim
