// Tokens of MIL text. One pass over the bytes, no backtracking, so the cost
// is linear in the text whatever it holds.
#include "mil_lexer.h"

#include <charconv>
#include <optional>
#include <system_error>

#include <fmt/format.h>

namespace ane::mil::detail {

namespace {

// Longer spellings are not numbers any printer writes; refusing them keeps
// number parsing on small, bounded strings.
constexpr size_t kMaxNumberLength = 256;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_alpha(c) || is_digit(c) || c == '@'; }

// The character an escape `\c` stands for; nullopt for an unknown escape.
std::optional<char> unescape(char c) {
  switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '\'': return '\'';
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    default: return std::nullopt;
  }
}

std::string printable(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, c);
  return fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
}

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  Expected<std::vector<Token>> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space();
      Token t;
      t.line = line_;
      t.offset = i_;
      if (i_ >= s_.size()) {
        out.push_back(std::move(t));
        return out;
      }
      if (auto st = one(t); !st) return st.error();
      t.text = s_.substr(t.offset, i_ - t.offset);
      out.push_back(std::move(t));
    }
  }

 private:
  void skip_space() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        if (line_ < UINT32_MAX) ++line_;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      ++i_;
    }
  }

  char at(size_t k) const { return k < s_.size() ? s_[k] : '\0'; }

  Error fail(const Token& t, std::string_view what) const { return located(path_, t.line, t.offset, what); }

  // Scans one token starting at i_ (not whitespace, not the end).
  Status one(Token& t) {
    const char c = s_[i_];
    if (is_alpha(c)) {
      while (i_ < s_.size() && is_ident_char(s_[i_])) ++i_;
      t.kind = Tok::Ident;
      return Ok{};
    }
    if (c == '"') return string(t);
    if (c == '-' && at(i_ + 1) == '>') {
      i_ += 2;
      t.kind = Tok::Arrow;
      return Ok{};
    }
    if (starts_number()) return number(t);
    if (auto k = punctuation(c)) {
      ++i_;
      t.kind = *k;
      return Ok{};
    }
    return fail(t, fmt::format("unexpected character '{}'", printable(c)));
  }

  static std::optional<Tok> punctuation(char c) {
    switch (c) {
      case '(': return Tok::LParen;
      case ')': return Tok::RParen;
      case '[': return Tok::LBracket;
      case ']': return Tok::RBracket;
      case '{': return Tok::LBrace;
      case '}': return Tok::RBrace;
      case '<': return Tok::LAngle;
      case '>': return Tok::RAngle;
      case ',': return Tok::Comma;
      case '=': return Tok::Equals;
      case ';': return Tok::Semicolon;
      case '?': return Tok::Question;
      default: return std::nullopt;
    }
  }

  // A digit, '.' digit, or a sign before one of those or before the words
  // inf / nan (printers write -inf for a masked fp16 constant).
  bool starts_number() const {
    size_t k = i_;
    if (s_[k] == '-' || s_[k] == '+') {
      ++k;
      size_t e = k;
      while (e < s_.size() && is_ident_char(s_[e])) ++e;
      const std::string_view word = s_.substr(k, e - k);
      if (word == "inf" || word == "nan" || word == "infinity") return true;
    }
    return is_digit(at(k)) || (at(k) == '.' && is_digit(at(k + 1)));
  }

  // The sign, then letters, digits and dots, and a sign only right after an
  // exponent letter (1e-3, 0x1p+0). What the spelling means is checked by
  // the parse_* functions when the literal's type is known.
  Status number(Token& t) {
    char prev = s_[i_];
    ++i_;  // the sign or first digit, checked by starts_number()
    while (i_ < s_.size()) {
      const char c = s_[i_];
      const bool exponent_sign =
          (c == '+' || c == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P');
      if (!is_ident_char(c) && c != '.' && !exponent_sign) break;
      prev = c;
      ++i_;
    }
    t.kind = Tok::Number;
    if (i_ - t.offset > kMaxNumberLength)
      return fail(t, fmt::format("number is longer than {} characters", kMaxNumberLength));
    return Ok{};
  }

  // "..." with \" \\ \n \t \r \' escapes, checked here and resolved by
  // string_value(). A raw line break ends nothing: printers escape it, so
  // meeting one means the closing quote is missing.
  Status string(Token& t) {
    ++i_;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '"') {
        ++i_;
        t.kind = Tok::String;
        return Ok{};
      }
      if (c == '\n') break;
      if (c != '\\') {
        ++i_;
        continue;
      }
      if (i_ + 1 >= s_.size()) break;
      if (!unescape(s_[i_ + 1])) {
        Token at_escape = t;
        at_escape.offset = i_;
        return fail(at_escape, fmt::format("unknown escape '\\{}' in string", printable(s_[i_ + 1])));
      }
      i_ += 2;
    }
    return fail(t, "unterminated string");
  }

  std::string_view s_;
  const std::string& path_;
  size_t i_ = 0;
  uint32_t line_ = 1;
};

NumberStatus status_of(std::errc ec, const char* ptr, const char* end) {
  if (ec == std::errc::result_out_of_range) return NumberStatus::OutOfRange;
  if (ec != std::errc() || ptr != end) return NumberStatus::Invalid;
  return NumberStatus::Ok;
}

bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

Error located(const std::string& path, uint32_t line, uint64_t offset, std::string_view what) {
  return make_error(offset, fmt::format("{}:{}: {}", path, line, what));
}

Expected<std::vector<Token>> lex(std::string_view text, const std::string& path) {
  return Lexer(text, path).run();
}

std::string string_value(const Token& t) {
  std::string out;
  const std::string_view body = t.text.size() >= 2 ? t.text.substr(1, t.text.size() - 2) : std::string_view();
  out.reserve(body.size());
  for (size_t k = 0; k < body.size(); ++k) {
    if (body[k] == '\\' && k + 1 < body.size()) {
      out.push_back(unescape(body[k + 1]).value_or(body[k + 1]));
      ++k;
    } else {
      out.push_back(body[k]);
    }
  }
  return out;
}

std::string describe(const Token& t) {
  if (t.kind == Tok::End) return "end of text";
  constexpr size_t kShown = 40;
  std::string out = "'";
  for (size_t k = 0; k < t.text.size() && k < kShown; ++k) out += printable(t.text[k]);
  if (t.text.size() > kShown) out += "...";
  return out + "'";
}

NumberStatus parse_int64(std::string_view s, int64_t* out) {
  // from_chars takes '-' but not '+'; a '+' must not hide a second sign.
  if (!s.empty() && s[0] == '+') {
    s.remove_prefix(1);
    if (s.empty() || !is_digit(s[0])) return NumberStatus::Invalid;
  }
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 10);
  return status_of(ec, ptr, s.data() + s.size());
}

NumberStatus parse_uint64(std::string_view s, uint64_t* out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || !is_digit(s[0])) return NumberStatus::Invalid;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 10);
  return status_of(ec, ptr, s.data() + s.size());
}

// std::from_chars is locale-independent (strtod is not) and reads hex floats
// exactly; it wants the 0x prefix and the sign handled by the caller.
NumberStatus parse_double(std::string_view s, double* out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  auto format = std::chars_format::general;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    // A digit or '.' must follow: from_chars would also take "inf" here.
    if (s.empty() || !(is_hex_digit(s[0]) || s[0] == '.')) return NumberStatus::Invalid;
    format = std::chars_format::hex;
  } else if (s.empty() || !(is_digit(s[0]) || s[0] == '.' || s[0] == 'i' || s[0] == 'n')) {
    return NumberStatus::Invalid;  // no second sign, no "INF" spellings
  }
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, format);
  const NumberStatus st = status_of(ec, ptr, s.data() + s.size());
  if (st == NumberStatus::Ok) *out = negative ? -v : v;
  return st;
}

}  // namespace ane::mil::detail
