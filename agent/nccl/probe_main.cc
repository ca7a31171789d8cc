// gpusched-nccl-probe: NCCL all-reduce (float, sum) bandwidth over this node's
// GPUs, one communicator per GPU in this process, optionally joined with the
// probes of other nodes. Prints a table like nccl-tests' all_reduce_perf, or
// with --json one object that agent/nccl/probe_report.h reads.
//
// NCCL does not say which algorithm (ring, tree, NVLS, ...) it picked short of
// NCCL_DEBUG=INFO logs or a tuner plugin, so the report names the NCCL
// version instead; the algorithm follows from it and the topology.
#include <cuda_runtime.h>
#include <nccl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/nccl/rendezvous.h"

namespace {

constexpr char kUsage[] =
    "usage: gpusched-nccl-probe [--gpus 0,1,...] [--min-bytes N] [--max-bytes N] [--warmup N] [--iters N]\n"
    "         [--nranks-total N --first-rank R --rendezvous HOST:PORT] [--timeout-s S] [--json]\n"
    "All-reduce (float sum) bandwidth over the given GPUs (default: all visible), sizes doubling from\n"
    "--min-bytes (8) to --max-bytes (128 MiB). Across nodes: every node runs the probe with the same\n"
    "--nranks-total and --rendezvous (where the node with --first-rank 0 listens) and its own first rank.\n";

struct Options {
  std::vector<int> gpus;  // empty: all visible
  int64_t min_bytes = 8;
  int64_t max_bytes = int64_t{128} << 20;  // 8 GPUs on NVSwitch or PCIe: a few seconds in all
  int64_t warmup = 5, iters = 20;
  int64_t nranks_total = 0;  // 0: this process's GPUs are all ranks
  int64_t first_rank = 0;
  std::string host;
  int64_t port = 0;
  int64_t timeout_s = 120;
  bool json = false;
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "gpusched-nccl-probe: %s\n", message.c_str());
  std::exit(1);
}

void CheckCuda(cudaError_t result, const std::string& what) {
  if (result != cudaSuccess) Die(what + ": " + cudaGetErrorString(result));
}

void CheckNccl(ncclResult_t result, const std::string& what) {
  if (result == ncclSuccess) return;
  std::string message = what + ": " + ncclGetErrorString(result);
  const char* detail = ncclGetLastError(nullptr);
  if (detail != nullptr && *detail != '\0') message += " (" + std::string(detail) + ")";
  Die(message);
}

int64_t Number(const std::string& flag, const std::string& text, int64_t low, int64_t high) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < low || value > high) {
    Die(flag + " " + text + ": expected a whole number from " + std::to_string(low) + " to " + std::to_string(high));
  }
  return value;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  struct {
    const char* flag;
    int64_t* value;
    int64_t low, high;
  } const numbers[] = {{"--min-bytes", &o.min_bytes, 4, int64_t{1} << 40},
                       {"--max-bytes", &o.max_bytes, 4, int64_t{1} << 40},
                       {"--warmup", &o.warmup, 0, 100000},
                       {"--iters", &o.iters, 1, 100000},
                       {"--nranks-total", &o.nranks_total, 1, 1 << 20},
                       {"--first-rank", &o.first_rank, 0, 1 << 20},
                       {"--timeout-s", &o.timeout_s, 1, 86400}};
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (flag == "--json") {
      o.json = true;
      continue;
    }
    if (flag.rfind("--", 0) != 0) Die("unknown argument " + flag + " (see --help)");
    if (i + 1 >= argc) Die(flag + " needs a value");
    const std::string value = argv[++i];
    bool known = false;
    for (const auto& n : numbers) {
      if (flag == n.flag) *n.value = Number(flag, value, n.low, n.high), known = true;
    }
    if (flag == "--gpus") {
      for (size_t start = 0, comma = 0; comma != std::string::npos; start = comma + 1) {
        comma = value.find(',', start);
        const int gpu = static_cast<int>(Number(flag, value.substr(start, comma - start), 0, 1023));
        if (std::count(o.gpus.begin(), o.gpus.end(), gpu) > 0) Die(flag + " " + value + ": GPU listed twice");
        o.gpus.push_back(gpu);
      }
    } else if (flag == "--rendezvous") {
      const size_t colon = value.rfind(':');
      if (colon == std::string::npos || colon == 0) Die(flag + " " + value + ": expected HOST:PORT");
      o.host = value.substr(0, colon);
      if (o.host.front() == '[' && o.host.back() == ']') o.host = o.host.substr(1, o.host.size() - 2);  // [v6]:port
      o.port = Number(flag + " port", value.substr(colon + 1), 1, 65535);
    } else if (!known) {
      Die("unknown argument " + flag + " (see --help)");
    }
  }
  if (o.min_bytes > o.max_bytes) Die("--min-bytes is larger than --max-bytes");
  return o;
}

// One alarm bounds the whole run, rendezvous and NCCL init included (neither
// has a timeout of its own); it says what the probe was waiting for.
std::atomic<const char*> g_stage{"starting"};
std::string g_timeout_message;

void OnTimeout(int) {
  const char* stage = g_stage.load();
  (void)!write(STDERR_FILENO, g_timeout_message.data(), g_timeout_message.size());
  (void)!write(STDERR_FILENO, stage, std::strlen(stage));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(1);
}

struct Row {
  int64_t bytes, count;
  double time_us, algbw, busbw;
};

std::string Join(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseOptions(argc, argv);
  g_timeout_message = "gpusched-nccl-probe: timed out after " + std::to_string(o.timeout_s) + " s while ";
  signal(SIGALRM, OnTimeout);
  alarm(static_cast<unsigned>(o.timeout_s));
  // NCCL's own log goes to stdout by default, where it would spoil --json.
  if (o.json) setenv("NCCL_DEBUG_FILE", "/dev/stderr", 0);
  // --gpus counts as nvidia-smi and the agent do (PCI order), as the jobs'
  // CUDA_VISIBLE_DEVICES does; CUDA's own default puts the fastest GPU first.
  setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);

  int devices = 0;
  const cudaError_t counted = cudaGetDeviceCount(&devices);
  if (counted != cudaSuccess || devices == 0) {
    std::string why = counted == cudaSuccess ? "none visible" : cudaGetErrorString(counted);
    if (counted == cudaErrorInsufficientDriver) why += "; is an NVIDIA driver installed, and new enough?";
    Die("no CUDA device available (" + why + ")");
  }
  if (o.gpus.empty()) {
    for (int d = 0; d < devices; ++d) o.gpus.push_back(d);
  }
  for (int gpu : o.gpus) {
    if (gpu >= devices) Die("--gpus: no GPU " + std::to_string(gpu) + ", " + std::to_string(devices) + " are visible");
  }
  const int local = static_cast<int>(o.gpus.size());
  if (o.nranks_total == 0) o.nranks_total = o.first_rank + local;
  if (o.first_rank + local > o.nranks_total) Die("--first-rank + number of GPUs is more than --nranks-total");
  if (o.nranks_total != local && o.host.empty()) Die("ranks on other nodes need --rendezvous HOST:PORT");
  const int n = static_cast<int>(o.nranks_total), first = static_cast<int>(o.first_rank);

  // The unique id, after the total rank count so that a mismatch fails here
  // rather than hanging in NCCL init.
  ncclUniqueId id;
  std::string payload(sizeof n + sizeof id, '\0');
  if (first == 0) {
    CheckNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    std::memcpy(payload.data(), &n, sizeof n);
    std::memcpy(payload.data() + sizeof n, &id, sizeof id);
    const std::string error = n == local ? "" : gpusched::agent::ServeRendezvous(static_cast<int>(o.port), payload);
    if (!error.empty()) Die(error);
  } else {
    g_stage = "waiting for rank 0 at the --rendezvous address";
    const std::string error =
        gpusched::agent::FetchRendezvous(o.host, static_cast<int>(o.port), payload.size(), &payload);
    if (!error.empty()) Die(error);
    int theirs = 0;
    std::memcpy(&theirs, payload.data(), sizeof theirs);
    if (theirs != n) Die("rank 0 has --nranks-total " + std::to_string(theirs) + ", this process " + std::to_string(n));
    std::memcpy(&id, payload.data() + sizeof n, sizeof id);
  }

  g_stage = "waiting for all ranks to join (NCCL init)";
  std::vector<ncclComm_t> comms(local);
  CheckNccl(ncclGroupStart(), "ncclGroupStart");
  for (int i = 0; i < local; ++i) {
    CheckCuda(cudaSetDevice(o.gpus[i]), "cudaSetDevice " + std::to_string(o.gpus[i]));
    CheckNccl(ncclCommInitRank(&comms[i], n, id, first + i), "ncclCommInitRank");
  }
  CheckNccl(ncclGroupEnd(), "NCCL init");

  const int64_t max_count = o.max_bytes / 4;
  std::vector<float*> send(local), recv(local);
  std::vector<cudaStream_t> streams(local);
  for (int i = 0; i < local; ++i) {
    const std::string gpu = "GPU " + std::to_string(o.gpus[i]);
    CheckCuda(cudaSetDevice(o.gpus[i]), "cudaSetDevice " + std::to_string(o.gpus[i]));
    CheckCuda(cudaMalloc(&send[i], max_count * 4), "cudaMalloc on " + gpu);
    CheckCuda(cudaMalloc(&recv[i], max_count * 4), "cudaMalloc on " + gpu);
    CheckCuda(cudaMemset(send[i], 0, max_count * 4), "cudaMemset on " + gpu);
    CheckCuda(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), "cudaStreamCreate on " + gpu);
  }

  auto all_reduce = [&](int64_t count, int64_t times) {
    for (int64_t k = 0; k < times; ++k) {
      CheckNccl(ncclGroupStart(), "ncclGroupStart");
      for (int i = 0; i < local; ++i) {
        CheckNccl(ncclAllReduce(send[i], recv[i], count, ncclFloat, ncclSum, comms[i], streams[i]), "ncclAllReduce");
      }
      CheckNccl(ncclGroupEnd(), "ncclAllReduce");
    }
    for (int i = 0; i < local; ++i) {
      CheckCuda(cudaStreamSynchronize(streams[i]), "all-reduce on GPU " + std::to_string(o.gpus[i]));
    }
  };

  g_stage = "running the all-reduce";
  std::vector<Row> rows;
  for (int64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
    const int64_t count = bytes / 4;
    all_reduce(count, o.warmup);
    const auto start = std::chrono::steady_clock::now();
    all_reduce(count, o.iters);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.iters;
    // nccl-tests' definitions: algbw = size / time, busbw = algbw * 2(n-1)/n.
    const double algbw = static_cast<double>(count * 4) / 1e9 / seconds;
    rows.push_back({count * 4, count, seconds * 1e6, algbw, algbw * 2.0 * (n - 1) / n});
  }
  double peak = 0;
  for (const Row& r : rows) peak = std::max(peak, r.busbw);

  int version = 0;
  ncclGetVersion(&version);
  const std::string nccl_version = std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
                                   std::to_string(version % 100);
  if (o.json) {
    std::printf(
        "{\"nccl_version\": \"%s\", \"gpus\": [%s], \"nranks\": %d, \"first_rank\": %d, \"type\": \"float\", "
        "\"op\": \"sum\", \"warmup_iters\": %d, \"iters\": %d,\n \"rows\": [",
        nccl_version.c_str(), Join(o.gpus).c_str(), n, first, static_cast<int>(o.warmup), static_cast<int>(o.iters));
    for (size_t k = 0; k < rows.size(); ++k) {
      const Row& r = rows[k];
      std::printf(
          "%s\n  {\"bytes\": %lld, \"count\": %lld, \"time_us\": %.3f, \"algbw_gbps\": %.6g, \"busbw_gbps\": %.6g}",
          k == 0 ? "" : ",", static_cast<long long>(r.bytes), static_cast<long long>(r.count), r.time_us, r.algbw,
          r.busbw);
    }
    std::printf("],\n \"peak_busbw_gbps\": %.6g}\n", peak);
  } else {
    std::printf(
        "# gpusched-nccl-probe: all-reduce float sum, NCCL %s, %d ranks, GPUs %s as ranks %d-%d, %d warmup + %d timed "
        "iterations\n",
        nccl_version.c_str(), n, Join(o.gpus).c_str(), first, first + local - 1, static_cast<int>(o.warmup),
        static_cast<int>(o.iters));
    std::printf("#\n# %12s %12s %6s %10s %8s %8s\n# %12s %12s %6s %10s %8s %8s\n", "size", "count", "type", "time",
                "algbw", "busbw", "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)");
    for (const Row& r : rows) {
      std::printf("  %12lld %12lld %6s %10.2f %8.2f %8.2f\n", static_cast<long long>(r.bytes),
                  static_cast<long long>(r.count), "float", r.time_us, r.algbw, r.busbw);
    }
    std::printf("# Peak bus bandwidth: %.2f GB/s\n", peak);
  }
  std::fflush(stdout);

  g_stage = "shutting down NCCL";
  for (int i = 0; i < local; ++i) {
    ncclCommDestroy(comms[i]);
    cudaFree(send[i]);
    cudaFree(recv[i]);
  }
  return 0;
}
