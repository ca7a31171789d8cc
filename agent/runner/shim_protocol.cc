#include "agent/runner/shim_protocol.h"

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpusched::agent {
namespace {

// Agent and shim are installed together but run apart: an agent that keeps
// running through an upgrade talks to the new shim binary. The version says
// so instead of a misread spec.
constexpr absl::string_view kMagic = "gpusched-shim-spec 4\n";

class Writer {
 public:
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Str(const std::string& s) {
    U64(s.size());
    out_.append(s);
  }
  void Strs(const std::vector<std::string>& v) {
    U64(v.size());
    for (const std::string& s : v) Str(s);
  }
  template <typename Int>
  void Ints(const std::vector<Int>& v) {
    U64(v.size());
    for (Int i : v) I64(i);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(absl::string_view in) : in_(in) {}
  bool failed() const { return failed_; }
  bool done() const { return in_.empty(); }
  uint64_t U64() {
    uint64_t v = 0;
    if (in_.size() < sizeof(v)) return Fail();
    std::memcpy(&v, in_.data(), sizeof(v));
    in_.remove_prefix(sizeof(v));
    return v;
  }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  // Counts are checked against what is left, so garbage cannot ask for a
  // huge allocation.
  uint64_t Count(size_t min_item_bytes) {
    const uint64_t n = U64();
    if (failed_ || n > in_.size() / min_item_bytes) return Fail();
    return n;
  }
  std::string Str() {
    const uint64_t n = U64();
    if (failed_ || n > in_.size()) return Fail(), std::string();
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  std::vector<std::string> Strs() {
    std::vector<std::string> v(Count(sizeof(uint64_t)));
    for (std::string& s : v) s = Str();
    return v;
  }
  template <typename Int>
  std::vector<Int> Ints() {
    std::vector<Int> v(Count(sizeof(uint64_t)));
    for (Int& i : v) i = static_cast<Int>(I64());
    return v;
  }

 private:
  uint64_t Fail() {
    failed_ = true;
    in_ = {};
    return 0;
  }
  absl::string_view in_;
  bool failed_ = false;
};

}  // namespace

std::string EncodeShimSpec(const ShimSpec& spec) {
  Writer w;
  w.U64(spec.job_id);
  w.I64(absl::ToInt64Milliseconds(spec.lease));
  w.U64(spec.ranks.size());
  for (const ProcessSpec& rank : spec.ranks) {
    w.I64(rank.rank);
    w.Str(rank.executable);
    w.Strs(rank.argv);
    w.Strs(rank.env);
    w.Str(rank.workdir);
    w.Str(rank.log_path);
    w.U64(rank.credentials.has_value());
    if (rank.credentials) {
      w.Str(rank.credentials->user);
      w.U64(rank.credentials->uid);
      w.U64(rank.credentials->gid);
      w.Ints(rank.credentials->groups);
    }
    w.Ints(rank.cpus);
    w.Str(rank.stdin_path);
    w.Strs(rank.cleanup_argv);
    w.Str(rank.output_path);
    w.Str(rank.error_path);
  }
  return absl::StrCat(kMagic, w.Take());
}

absl::StatusOr<ShimSpec> DecodeShimSpec(absl::string_view bytes) {
  if (!absl::ConsumePrefix(&bytes, kMagic)) {
    const absl::string_view first_line = bytes.substr(0, std::min(bytes.find('\n'), size_t{64}));
    return absl::InvalidArgumentError(absl::StrCat(
        "the job spec is not one this shim reads (it starts \"", absl::CHexEscape(first_line), "\", expected \"",
        absl::StripSuffix(kMagic, "\n"), "\"): the agent and gpusched-shim are of different versions"));
  }
  Reader r(bytes);
  ShimSpec spec;
  spec.job_id = r.U64();
  spec.lease = absl::Milliseconds(r.I64());
  // A rank takes at least its fixed fields.
  spec.ranks.resize(r.Count(8 * sizeof(uint64_t)));
  for (ProcessSpec& rank : spec.ranks) {
    rank.rank = static_cast<int>(r.I64());
    rank.executable = r.Str();
    rank.argv = r.Strs();
    rank.env = r.Strs();
    rank.workdir = r.Str();
    rank.log_path = r.Str();
    if (r.U64() != 0) {
      Credentials c;
      c.user = r.Str();
      c.uid = static_cast<uid_t>(r.U64());
      c.gid = static_cast<gid_t>(r.U64());
      c.groups = r.Ints<gid_t>();
      rank.credentials = std::move(c);
    }
    rank.cpus = r.Ints<int>();
    rank.stdin_path = r.Str();
    rank.cleanup_argv = r.Strs();
    rank.output_path = r.Str();
    rank.error_path = r.Str();
  }
  if (r.failed()) return absl::InvalidArgumentError("the job spec is truncated or corrupt");
  if (!r.done()) return absl::InvalidArgumentError("the job spec has bytes after its last rank");
  if (spec.ranks.empty()) return absl::InvalidArgumentError("the job spec has no rank to run");
  if (spec.lease < absl::ZeroDuration()) return absl::InvalidArgumentError("the job spec has a negative lease");
  return spec;
}

absl::StatusOr<std::vector<pid_t>> ParseShimReply(absl::string_view reply) {
  reply = absl::StripTrailingAsciiWhitespace(reply);
  if (absl::ConsumePrefix(&reply, "failed ")) return absl::FailedPreconditionError(reply);
  if (!absl::ConsumePrefix(&reply, "started ")) {
    return absl::InternalError(reply.empty() ? "the job shim exited without a word"
                                             : absl::StrCat("the job shim said \"", absl::CHexEscape(reply), "\""));
  }
  std::vector<pid_t> groups;
  for (absl::string_view field : absl::StrSplit(reply, ' ', absl::SkipEmpty())) {
    pid_t pgid = 0;
    if (!absl::SimpleAtoi(field, &pgid) || pgid <= 1) {
      return absl::InternalError(absl::StrCat("the job shim named process group \"", absl::CHexEscape(field), "\""));
    }
    groups.push_back(pgid);
  }
  return groups;
}

std::string FormatShimLine(pid_t pid, uint64_t start_time) { return absl::StrCat("shim ", pid, " ", start_time, "\n"); }

std::string FormatGroupLine(const ShimExits::Group& group) {
  return absl::StrCat("group ", group.rank, " ", group.pgid, " ", group.start_time, "\n");
}

std::string FormatRankExit(const RankExit& exit) {
  if (exit.lost_errno != 0) return absl::StrCat("lost ", exit.rank, " ", exit.lost_errno, "\n");
  return absl::StrCat("exit ", exit.rank, " ", exit.wait_status, "\n");
}

ShimExits ParseShimExits(absl::string_view text) {
  ShimExits parsed;
  // Only whole lines: the last one may be half written.
  const size_t last_newline = text.rfind('\n');
  if (last_newline == absl::string_view::npos) return parsed;
  for (absl::string_view line : absl::StrSplit(text.substr(0, last_newline), '\n')) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    if (line == absl::StripSuffix(kShimFencedLine, "\n")) {
      parsed.fenced = true;
    } else if (line == absl::StripSuffix(kShimEndLine, "\n")) {
      parsed.ended = true;
    } else if (fields.size() == 3 && fields[0] == "shim") {
      if (!absl::SimpleAtoi(fields[1], &parsed.shim_pid) || !absl::SimpleAtoi(fields[2], &parsed.shim_start)) {
        parsed.shim_pid = 0;
      }
    } else if (fields.size() == 4 && fields[0] == "group") {
      ShimExits::Group g;
      if (absl::SimpleAtoi(fields[1], &g.rank) && absl::SimpleAtoi(fields[2], &g.pgid) &&
          absl::SimpleAtoi(fields[3], &g.start_time) && g.pgid > 1) {
        parsed.groups.push_back(g);
      }
    } else if (fields.size() == 3 && (fields[0] == "exit" || fields[0] == "lost")) {
      RankExit exit;
      int value = 0;
      if (!absl::SimpleAtoi(fields[1], &exit.rank) || !absl::SimpleAtoi(fields[2], &value)) continue;
      (fields[0] == "exit" ? exit.wait_status : exit.lost_errno) = value;
      if (fields[0] == "lost" && value == 0) continue;
      parsed.exits.push_back(exit);
    }
  }
  return parsed;
}

}  // namespace gpusched::agent
