#include "common/io/logging/grpc_logging.h"

#include <grpc/support/log.h>

#include <cstring>
#include <memory>
#include <string_view>

#include "common/io/logging/logging.h"

namespace gpusched {
namespace {

// Never freed: gRPC's threads may still log while statics are destroyed.
std::shared_ptr<spdlog::logger>* grpc_logger = nullptr;
std::string* note = nullptr;

void ToSpdlog(gpr_log_func_args* args) {
  if (grpc_logger == nullptr || args->message == nullptr) return;
  spdlog::logger& log = **grpc_logger;
  std::string_view message = args->message;
  const char* slash = args->file != nullptr ? std::strrchr(args->file, '/') : nullptr;
  const char* file = slash != nullptr ? slash + 1 : (args->file != nullptr ? args->file : "?");
  // "Handshake failed with fatal error SSL_ERROR_SSL: error:0A000086:SSL routines::certificate verify failed."
  constexpr std::string_view kHandshakeFailed = "Handshake failed with fatal error ";
  if (message.substr(0, kHandshakeFailed.size()) == kHandshakeFailed) {
    message.remove_prefix(kHandshakeFailed.size());
    if (!message.empty() && message.back() == '.') message.remove_suffix(1);
    if (note->empty()) {
      log.warn("TLS handshake failed: {}", message);
    } else {
      log.warn("TLS handshake failed: {}: {}", message, *note);
    }
    return;
  }
  const spdlog::level::level_enum level = args->severity == GPR_LOG_SEVERITY_ERROR  ? spdlog::level::err
                                          : args->severity == GPR_LOG_SEVERITY_INFO ? spdlog::level::info
                                                                                    : spdlog::level::debug;
  log.log(level, "{} ({}:{})", message, file, args->line);
}

}  // namespace

void RouteGrpcLogsToSpdlog(std::string handshake_note) {
  if (grpc_logger == nullptr) grpc_logger = new std::shared_ptr<spdlog::logger>(GetLogger("grpc"));
  if (note == nullptr) note = new std::string;
  *note = std::move(handshake_note);
  gpr_set_log_function(ToSpdlog);
}

}  // namespace gpusched
