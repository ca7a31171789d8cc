#include "daemon/server/power_programs.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/io/logging/logging.h"
#include "common/io/process/run_program.h"
#include "common/net/hostlist.h"
#include "common/threads/mutex.h"

namespace gpusched::server {
namespace {

std::string Quoted(absl::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      absl::StrAppend(&out, "\\u00", u < 0x10 ? "0" : "", absl::Hex(u));
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

std::string NameList(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) absl::StrAppend(&out, i == 0 ? "" : ", ", Quoted(names[i]));
  return out + "]";
}

const char* Action(const core::PowerRequest& request) {
  return request.kind == core::PowerRequest::Kind::kResume ? "resume" : "suspend";
}

void LogOutput(const std::string& prefix, absl::string_view stream, const std::string& text) {
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    GetLogger("power")->info("{} {}: {}", prefix, std::string(stream), std::string(line));
  }
}

}  // namespace

struct PowerPrograms::Shared {
  Mutex mu;
  Ended ended ABSL_GUARDED_BY(mu);  // empty once the owner is gone
  std::atomic<uint64_t> next{0};
};

std::string PowerRequestJson(const core::PowerRequest& request) {
  std::string out = absl::StrCat("{\"action\": ", Quoted(Action(request)), ", \"pool\": ", Quoted(request.pool),
                                 ", \"nodes\": ", NameList(request.nodes), ", \"jobs\": [");
  for (size_t i = 0; i < request.jobs.size(); ++i) {
    const core::PowerRequest::ForJob& job = request.jobs[i];
    absl::StrAppend(&out, i == 0 ? "" : ", ", "{\"id\": ", job.job_id, ", \"nodes\": ", NameList(job.nodes),
                    ", \"why\": ", Quoted(job.why), "}");
  }
  return out + "]}\n";
}

PowerPrograms::PowerPrograms(std::string work_dir, Ended ended)
    : shared_(std::make_shared<Shared>()), work_dir_(std::move(work_dir)) {
  shared_->ended = std::move(ended);
}

PowerPrograms::~PowerPrograms() {
  MutexLock lock(&shared_->mu);
  shared_->ended = nullptr;
}

void PowerPrograms::Run(core::PowerRequest request) {
  const std::string prefix =
      absl::StrCat("pool ", request.pool, " ", Action(request), " ", CompressHostlist(request.nodes));
  const std::string json_path =
      absl::StrCat(work_dir_, "/", Action(request), "-", request.pool, "-", shared_->next.fetch_add(1), ".json");
  std::error_code ec;
  std::filesystem::create_directories(work_dir_, ec);
  {
    std::ofstream json(json_path, std::ios::trunc);
    json << PowerRequestJson(request);
    if (!json) {
      GetLogger("power")->error("{}: cannot write {}", prefix, json_path);
    }
  }
  std::thread([shared = shared_, request = std::move(request), prefix, json_path]() {
    {
      MutexLock lock(&shared->mu);
      if (!shared->ended) return;
      GetLogger("power")->info("{}: running {}", prefix, request.program);
    }
    absl::Status outcome;
    auto run = RunProgram({request.program, CompressHostlist(request.nodes), json_path}, request.timeout);
    if (!run.ok()) {
      outcome = run.status();
    } else if (run->signal != 0) {
      outcome = absl::AbortedError(absl::StrCat(request.program, " was killed by signal ", run->signal));
    } else if (run->exit_code != 0) {
      outcome = absl::AbortedError(absl::StrCat(request.program, " exited with status ", run->exit_code));
    }
    std::error_code ignored;
    std::filesystem::remove(json_path, ignored);
    // Said only while the owner is there, under its lock: a program that
    // ends after the daemon stopped (the process may be exiting, its
    // loggers already destroyed) touches nothing of it.
    MutexLock lock(&shared->mu);
    if (!shared->ended) return;
    if (run.ok()) {
      LogOutput(prefix, "stdout", run->out);
      LogOutput(prefix, "stderr", run->err);
    }
    if (outcome.ok()) {
      GetLogger("power")->info("{}: {} exited 0", prefix, request.program);
    } else {
      GetLogger("power")->warn("{}: {}", prefix, std::string(outcome.message()));
    }
    shared->ended(request, outcome);
  }).detach();
}

}  // namespace gpusched::server
