// json_reader.h: a small tolerant JSON reader for kernel manifests (no third-party code).
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace attn::detail::json {

struct Value {
  enum class Kind { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  std::vector<Value> items;       // array
  std::vector<std::string> keys;  // object, in file order; values[i] belongs to keys[i]
  std::vector<Value> values;

  const Value *member(std::string_view key) const {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return &values[i];
    }
    return nullptr;
  }
};

struct ParseResult {
  bool ok = false;
  Value value;
  std::string message;  // what was wrong, with its byte offset
};

// Strict JSON plus what hand-edited manifests contain: trailing commas are accepted.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  ParseResult parse() {
    ParseResult result;
    skip_space();
    if (!value(&result.value, 0)) {
      result.message = error_;
      return result;
    }
    skip_space();
    if (pos_ != text_.size()) {
      result.message = "unexpected text after the document at byte " + std::to_string(pos_);
      return result;
    }
    result.ok = true;
    return result;
  }

 private:
  static constexpr int max_depth = 64;  // deeper documents are refused, not recursed into

  bool problem(const std::string &what) {
    error_ = what + " at byte " + std::to_string(pos_);
    return false;
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  bool value(Value *out, int depth) {
    if (depth > max_depth) return problem("nesting deeper than " + std::to_string(max_depth));
    if (pos_ >= text_.size()) return problem("unexpected end of text");
    const char c = text_[pos_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out->kind = Value::Kind::string;
      return string(&out->string);
    }
    if (literal("true") || literal("false")) {
      out->kind = Value::Kind::boolean;
      out->boolean = text_.substr(pos_ - 4, 4) == "true";
      return true;
    }
    if (literal("null")) {
      out->kind = Value::Kind::null;
      return true;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    return problem(std::string("unexpected character '") + c + "'");
  }

  bool number(Value *out) {
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           std::string_view("+-0123456789.eE").find(text_[pos_]) != std::string_view::npos) {
      ++pos_;
    }
    const std::string digits(text_.substr(start, pos_ - start));
    char *end = nullptr;
    out->kind = Value::Kind::number;
    out->number = std::strtod(digits.c_str(), &end);
    if (end != digits.c_str() + digits.size()) {
      pos_ = start;
      return problem("bad number '" + digits + "'");
    }
    return true;
  }

  static void append_utf8(std::string *out, unsigned code) {
    if (code < 0x80) {
      *out += static_cast<char>(code);
    } else if (code < 0x800) {
      *out += static_cast<char>(0xC0 | (code >> 6));
      *out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      *out += static_cast<char>(0xE0 | (code >> 12));
      *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (code >> 18));
      *out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  bool hex4(unsigned *code) {
    if (pos_ + 4 > text_.size()) return problem("truncated \\u escape");
    *code = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_++];
      *code <<= 4;
      if (h >= '0' && h <= '9')
        *code |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f')
        *code |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        *code |= static_cast<unsigned>(h - 'A' + 10);
      else
        return problem("bad \\u escape");
    }
    return true;
  }

  bool string(std::string *out) {
    ++pos_;  // opening quote
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case '"':
          *out += '"';
          break;
        case '\\':
          *out += '\\';
          break;
        case '/':
          *out += '/';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          unsigned code = 0;
          if (!hex4(&code)) return false;
          if (code >= 0xD800 && code < 0xDC00 && literal("\\u")) {
            unsigned low = 0;
            if (!hex4(&low)) return false;
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, code);
          break;
        }
        default:
          return problem(std::string("bad escape '\\") + e + "'");
      }
    }
    return problem("unterminated string");
  }

  bool array(Value *out, int depth) {
    out->kind = Value::Kind::array;
    ++pos_;
    for (;;) {
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      out->items.emplace_back();
      if (!value(&out->items.back(), depth + 1)) return false;
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
      } else if (pos_ >= text_.size() || text_[pos_] != ']') {
        return problem("expected ',' or ']'");
      }
    }
  }

  bool object(Value *out, int depth) {
    out->kind = Value::Kind::object;
    ++pos_;
    for (;;) {
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      if (pos_ >= text_.size() || text_[pos_] != '"') return problem("expected a member name");
      std::string key;
      if (!string(&key)) return false;
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ':') return problem("expected ':'");
      ++pos_;
      skip_space();
      out->keys.push_back(std::move(key));
      out->values.emplace_back();
      if (!value(&out->values.back(), depth + 1)) return false;
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
      } else if (pos_ >= text_.size() || text_[pos_] != '}') {
        return problem("expected ',' or '}'");
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

inline ParseResult parse(std::string_view text) {
  return Reader(text).parse();
}

}  // namespace attn::detail::json
