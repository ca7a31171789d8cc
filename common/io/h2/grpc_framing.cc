#include "common/io/h2/grpc_framing.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpusched::h2 {

std::string FramedMessage(absl::string_view message) {
  std::string framed;
  framed.reserve(5 + message.size());
  framed.push_back('\0');  // not compressed
  const uint32_t length = static_cast<uint32_t>(message.size());
  for (int shift = 24; shift >= 0; shift -= 8) framed.push_back(static_cast<char>((length >> shift) & 0xff));
  framed.append(message.data(), message.size());
  return framed;
}

absl::StatusOr<std::optional<std::string>> MessageSplitter::Next() {
  if (pending() < 5) return std::nullopt;
  const char* head = buffer_.data() + taken_;
  if (head[0] != '\0') return absl::UnavailableError("a compressed gRPC message, though none was asked for");
  uint32_t size = 0;
  for (int i = 1; i <= 4; ++i) size = (size << 8) | static_cast<uint8_t>(head[i]);
  if (size > max_message_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a gRPC message of ", size, " bytes, over the limit of ", max_message_bytes_));
  }
  if (pending() < 5 + static_cast<size_t>(size)) return std::nullopt;
  std::string message(head + 5, size);
  taken_ += 5 + size;
  // Keep the buffer from growing with what was handed out.
  if (taken_ == buffer_.size()) {
    buffer_.clear();
    taken_ = 0;
  } else if (taken_ > (1u << 16) && taken_ * 2 > buffer_.size()) {
    buffer_.erase(0, taken_);
    taken_ = 0;
  }
  return message;
}

std::string GrpcTimeout(absl::Duration left) {
  constexpr int64_t kMaxValue = 99'999'999;
  const int64_t ms = std::max<int64_t>(1, absl::ToInt64Milliseconds(left));
  if (ms <= kMaxValue) return absl::StrCat(ms, "m");
  const int64_t seconds = absl::ToInt64Seconds(left);
  if (seconds <= kMaxValue) return absl::StrCat(seconds, "S");
  return absl::StrCat(std::min(kMaxValue, absl::ToInt64Hours(left)), "H");
}

std::string PercentDecoded(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    int value = 0;
    if (text[i] == '%' && i + 2 < text.size() && absl::SimpleHexAtoi(text.substr(i + 1, 2), &value)) {
      out.push_back(static_cast<char>(value));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::optional<absl::Status> CallStatus(const std::map<std::string, std::string>& headers) {
  const auto grpc_status = headers.find("grpc-status");
  int code = 0;
  if (grpc_status == headers.end() || !absl::SimpleAtoi(grpc_status->second, &code) || code < 0 || code > 16) {
    return std::nullopt;
  }
  const auto message = headers.find("grpc-message");
  return absl::Status(static_cast<absl::StatusCode>(code),
                      message == headers.end() ? "" : PercentDecoded(message->second));
}

absl::Status NotGrpcError(const std::map<std::string, std::string>& headers) {
  const auto http = headers.find(":status");
  return absl::UnavailableError(
      absl::StrCat("the answer was not gRPC (HTTP status ", http == headers.end() ? "none" : http->second, ")"));
}

std::map<std::string, std::string> CallMetadata(const std::map<std::string, std::string>& headers) {
  std::map<std::string, std::string> metadata;
  for (const auto& [name, value] : headers) {
    if (!absl::StartsWith(name, ":") && name != "grpc-status" && name != "grpc-message") metadata[name] = value;
  }
  return metadata;
}

}  // namespace gpusched::h2
