#include "tests/support/postgres_server.h"

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/support/subprocess.h"

namespace gpusched::testing {
namespace {

// Debian installs the server's programs per major version.
std::string NewestBinDir() {
  std::string best;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string bin = (entry.path() / "bin").string();
    if (std::filesystem::exists(bin + "/initdb") && std::filesystem::exists(bin + "/pg_ctl") && bin > best) best = bin;
  }
  return best;
}

// A port nothing listens on now (the kernel's choice).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(const std::string& dir) {
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  server->bin_dir_ = NewestBinDir();
  if (server->bin_dir_.empty()) {
    return absl::NotFoundError("PostgreSQL's server programs are not installed (/usr/lib/postgresql/*/bin/initdb)");
  }
  server->dir_ = dir + "/pg";
  server->data_dir_ = server->dir_ + "/data";
  std::filesystem::create_directories(server->dir_);
  server->as_postgres_ = geteuid() == 0;
  if (server->as_postgres_) {
    const passwd* pg = getpwnam("postgres");
    if (pg == nullptr) return absl::FailedPreconditionError("running as root, and there is no `postgres` user");
    // The server's user must reach its directory, and own it.
    for (std::filesystem::path p = server->dir_; p != p.root_path() && p.has_parent_path(); p = p.parent_path()) {
      std::filesystem::permissions(p, std::filesystem::perms::others_exec, std::filesystem::perm_options::add);
      if (p == std::filesystem::temp_directory_path()) break;
    }
    if (chown(server->dir_.c_str(), pg->pw_uid, pg->pw_gid) != 0) {
      return absl::FailedPreconditionError(absl::StrCat("cannot give ", server->dir_, " to postgres"));
    }
  }
  std::vector<std::string> initdb = {server->bin_dir_ + "/initdb",
                                     "-D",
                                     server->data_dir_,
                                     "-U",
                                     "gpusched",
                                     "--auth=trust",
                                     "--no-sync",
                                     "-E",
                                     "UTF8",
                                     "--locale=C"};
  if (server->as_postgres_) initdb.insert(initdb.begin(), {"/usr/sbin/runuser", "-u", "postgres", "--"});
  CommandResult made = RunCommand(initdb);
  if (made.exit_code != 0) return absl::InternalError(absl::StrCat("initdb failed: ", made.out, made.err));
  server->port_ = FreePort();
  if (absl::Status s = server->Ctl("start", ""); !s.ok()) return s;
  return server;
}

PostgresServer::~PostgresServer() {
  if (running_) Ctl("stop", "immediate").IgnoreError();
}

absl::Status PostgresServer::Ctl(const std::string& action, const std::string& mode) {
  std::vector<std::string> argv = {bin_dir_ + "/pg_ctl", "-D", data_dir_, "-l", dir_ + "/server.log", "-w", "-t", "60"};
  if (!mode.empty()) argv.insert(argv.end(), {"-m", mode});
  argv.insert(argv.end(),
              {"-o", absl::StrCat("-p ", port_, " -k ", dir_, " -c listen_addresses=127.0.0.1 -c max_connections=200"),
               action});
  if (as_postgres_) argv.insert(argv.begin(), {"/usr/sbin/runuser", "-u", "postgres", "--"});
  CommandResult done = RunCommand(argv);
  if (done.exit_code != 0) {
    return absl::InternalError(absl::StrCat("pg_ctl ", action, " failed: ", done.out, done.err, "\n", Log()));
  }
  running_ = action != "stop";
  return absl::OkStatus();
}

absl::Status PostgresServer::Restart() { return Ctl("restart", "fast"); }

std::string PostgresServer::Url(const std::string& database) const {
  return absl::StrCat("postgresql://gpusched@127.0.0.1:", port_, "/", database);
}

absl::StatusOr<std::string> PostgresServer::CreateDatabase(const std::string& name) {
  PGconn* conn = PQconnectdb(Url("postgres").c_str());
  absl::Status result = absl::OkStatus();
  if (PQstatus(conn) != CONNECTION_OK) {
    result = absl::InternalError(absl::StrCat("cannot connect to the test server: ", PQerrorMessage(conn)));
  } else {
    PGresult* made = PQexec(conn, absl::StrCat("CREATE DATABASE ", name).c_str());
    if (PQresultStatus(made) != PGRES_COMMAND_OK) {
      result = absl::InternalError(absl::StrCat("CREATE DATABASE ", name, ": ", PQresultErrorMessage(made)));
    }
    PQclear(made);
  }
  PQfinish(conn);
  if (!result.ok()) return result;
  return Url(name);
}

std::string PostgresServer::Log() const { return ReadFile(dir_ + "/server.log"); }

}  // namespace gpusched::testing
