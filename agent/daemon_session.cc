#include "agent/daemon_session.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/io/logging/logging.h"
#include "common/io/tls/connect_failure_hint.h"
#include "common/threads/mutex.h"

namespace gpusched::agent {
namespace {

// How long Stop lets the sender flush, and the daemon close the stream after
// our half-close, before it cancels the call.
constexpr auto kFlushTimeout = std::chrono::seconds(2);
constexpr auto kCloseTimeout = std::chrono::seconds(1);

// What a message of an interactive session's output counts against
// DaemonSession::kMaxQueuedOutputBytes.
size_t OutputBytes(const v1::AgentMessage& message) {
  const v1::SessionOutput& out = message.session_output();
  return out.stdout().size() + out.stderr().size();
}

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return std::chrono::nanoseconds(absl::ToInt64Nanoseconds(d));
}

// ±20%, so that the agents of a whole cluster do not redial a restarted
// daemon in lockstep.
absl::Duration Jitter(absl::Duration d) {
  thread_local std::mt19937 rng{std::random_device{}()};
  std::uniform_real_distribution<double> factor(0.8, 1.2);
  return d * factor(rng);
}

}  // namespace

DaemonSession::DaemonSession(SessionOptions options, SessionHandler* handler)
    : options_(std::move(options)),
      handler_(handler),
      log_(GetLogger(absl::StrCat("agent/", options_.node_name))),
      replicas_(options_.daemon_address),
      heartbeat_interval_(options_.heartbeat_interval) {}

DaemonSession::~DaemonSession() { Stop(); }

void DaemonSession::Start() {
  MutexLock lock(&mu_);
  if (started_) return;
  started_ = true;
  connector_ = std::thread([this] { ConnectLoop(); });
  sender_ = std::thread([this] { SendLoop(); });
}

void DaemonSession::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_ || !started_) {
      stopping_ = true;
      return;
    }
    stopping_ = true;
  }
  cv_.SignalAll();
  {
    // The sender writes what is queued (the exits of the jobs just killed) first.
    MutexLock lock(&mu_);
    const SteadyTime give_up = std::chrono::steady_clock::now() + kFlushTimeout;
    while (!sender_done_ && cv_.WaitUntil(&mu_, give_up)) {
    }
    if (!sender_done_ && call_ != nullptr) {
      log_->warn("the daemon does not take our messages; dropping the rest");
      call_->Cancel();
    }
  }
  sender_.join();
  bool half_closed = false;
  {
    MutexLock lock(&write_mu_);
    if (stream_ != nullptr) half_closed = stream_->WritesDone();
  }
  {
    MutexLock lock(&mu_);
    const SteadyTime give_up = std::chrono::steady_clock::now() + kCloseTimeout;
    while (half_closed && !connector_done_ && cv_.WaitUntil(&mu_, give_up)) {
    }
    if (!(half_closed && connector_done_) && call_ != nullptr) call_->Cancel();
  }
  connector_.join();
}

void DaemonSession::Send(v1::AgentMessage message) {
  {
    MutexLock lock(&mu_);
    if (!connected_) {
      // Formatted only when shown: text format builds protobuf's descriptor
      // pool and pages in its code, for a line nobody reads.
      if (log_->should_log(spdlog::level::debug)) {
        log_->debug("not registered, not sending {}", message.ShortDebugString());
      }
      return;
    }
    if (message.has_session_output()) {
      while (connected_ && !stopping_ && queued_output_bytes_ >= kMaxQueuedOutputBytes) cv_.Wait(&mu_);
      if (!connected_) return;
      queued_output_bytes_ += OutputBytes(message);
    }
    outbox_.push_back(std::move(message));
  }
  cv_.SignalAll();
}

bool DaemonSession::connected() const {
  MutexLock lock(&mu_);
  return connected_;
}

void DaemonSession::ConnectLoop() {
  absl::Duration backoff = options_.initial_backoff;
  while (true) {
    {
      MutexLock lock(&mu_);
      if (stopping_) break;
    }
    const bool registered = RunConnection();
    backoff = registered || redirected_ ? options_.initial_backoff : std::min(backoff * 2, options_.max_backoff);
    MutexLock lock(&mu_);
    const SteadyTime redial = std::chrono::steady_clock::now() + ToChrono(Jitter(backoff));
    while (!stopping_ && cv_.WaitUntil(&mu_, redial)) {
    }
    if (stopping_) break;
  }
  MutexLock lock(&mu_);
  connector_done_ = true;
  cv_.SignalAll();
}

bool DaemonSession::RunConnection() {
  const std::string address = replicas_.current();
  Stream stream({.target = address,
                 .tls = options_.tls,
                 .method = "/gpusched.v1.AgentGateway/Connect",
                 .user_agent = "gpusched-agent",
                 .connect_timeout = options_.register_timeout});
  {
    MutexLock lock(&mu_);
    if (stopping_) return false;
    call_ = &stream;
    register_deadline_ = std::chrono::steady_clock::now() + ToChrono(options_.register_timeout);
  }
  cv_.SignalAll();  // the sender watches the registration deadline

  v1::AgentMessage hello;
  *hello.mutable_register_() = handler_->MakeRegistration();
  v1::DaemonMessage first;
  bool registered = false;
  const SteadyTime hello_sent = std::chrono::steady_clock::now();
  if (stream.Write(hello.SerializeAsString()) && h2::ReadMessage(stream, &first)) {
    if (first.has_register_ack()) {
      registered = true;
      OnAck(first.register_ack(), &stream, hello_sent);
      v1::DaemonMessage message;
      while (h2::ReadMessage(stream, &message)) {
        if (message.has_register_ack()) {
          log_->warn("ignoring a second RegisterAck on the same stream");
          continue;
        }
        if (message.has_heartbeat_ack()) {
          OnHeartbeatAck(message.heartbeat_ack().seq());
          continue;
        }
        handler_->OnMessage(message);
      }
    } else {
      log_->error("the daemon answered our registration with {}; reconnecting", first.ShortDebugString());
      stream.Cancel();
    }
  }
  {
    MutexLock write_lock(&write_mu_);
    MutexLock lock(&mu_);
    stream_ = nullptr;
    connected_ = false;
    outbox_.clear();
    queued_output_bytes_ = 0;
    register_deadline_ = SteadyTime::max();
    next_heartbeat_ = SteadyTime::max();
  }
  cv_.SignalAll();  // output waiting for room is dropped now
  const Stream::End end = stream.Finish();
  const absl::Status& status = end.status;
  // Another replica next time: the one a standby named, else the next.
  redirected_ = replicas_.size() > 1 && replicas_.FailedWith(end.metadata);
  bool stopping;
  int failures;
  bool new_reason;
  {
    MutexLock lock(&mu_);
    call_ = nullptr;
    stopping = stopping_;
    failures = registered ? 0 : ++failures_;
    // The code alone does not tell reasons apart: a daemon that cannot be
    // reached and one that refuses for now both say UNAVAILABLE.
    std::string failure = registered ? "" : status.ToString();
    new_reason = !registered && failure != last_failure_;
    last_failure_ = std::move(failure);
  }
  if (stopping) {
    log_->info("disconnected from the daemon at {}", address);
  } else if (registered) {
    log_->warn("lost the connection to the daemon at {} ({}); jobs keep running, reconnecting", address,
               std::string(status.message()));
  } else if (new_reason || failures % 20 == 0) {
    // Every attempt at debug level, at warn only when the reason changes and
    // now and then: a node whose daemon is down for an hour should not fill
    // its log with this.
    const std::string hint = tls::HintFor(end.failure);
    log_->warn("cannot register with the daemon at {} ({}){}; retrying (attempt {})", address,
               std::string(status.message()), hint.empty() ? "" : ": " + hint, failures);
  } else {
    log_->debug("cannot register with the daemon at {} ({}), attempt {}", address, std::string(status.message()),
                failures);
  }
  return registered;
}

void DaemonSession::OnHeartbeatAck(int64_t seq) {
  absl::Duration lease;
  {
    MutexLock lock(&mu_);
    while (!beats_sent_.empty() && beats_sent_.front().first < seq) beats_sent_.pop_front();
    if (beats_sent_.empty() || beats_sent_.front().first != seq) return;  // a stale ack, or an old stream's
    lease_from_ = beats_sent_.front().second;  // later than any earlier one: beats go out in order
    lease_expired_ = false;
    beats_sent_.pop_front();
    lease = fence_after_;
  }
  handler_->OnLeaseRenewed(lease);
}

DaemonSession::SteadyTime DaemonSession::LeaseEndLocked() const {
  if (fence_after_ <= absl::ZeroDuration() || lease_from_ == SteadyTime::max() || lease_expired_) {
    return SteadyTime::max();
  }
  return lease_from_ + ToChrono(fence_after_);
}

void DaemonSession::OnAck(const v1::RegisterAck& ack, Stream* stream, SteadyTime registration_sent) {
  absl::Duration interval;
  {
    MutexLock write_lock(&write_mu_);
    MutexLock lock(&mu_);
    stream_ = stream;
    connected_ = true;
    fence_after_ = absl::Milliseconds(ack.fence_after_ms());
    lease_from_ = registration_sent;
    lease_expired_ = false;
    beats_sent_.clear();
    failures_ = 0;
    register_deadline_ = SteadyTime::max();
    if (ack.heartbeat_interval_ms() > 0) heartbeat_interval_ = absl::Milliseconds(ack.heartbeat_interval_ms());
    interval = heartbeat_interval_;
    next_heartbeat_ = std::chrono::steady_clock::now() + ToChrono(interval);
    outbox_.clear();
    queued_output_bytes_ = 0;
  }
  cv_.SignalAll();
  log_->info("registered with the daemon at {} as node {} (heartbeat every {})", options_.daemon_address,
             ack.node().empty() ? options_.node_name : ack.node(), absl::FormatDuration(interval));
  handler_->OnLeaseRenewed(absl::Milliseconds(ack.fence_after_ms()));
  // Only now, with connected_ set: a report produced from here on is either
  // queued by Send or already in what the handler returns.
  for (v1::AgentMessage& message : handler_->OnRegistered(ack)) Send(std::move(message));
}

void DaemonSession::SendLoop() {
  MutexLock lock(&mu_);
  while (true) {
    if (stopping_ && (!connected_ || outbox_.empty())) break;
    const SteadyTime now = std::chrono::steady_clock::now();
    // The lease and the heartbeat before the outbox: a session printing
    // without pause keeps the outbox full, and must not starve either.
    if (const SteadyTime lease_end = LeaseEndLocked(); now >= lease_end) {
      lease_expired_ = true;
      const absl::Duration silent = absl::FromChrono(now - lease_from_);
      const absl::Duration lease = fence_after_;
      // The stream is stale: a launch still in flight on it must not start
      // what the daemon may be placing elsewhere. A new registration tells
      // the daemon what was fenced.
      if (call_ != nullptr) call_->Cancel();
      mu_.Unlock();
      log_->error("no heartbeat acknowledged by the daemon at {} for {} (the lease is {}): killing this node's jobs",
                  options_.daemon_address, absl::FormatDuration(absl::Trunc(silent, absl::Milliseconds(1))),
                  absl::FormatDuration(lease));
      handler_->OnLeaseExpired(silent);
      mu_.Lock();
      continue;
    }
    if (connected_ && now >= next_heartbeat_) {
      v1::AgentMessage beat;
      beat.mutable_heartbeat()->set_seq(++heartbeat_seq_);
      beats_sent_.emplace_back(heartbeat_seq_, now);
      if (beats_sent_.size() > 64) beats_sent_.pop_front();
      next_heartbeat_ = now + ToChrono(heartbeat_interval_);
      mu_.Unlock();
      WriteToStream(beat);
      mu_.Lock();
      continue;
    }
    if (connected_ && !outbox_.empty()) {
      v1::AgentMessage message = std::move(outbox_.front());
      outbox_.pop_front();
      if (message.has_session_output()) {
        queued_output_bytes_ -= OutputBytes(message);
        cv_.SignalAll();
      }
      mu_.Unlock();
      WriteToStream(message);
      mu_.Lock();
      continue;
    }
    if (!connected_ && call_ != nullptr && now >= register_deadline_) {
      log_->warn("the daemon at {} took the stream but did not answer the registration in {}; redialing",
                 options_.daemon_address, absl::FormatDuration(options_.register_timeout));
      call_->Cancel();
      register_deadline_ = SteadyTime::max();
    }
    SteadyTime wake =
        std::min({connected_ ? next_heartbeat_ : register_deadline_, now + std::chrono::seconds(1), LeaseEndLocked()});
    cv_.WaitUntil(&mu_, wake);
  }
  sender_done_ = true;
  cv_.SignalAll();
}

bool DaemonSession::WriteToStream(const v1::AgentMessage& message) {
  MutexLock lock(&write_mu_);
  if (stream_ == nullptr) return false;
  if (!stream_->Write(message.SerializeAsString())) {
    // The reader sees the same broken stream and reconnects.
    if (log_->should_log(spdlog::level::debug)) {
      log_->debug("write failed, the stream is gone: {}", message.ShortDebugString());
    }
    return false;
  }
  return true;
}

}  // namespace gpusched::agent
