#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpusched::testing {

// A real PostgreSQL server of Debian's packages, made for one test in a
// directory of its own (initdb, then pg_ctl) and stopped at the end. It
// listens on 127.0.0.1 and on a Unix socket in that directory, trusts
// every local connection, and runs as the `postgres` user when the test
// runs as root (the server refuses root).
class PostgresServer {
 public:
  // NotFound (the caller skips) when PostgreSQL's server programs are not
  // installed; any other error means they are and failed.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(const std::string& dir);
  ~PostgresServer();  // an immediate stop
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // A new, empty database; its URL (over TCP on loopback).
  absl::StatusOr<std::string> CreateDatabase(const std::string& name);
  std::string Url(const std::string& database) const;
  // Stops the server (fast: sessions are ended) and starts it again on the
  // same port and data.
  absl::Status Restart();
  int port() const { return port_; }
  std::string Log() const;

 private:
  PostgresServer() = default;
  absl::Status Ctl(const std::string& action, const std::string& mode);

  std::string bin_dir_;
  std::string dir_;
  std::string data_dir_;
  int port_ = 0;
  bool as_postgres_ = false;
  bool running_ = false;
};

}  // namespace gpusched::testing
