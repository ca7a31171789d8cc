#include "daemon/server/read_pool.h"

#include "common/io/logging/logging.h"
#include "common/threads/mutex.h"

namespace gpusched::server {

absl::StatusOr<std::unique_ptr<ReadPool>> ReadPool::Open(const OpenReader& open_reader, int threads) {
  std::unique_ptr<ReadPool> pool(new ReadPool());
  for (int i = 0; i < threads; ++i) {
    auto reader = open_reader();
    if (!reader.ok()) return reader.status();
    pool->readers_.push_back(std::move(*reader));
  }
  for (auto& reader : pool->readers_) {
    pool->threads_.emplace_back([p = pool.get(), r = reader.get()] { p->Run(*r); });
  }
  return pool;
}

ReadPool::~ReadPool() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.SignalAll();
  for (auto& t : threads_) t.join();
}

void ReadPool::Post(Read read) {
  {
    MutexLock lock(&mu_);
    queue_.push_back({std::move(read), std::chrono::steady_clock::now()});
  }
  wake_.Signal();
}

void ReadPool::Run(store::JobReader& reader) {
  while (true) {
    Queued next;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stopping_) wake_.Wait(&mu_);
      if (queue_.empty()) return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    const auto started = std::chrono::steady_clock::now();
    next.read(reader);
    const auto finished = std::chrono::steady_clock::now();
    if (finished - next.posted >= kSlowRead) {
      static const std::shared_ptr<spdlog::logger> log = GetLogger("daemon");
      using std::chrono::duration_cast;
      using std::chrono::milliseconds;
      log->warn("slow read: queued {} ms, ran {} ms", duration_cast<milliseconds>(started - next.posted).count(),
                duration_cast<milliseconds>(finished - started).count());
    }
  }
}

}  // namespace gpusched::server
