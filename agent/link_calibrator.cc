#include "agent/link_calibrator.h"

#include <utility>

#include "agent/nccl/link_calibration.h"
#include "common/proto_time.h"
#include "common/threads/mutex.h"

namespace gpusched::agent {

LinkCalibrator::LinkCalibrator(std::shared_ptr<BandwidthProbe> probe, std::string why_unavailable,
                               topology::NodeTopology topology, ResultFn on_result, const Clock& clock)
    : probe_(std::move(probe)),
      why_unavailable_(std::move(why_unavailable)),
      topology_(std::move(topology)),
      on_result_(std::move(on_result)),
      clock_(clock) {}

LinkCalibrator::~LinkCalibrator() {
  std::thread thread;
  {
    MutexLock lock(&mu_);
    thread = std::move(thread_);
  }
  if (thread.joinable()) thread.join();
}

bool LinkCalibrator::Start() {
  std::thread previous;
  {
    MutexLock lock(&mu_);
    if (running_ || stop_) return false;
    running_ = true;
    previous = std::move(thread_);
  }
  // The previous run has finished (running_ was false); reap its thread.
  if (previous.joinable()) previous.join();
  MutexLock lock(&mu_);
  thread_ = std::thread([this] { Run(); });
  return true;
}

void LinkCalibrator::Stop() { stop_ = true; }

LinkCalibrator::State LinkCalibrator::state() const {
  MutexLock lock(&mu_);
  return State{running_, last_};
}

void LinkCalibrator::Run() {
  v1::NodeProbe result;
  if (probe_ == nullptr) {
    result.set_unavailable(why_unavailable_);
  } else {
    result = CalibrateLinks(*probe_, topology_, &stop_);
  }
  *result.mutable_time() = ToProtoTime(clock_.Now());
  {
    MutexLock lock(&mu_);
    running_ = false;
    // Cut short, it says nothing about the links.
    if (stop_) return;
    last_ = result;
  }
  on_result_(result);
}

}  // namespace gpusched::agent
