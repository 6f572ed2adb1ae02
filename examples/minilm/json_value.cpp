// json_value.cpp: a recursive-descent JSON parser (RFC 8259), strict, with byte-offset errors.
#include "json_value.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "utf8.h"

namespace minilm {

const JsonValue *JsonValue::find(std::string_view key) const {
  if (kind != Kind::object) return nullptr;
  const auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &it->second;
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  JsonValue document() {
    JsonValue v = value(0);
    space();
    if (at_ < text_.size()) fail("unexpected text after the JSON document");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string &what) const {
    throw JsonError("JSON: " + what + " at byte " + std::to_string(at_));
  }
  void space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  bool take(char c) {
    space();
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  void literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) fail("unknown literal");
    at_ += word.size();
  }

  JsonValue value(int depth) {
    if (depth > 32) fail("nesting deeper than 32 levels");
    space();
    if (at_ >= text_.size()) fail("unexpected end of text");
    JsonValue v;
    const char c = text_[at_];
    if (c == '{') {
      ++at_;
      v.kind = JsonValue::Kind::object;
      if (take('}')) return v;
      do {
        space();
        if (at_ >= text_.size() || text_[at_] != '"') fail("expected a string key");
        std::string key = string_body();
        expect(':');
        if (v.object.count(key)) fail("duplicate key \"" + key + "\"");
        v.keys.push_back(key);
        v.object.emplace(std::move(key), value(depth + 1));
      } while (take(','));
      expect('}');
    } else if (c == '[') {
      ++at_;
      v.kind = JsonValue::Kind::array;
      if (take(']')) return v;
      do v.array.push_back(value(depth + 1));
      while (take(','));
      expect(']');
    } else if (c == '"') {
      v.kind = JsonValue::Kind::string;
      v.string = string_body();
    } else if (c == 't' || c == 'f') {
      v.kind = JsonValue::Kind::boolean;
      v.boolean = c == 't';
      literal(v.boolean ? "true" : "false");
    } else if (c == 'n') {
      literal("null");
    } else {
      number(&v);
    }
    return v;
  }

  void number(JsonValue *v) {
    const size_t start = at_;
    auto digits = [&] {
      const size_t from = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
      return at_ - from;
    };
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    const size_t int_start = at_;
    if (digits() == 0) fail("expected a value");
    if (text_[int_start] == '0' && at_ - int_start > 1) fail("a number has a leading zero");
    bool integral = true;
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_, integral = false;
      if (digits() == 0) fail("expected digits after '.'");
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_, integral = false;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      if (digits() == 0) fail("expected digits in the exponent");
    }
    const std::string token(text_.substr(start, at_ - start));
    v->kind = JsonValue::Kind::number;
    v->number = std::strtod(token.c_str(), nullptr);
    if (integral) {
      errno = 0;
      const long long n = std::strtoll(token.c_str(), nullptr, 10);
      v->is_integer = errno == 0;
      v->integer = n;
    }
  }

  uint32_t hex4() {
    if (at_ + 4 > text_.size()) fail("a \\u escape is cut short");
    uint32_t cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[at_++];
      cp <<= 4;
      if (h >= '0' && h <= '9')
        cp |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f')
        cp |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        cp |= uint32_t(h - 'A' + 10);
      else
        fail("a \\u escape has a non-hex digit");
    }
    return cp;
  }

  std::string string_body() {
    ++at_;  // the opening quote
    std::string out;
    while (true) {
      if (at_ >= text_.size()) fail("a string is not closed");
      const char c = text_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) fail("a string is not closed");
      switch (const char e = text_[at_++]) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
            if (text_.substr(at_, 2) != "\\u") fail("a lone high surrogate");
            at_ += 2;
            const uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("a high surrogate without its low half");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("a lone low surrogate");
          }
          append_utf8(&out, char32_t(cp));
          break;
        }
        default:
          fail("an unknown escape");
      }
    }
  }

  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

JsonValue parse_json(std::string_view text) {
  return Parser(text).document();
}

}  // namespace minilm
