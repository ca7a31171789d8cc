#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace gpusched::sim {

// One job of a replayed trace, as the trace tells it: when it was submitted,
// how many GPUs it held and how long it ran (at its ideal placement, as the
// runtime model reads it).
struct TraceJob {
  std::string id;
  int64_t submit_s = 0;  // seconds after the first selected job's submission
  int64_t gpus = 0;
  int64_t duration_s = 0;
  std::string user;
  std::string queue;
  int line = 0;  // in the source file, for messages
  // What a trace of shared GPUs (the Alibaba openb pod list) adds; the
  // defaults are a whole-GPU job sized by the core's per-GPU defaults.
  int gpu_milli = 1000;    // of each GPU; below 1000 the job shares its GPU
  int64_t cpu_milli = 0;   // the job's CPUs in thousandths; 0: the core's default per GPU
  int64_t memory_mib = 0;  // the job's memory; 0: the core's default per GPU
  std::string gpu_model;   // only GPUs of this model; "" = any
  bool one_node = false;   // all its GPUs on one node (a pod)
};

// The jobs to replay, in submission order (then file order), and what was
// left out and why.
struct Trace {
  std::vector<TraceJob> jobs;
  int64_t rows = 0;                      // data rows read
  int64_t skipped_unknown_duration = 0;  // no run time: never started, or not recorded
  int64_t skipped_no_gpus = 0;           // CPU-only rows: nothing to place on GPUs
  int64_t skipped_other_queue = 0;       // filtered out by TraceOptions::queue
  int64_t skipped_steps = 0;             // sacct job steps (123.batch, 123.0)
  std::set<std::string> queues;          // every queue named by a row, selected or not
  // What was odd but could be replayed, each naming its line: a byte-order
  // mark, rows out of submission order, a job id given twice.
  std::vector<std::string> warnings;
};

struct TraceOptions {
  std::string queue;  // replay only the rows of this queue (partition); "" = all
};

// Warns of repeated job ids and rows out of submission order, stable-sorts
// by submission and rebases times on the first job; the readers call it
// last.
void FinishTrace(Trace& trace);

}  // namespace gpusched::sim
