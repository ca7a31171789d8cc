#pragma once

#include <nghttp2/nghttp2.h>

#include "absl/strings/string_view.h"

namespace gpusched::h2 {

// A header for nghttp2_submit_request; nghttp2 copies the bytes.
inline nghttp2_nv Header(absl::string_view name, absl::string_view value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

}  // namespace gpusched::h2
