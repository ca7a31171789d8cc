#pragma once

// A small XML element reader for tests: enough to read NCCL topology files
// (ours and the real ones in shared/fixtures/nccl-topo) back into a tree and
// compare structure. Elements, attributes (single or double quotes), the five
// predefined entities and numeric character references, comments, an
// optional <?xml ...?> prolog. Text between elements must be whitespace;
// DOCTYPE, CDATA and processing instructions inside are rejected.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusched::testing {

struct XmlNode {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<XmlNode> children;

  const std::string* Attr(std::string_view key) const {
    for (const auto& [k, v] : attributes) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  std::string AttrOr(std::string_view key, std::string fallback = "") const {
    const std::string* v = Attr(key);
    return v != nullptr ? *v : fallback;
  }
};

struct XmlReadResult {
  std::optional<XmlNode> root;
  std::string error;  // set when root is empty
};

namespace xml_reader_internal {

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  XmlReadResult Read() {
    XmlReadResult r;
    SkipMisc();
    if (Starts("<?xml")) {
      size_t end = s_.find("?>", pos_);
      if (end == std::string_view::npos) return Fail("unterminated <?xml");
      pos_ = end + 2;
      SkipMisc();
    }
    if (!ok_) return Fail(error_);
    if (!Starts("<")) return Fail("expected the root element");
    XmlNode root;
    if (!Element(&root)) return Fail(error_);
    SkipMisc();
    if (!ok_) return Fail(error_);
    if (pos_ != s_.size()) return Fail("text after the root element");
    r.root = std::move(root);
    return r;
  }

 private:
  XmlReadResult Fail(std::string why) {
    XmlReadResult r;
    r.error = why + " at offset " + std::to_string(pos_);
    return r;
  }
  bool Err(std::string why) {
    if (ok_) error_ = std::move(why);
    ok_ = false;
    return false;
  }
  bool Starts(std::string_view p) const { return s_.substr(pos_, p.size()) == p; }
  static bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  static bool IsNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.' || c == ':';
  }
  void SkipSpace() {
    while (pos_ < s_.size() && IsSpace(s_[pos_])) ++pos_;
  }
  // Whitespace and comments.
  void SkipMisc() {
    for (;;) {
      SkipSpace();
      if (!Starts("<!--")) return;
      size_t end = s_.find("-->", pos_ + 4);
      if (end == std::string_view::npos) {
        Err("unterminated comment");
        return;
      }
      pos_ = end + 3;
    }
  }
  bool Name(std::string* out) {
    size_t start = pos_;
    while (pos_ < s_.size() && IsNameChar(s_[pos_])) ++pos_;
    if (pos_ == start) return Err("expected a name");
    *out = std::string(s_.substr(start, pos_ - start));
    return true;
  }
  bool Decode(std::string_view raw, std::string* out) {
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '<') return Err("'<' in an attribute value");
      if (raw[i] != '&') {
        *out += raw[i];
        continue;
      }
      size_t semi = raw.find(';', i);
      if (semi == std::string_view::npos) return Err("unterminated entity");
      std::string_view ent = raw.substr(i + 1, semi - i - 1);
      if (ent == "amp")
        *out += '&';
      else if (ent == "lt")
        *out += '<';
      else if (ent == "gt")
        *out += '>';
      else if (ent == "quot")
        *out += '"';
      else if (ent == "apos")
        *out += '\'';
      else if (ent.size() > 1 && ent[0] == '#') {
        const bool hex = ent[1] == 'x';
        std::string_view digits = ent.substr(hex ? 2 : 1);
        uint32_t v = 0;
        for (char c : digits) {
          int d = (c >= '0' && c <= '9')          ? c - '0'
                  : hex && (c >= 'a' && c <= 'f') ? c - 'a' + 10
                  : hex && (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                  : -1;
          if (d < 0 || v > 0x7f) return Err("bad character reference &" + std::string(ent) + ";");
          v = v * (hex ? 16 : 10) + d;
        }
        if (digits.empty() || v > 0x7f) return Err("unsupported character reference");
        *out += static_cast<char>(v);
      } else {
        return Err("unknown entity &" + std::string(ent) + ";");
      }
      i = semi;
    }
    return true;
  }
  bool Element(XmlNode* node) {
    ++pos_;  // '<'
    if (!Name(&node->name)) return false;
    for (;;) {
      size_t before = pos_;
      SkipSpace();
      if (Starts("/>")) {
        pos_ += 2;
        return true;
      }
      if (Starts(">")) {
        ++pos_;
        break;
      }
      if (pos_ == before) return Err("expected whitespace, '>' or '/>' in <" + node->name + ">");
      std::string key;
      if (!Name(&key)) return false;
      SkipSpace();
      if (!Starts("=")) return Err("expected '=' after " + key);
      ++pos_;
      SkipSpace();
      if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) {
        return Err("expected a quoted value for " + key);
      }
      char quote = s_[pos_++];
      size_t end = s_.find(quote, pos_);
      if (end == std::string_view::npos) return Err("unterminated value of " + key);
      std::string value;
      if (!Decode(s_.substr(pos_, end - pos_), &value)) return false;
      pos_ = end + 1;
      if (node->Attr(key) != nullptr) return Err("attribute " + key + " twice");
      node->attributes.emplace_back(std::move(key), std::move(value));
    }
    for (;;) {
      SkipMisc();
      if (!ok_) return false;
      if (pos_ >= s_.size()) return Err("unterminated <" + node->name + ">");
      if (Starts("</")) {
        pos_ += 2;
        std::string closing;
        if (!Name(&closing)) return false;
        if (closing != node->name) return Err("</" + closing + "> closes <" + node->name + ">");
        SkipSpace();
        if (!Starts(">")) return Err("expected '>' after </" + closing);
        ++pos_;
        return true;
      }
      if (Starts("<!") || Starts("<?")) return Err("unsupported markup");
      if (!Starts("<")) return Err("text content inside <" + node->name + ">");
      XmlNode child;
      if (!Element(&child)) return false;
      node->children.push_back(std::move(child));
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  bool ok_ = true;
  std::string error_;
};

}  // namespace xml_reader_internal

inline XmlReadResult ReadXml(std::string_view text) { return xml_reader_internal::Reader(text).Read(); }

}  // namespace gpusched::testing
