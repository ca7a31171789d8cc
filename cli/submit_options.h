#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpusched::cli {

// `gpusched submit` as typed. Values stay text until BuildSubmitRequest parses
// them, so that every error names the flag it came from.
struct SubmitOptions {
  std::vector<std::string> command;  // after `--`
  std::optional<std::string> script_path;
  // The script as read once (for its directives, script_directives.h, and
  // to send); unset: SetCommand reads script_path.
  std::optional<std::string> script_text;
  // Where each option given came from, for `status JOB` (JobSpec.option_sources).
  struct Source {
    std::string option, value, origin;
  };
  std::vector<Source> sources;

  std::optional<std::string> gpus;
  std::optional<std::string> nodes;
  std::optional<std::string> gpus_per_node;
  std::optional<std::string> cpus_per_gpu;
  std::optional<std::string> mem_per_gpu;
  std::optional<std::string> cpus;
  std::optional<std::string> mem;
  std::optional<std::string> gpu_model;
  std::optional<std::string> gpu_mem;        // only GPUs with this much memory
  std::optional<std::string> gpu_share;      // "30%": a share of each GPU
  std::optional<std::string> gpu_mem_limit;  // GPU memory held on each shared GPU
  std::optional<std::string> gpu_sharing;    // mps or timeslice
  std::optional<std::string> mig;            // a MIG profile: 3g.40gb
  std::optional<std::string> topology;       // prefer, strict, any
  std::optional<std::string> topology_wait;  // Slurm time notation
  std::optional<std::string> time;
  std::optional<std::string> priority;

  std::optional<std::string> name;
  std::optional<std::string> queue;
  std::optional<std::string> account;
  std::optional<std::string> requeue;     // yes, no
  std::optional<std::string> dependency;  // Slurm syntax: afterok:12:13,afterany:14
  bool hold = false;
  bool preflight = false;
  bool no_spot = false;
  std::optional<std::string> array;  // Slurm syntax: 0-99%8, 1,3,5, 0-30:10
  std::optional<std::string> workdir;
  std::optional<std::string> image;          // run every rank in this container image
  std::vector<std::string> mounts;           // SRC:DST[:ro], with --image
  std::optional<std::string> image_workdir;  // the ranks' directory inside the image
  std::optional<std::string> output;         // rank 0's stdout and stderr: a file (sbatch --output)
  std::optional<std::string> error;          // rank 0's stderr apart: a file (sbatch --error)
  std::optional<std::string> launch;
  std::optional<std::string> request_id;
  std::vector<std::string> env;  // K=V, or K to copy K from this environment

  bool wait = false;
  bool json = false;
};

}  // namespace gpusched::cli
