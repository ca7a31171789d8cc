#include "common/io/local_call/frame.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace gpusched::local_call {
namespace {

void PutU32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint32_t GetU32(absl::string_view bytes, size_t at) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
  return value;
}

bool IsMethodName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxMethodBytes) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

constexpr size_t kRequestHead = 8;
constexpr size_t kReplyHead = 12;
// A status message is a sentence or a few: more is not a reply of ours.
constexpr size_t kMaxStatusMessageBytes = 1 << 20;

}  // namespace

std::string EncodeRequest(absl::string_view method, absl::string_view message) {
  std::string out;
  out.reserve(kRequestHead + method.size() + message.size());
  PutU32(out, static_cast<uint32_t>(method.size()));
  PutU32(out, static_cast<uint32_t>(message.size()));
  out.append(method.data(), method.size());
  out.append(message.data(), message.size());
  return out;
}

std::string EncodeReply(const absl::Status& status, absl::string_view message) {
  if (!status.ok()) message = {};
  std::string out;
  out.reserve(kReplyHead + status.message().size() + message.size());
  PutU32(out, static_cast<uint32_t>(status.code()));
  PutU32(out, static_cast<uint32_t>(status.message().size()));
  PutU32(out, static_cast<uint32_t>(message.size()));
  out.append(status.message().data(), status.message().size());
  out.append(message.data(), message.size());
  return out;
}

absl::StatusOr<std::optional<Request>> TakeRequest(std::string& buffer) {
  if (buffer.size() < kRequestHead) return std::nullopt;
  const uint32_t method_bytes = GetU32(buffer, 0);
  const uint32_t message_bytes = GetU32(buffer, 4);
  if (method_bytes == 0 || method_bytes > kMaxMethodBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("local call: a method name of ", method_bytes, " bytes (1 to ", kMaxMethodBytes, " are taken)"));
  }
  if (message_bytes > kMaxRequestBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("local call: a request of ", message_bytes, " bytes is over the ", kMaxRequestBytes, " taken"));
  }
  const size_t whole = kRequestHead + method_bytes + message_bytes;
  Request request;
  request.method = buffer.substr(kRequestHead, std::min<size_t>(method_bytes, buffer.size() - kRequestHead));
  if (!IsMethodName(request.method) && request.method.size() == method_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("local call: \"", absl::CHexEscape(request.method), "\" is not a method name"));
  }
  if (buffer.size() < whole) return std::nullopt;
  request.message = buffer.substr(kRequestHead + method_bytes, message_bytes);
  buffer.erase(0, whole);
  return request;
}

absl::StatusOr<std::optional<Reply>> TakeReply(std::string& buffer, size_t max_message_bytes) {
  if (buffer.size() < kReplyHead) return std::nullopt;
  const uint32_t code = GetU32(buffer, 0);
  const uint32_t status_bytes = GetU32(buffer, 4);
  const uint32_t message_bytes = GetU32(buffer, 8);
  if (code > static_cast<uint32_t>(absl::StatusCode::kUnauthenticated)) {
    return absl::InvalidArgumentError(absl::StrCat("local call: a reply with status code ", code, ", which is none"));
  }
  if (status_bytes > kMaxStatusMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat("local call: a status message of ", status_bytes, " bytes"));
  }
  if (message_bytes > max_message_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("local call: a reply of ", message_bytes, " bytes is over the ", max_message_bytes, " taken"));
  }
  if (code != 0 && message_bytes != 0) {
    return absl::InvalidArgumentError("local call: a failed call's reply carries a message");
  }
  const size_t whole = kReplyHead + status_bytes + message_bytes;
  if (buffer.size() < whole) return std::nullopt;
  Reply reply;
  if (code != 0) {
    reply.status = absl::Status(static_cast<absl::StatusCode>(code), buffer.substr(kReplyHead, status_bytes));
  }
  reply.message = buffer.substr(kReplyHead + status_bytes, message_bytes);
  buffer.erase(0, whole);
  return reply;
}

}  // namespace gpusched::local_call
