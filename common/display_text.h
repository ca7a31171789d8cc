#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpusched {

// Names and reasons end up in tables, log lines (key=value) and operators'
// terminals: a newline forges a row or a log line, an escape sequence
// drives the terminal. Control characters are the C0 range, DEL and the C1
// range as UTF-8 encodes it (U+0080 to U+009F).
bool HasControlCharacter(absl::string_view text);

// OK, or InvalidArgument naming `field`: longer than `max_bytes`, or holding
// a control character ("spec.name: holds a control character (byte 5, 0x0a);
// names and reasons are shown in tables and terminals").
absl::Status CheckDisplayText(absl::string_view field, absl::string_view text, size_t max_bytes);

// `text` made fit for a table cell: each control character becomes a space
// and it is cut to at most `max_bytes` (never inside a UTF-8 sequence). For
// what the daemon did not get from a user it can refuse: an agent's messages.
std::string ToDisplayText(absl::string_view text, size_t max_bytes);

// What a free-text reason (a drain, a cancel) may be at most.
inline constexpr size_t kMaxReasonBytes = 1024;

}  // namespace gpusched
