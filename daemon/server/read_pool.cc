#include "daemon/server/read_pool.h"

#include "daemon/store/sqlite_job_reader.h"

namespace gpusched::server {

absl::StatusOr<std::unique_ptr<ReadPool>> ReadPool::Open(const std::string& db_path, int threads) {
  std::unique_ptr<ReadPool> pool(new ReadPool());
  for (int i = 0; i < threads; ++i) {
    auto reader = store::SqliteJobReader::Open(db_path);
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
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void ReadPool::Post(Read read) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(read));
  }
  wake_.notify_one();
}

void ReadPool::Run(store::JobReader& reader) {
  while (true) {
    Read read;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;
      read = std::move(queue_.front());
      queue_.pop_front();
    }
    read(reader);
  }
}

}  // namespace gpusched::server
