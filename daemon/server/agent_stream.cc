#include "daemon/server/agent_stream.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "common/io/logging/logging.h"
#include "common/threads/mutex.h"
#include "daemon/core/node_validator.h"
#include "daemon/server/grpc_status.h"

namespace gpusched::server {

// What the scheduler thread holds: outlives the stream, and goes quiet once
// the stream is done.
class AgentStream::Channel final : public AgentChannel {
 public:
  explicit Channel(AgentStream* stream) : stream_(stream) {}
  void Send(const v1::DaemonMessage& message) override {
    MutexLock lock(&mu_);
    if (stream_ != nullptr) stream_->Send(message);
  }
  void Close(const std::string& why) override { End(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, why)); }
  void End(const grpc::Status& status) {
    MutexLock lock(&mu_);
    if (stream_ == nullptr) return;
    MutexLock stream_lock(&stream_->mu_);
    stream_->FinishOnce(status);
  }
  bool open() const override {
    MutexLock lock(&mu_);
    if (stream_ == nullptr) return false;
    MutexLock stream_lock(&stream_->mu_);
    return !stream_->finished_ && !stream_->reads_done_;
  }
  void Detach() {
    MutexLock lock(&mu_);
    stream_ = nullptr;
  }
  // Set by the scheduler thread once it has taken the stream's registration:
  // until then (and for a second agent it refuses) the stream speaks for no
  // node's sessions.
  void SetHoldsNode() { holds_node_.store(true, std::memory_order_release); }
  bool holds_node() const { return holds_node_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> holds_node_{false};
  mutable Mutex mu_;
  AgentStream* stream_ ABSL_GUARDED_BY(mu_);
};

namespace {

// Whether `channel` is the connection node `node` registered last: what any
// other stream says about the node (a refused second agent) is not heard.
bool HoldsNode(const LoopContext& ctx, const std::string& node, const std::shared_ptr<AgentChannel>& channel) {
  auto it = ctx.agents.find(node);
  return it != ctx.agents.end() && it->second.channel == channel;
}

// An agent_instance as it may be shown: a fingerprint that tells two agents
// apart in a message, never the token, which anyone shown could replay to
// pass for the connected agent.
std::string Shown(const std::string& instance) {
  if (instance.empty()) return "without an instance token";
  return absl::StrCat("#", absl::Hex(std::hash<std::string>{}(instance)&0xffffffff, absl::kZeroPad8));
}

}  // namespace

AgentStream::AgentStream(SchedulerLoop& loop, SessionRelay& sessions, std::string peer, Caller caller)
    : loop_(loop),
      sessions_(sessions),
      peer_(std::move(peer)),
      caller_(std::move(caller)),
      channel_(std::make_shared<Channel>(this)) {
  StartRead(&in_);
}

void AgentStream::OnReadDone(bool ok) {
  if (!ok) {
    MutexLock lock(&mu_);
    reads_done_ = true;
    if (!writing_) FinishOnce(grpc::Status::OK);
    return;
  }
  Dispatch(in_);
  MutexLock lock(&mu_);
  if (!finished_) StartRead(&in_);
}

absl::Status AgentStream::MayRegisterAs(const std::string& name) const {
  switch (caller_.proof) {
    case CallerProof::kNodeCertificate:
      if (caller_.node == name) return absl::OkStatus();
      return absl::PermissionDeniedError(
          absl::StrCat("this agent's certificate is for node ", caller_.node, ", not ", name));
    case CallerProof::kTrustedTcp: return absl::OkStatus();
    case CallerProof::kUnixSocket:
      if (caller_.uid == 0) return absl::OkStatus();
      return absl::PermissionDeniedError(
          absl::StrCat(caller_.Describe(), " may not register a node: only root on this host may"));
    case CallerProof::kUserCertificate:
      return absl::PermissionDeniedError(absl::StrCat(
          "a user's certificate (", caller_.user,
          ") cannot register a node: agents need a node certificate (CN=", kNodeCertificatePrefix, name, ")"));
    case CallerProof::kNone: break;
  }
  return absl::UnauthenticatedError(
      absl::StrCat("registering node ", name, " needs a client certificate with CN=", kNodeCertificatePrefix, name,
                   " signed by the daemon's tls_client_ca (or allow_unauthenticated_tcp on a single-user setup)"));
}

void AgentStream::Refuse(const absl::Status& why) {
  GetLogger("daemon")->warn("agent at {} refused: {}", peer_, std::string(why.message()));
  MutexLock lock(&mu_);
  FinishOnce(ToGrpcStatus(why));
}

void AgentStream::Dispatch(const v1::AgentMessage& message) {
  if (message.has_register_()) {
    const std::string& name = message.register_().node().name();
    absl::Status valid = core::ValidateNodeInfo(message.register_().node());
    if (!valid.ok()) return Refuse(absl::InvalidArgumentError(absl::StrCat("register.", valid.message())));
    if (!node_.empty() && name != node_) {
      return Refuse(absl::InvalidArgumentError(absl::StrCat("this stream belongs to node ", node_, ", not ", name)));
    }
    if (absl::Status may = MayRegisterAs(name); !may.ok()) return Refuse(may);
    node_ = name;
    GetLogger("daemon")->info("agent {} registered from {} with {} GPUs", name, peer_,
                              message.register_().node().gpus_size());
    v1::RegisterNode registration = message.register_();
    if (absl::Status probe = core::ValidateNodeProbe(registration.node().probe(), registration.node().gpus_size(),
                                                     "register.node.probe");
        !probe.ok()) {
      // The agent is at fault, not its links: the node keeps the figures the daemon has.
      GetLogger("daemon")->warn("agent {}: ignoring the link calibration it registered with: {}", name,
                                std::string(probe.message()));
      registration.mutable_node()->clear_probe();
    }
    loop_.Post([registration = std::move(registration), channel = channel_, peer = peer_](LoopContext& ctx) {
      const std::string& node = registration.node().name();
      const std::string& instance = registration.agent_instance();
      if (auto it = ctx.agents.find(node);
          it != ctx.agents.end() && it->second.channel != channel && it->second.channel->open()) {
        // Two agents under one name: the connected one keeps the node, and
        // neither is told the other's launches.
        if (instance.empty() || instance != it->second.instance) {
          const std::string why = absl::StrCat(
              "node ", node, " is already connected from ", it->second.peer, " (agent ", Shown(it->second.instance),
              "); this registration from ", peer, " (agent ", Shown(instance),
              ") is refused: two hosts with one node name? (it is taken again once the first disconnects)");
          GetLogger("daemon")->warn("{}", why);
          channel->End(grpc::Status(grpc::StatusCode::ALREADY_EXISTS, why));
          return;
        }
        // The same agent again: its old stream is stale (a half-open connection).
        it->second.channel->Close("replaced by a newer connection of the same agent");
      }
      v1::DaemonMessage ack;
      ctx.core.AgentRegistered(registration, ctx.fx, *ack.mutable_register_ack());
      ctx.agents[node] = ConnectedAgent{channel, peer, instance};
      channel->SetHoldsNode();
      // The ack goes first so the agent knows it is registered before any launch.
      ctx.fx.agent_commands.insert(ctx.fx.agent_commands.begin(), core::AgentCommand{node, std::move(ack)});
    });
    return;
  }
  if (node_.empty()) {
    MutexLock lock(&mu_);
    FinishOnce(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "send RegisterNode first"));
    return;
  }
  if (message.has_heartbeat()) {
    loop_.Post([node = node_, channel = channel_, seq = message.heartbeat().seq()](LoopContext& ctx) {
      if (!HoldsNode(ctx, node, channel)) return;
      // A stream that outlived a partition: its node was declared DOWN and
      // its gangs stopped elsewhere. Registering again reconciles its jobs.
      if (!ctx.core.AgentHeartbeat(node, ctx.fx)) {
        GetLogger("daemon")->info("agent {} is back after its node went DOWN: asking it to register again", node);
        channel->Close(absl::StrCat("node ", node, " was declared DOWN while silent; register again"));
        return;
      }
      // Renews the agent's lease (RegisterAck.fence_after_ms). It states no
      // change of state, so it need not wait for the batch's commit.
      v1::DaemonMessage ack;
      ack.mutable_heartbeat_ack()->set_seq(seq);
      channel->Send(ack);
    });
  } else if (message.has_job_update()) {
    loop_.Post([node = node_, channel = channel_, update = message.job_update()](LoopContext& ctx) {
      if (!HoldsNode(ctx, node, channel)) return;
      ctx.core.JobUpdate(node, update, ctx.fx);
    });
  } else if (message.has_session_output()) {
    // Not the scheduler's business: straight to the session's client, from
    // the stream that holds the node only.
    if (channel_->holds_node()) sessions_.Deliver(node_, message.session_output());
  } else if (message.has_probe_result()) {
    loop_.Post([node = node_, channel = channel_, probe = message.probe_result()](LoopContext& ctx) {
      if (!HoldsNode(ctx, node, channel)) return;
      const core::NodeSlot* slot = ctx.core.cluster().Find(node);
      if (slot == nullptr) return;
      if (absl::Status valid = core::ValidateNodeProbe(probe, slot->gpu_count, "probe_result"); !valid.ok()) {
        // The node keeps its last figures; the agent is at fault, not its links.
        GetLogger("daemon")->warn("agent {}: ignoring a link calibration: {}", node, std::string(valid.message()));
        return;
      }
      GetLogger("daemon")->info("agent {}: link calibration in ({} GPU pairs{}{})", node, probe.pairs_size(),
                                probe.error().empty() ? "" : ", error: ", probe.error());
      ctx.core.NodeProbed(node, probe, ctx.fx);
    });
  }
}

void AgentStream::Send(const v1::DaemonMessage& message) {
  MutexLock lock(&mu_);
  if (finished_ || reads_done_) return;
  out_.push_back(message);
  if (!writing_) {
    writing_ = true;
    StartWrite(&out_.front());
  }
}

void AgentStream::OnWriteDone(bool ok) {
  MutexLock lock(&mu_);
  out_.pop_front();
  if (!ok) out_.clear();  // the stream is broken; the read side will notice
  if (!out_.empty() && !finished_) {
    StartWrite(&out_.front());
    return;
  }
  writing_ = false;
  if (reads_done_) FinishOnce(grpc::Status::OK);
}

void AgentStream::FinishOnce(const grpc::Status& status) {
  if (finished_) return;
  finished_ = true;
  Finish(status);
}

void AgentStream::OnDone() {
  channel_->Detach();
  if (!node_.empty()) {
    GetLogger("daemon")->info("agent {} disconnected", node_);
    loop_.Post([node = node_, channel = channel_, &sessions = sessions_](LoopContext& ctx) {
      auto it = ctx.agents.find(node);
      // A reconnected agent may already have a newer stream, and a refused
      // second agent never held the node: leave the node's sessions be.
      if (it == ctx.agents.end() || it->second.channel != channel) return;
      sessions.NodeGone(node);
      ctx.agents.erase(it);
      ctx.core.AgentDisconnected(node, ctx.fx);
    });
  }
  delete this;
}

}  // namespace gpusched::server
