// Internal to the MIL text parser: tokens and number spellings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ane/error.h"

namespace ane::mil::detail {

enum class Tok : uint8_t {
  Ident,      // [A-Za-z_][A-Za-z0-9_@]*
  Number,     // 12, -1, 0.5, 1e-3, 0x1.8p-3, -inf, nan (sign included)
  String,     // "..." (string_value() decodes it)
  LParen,     // (
  RParen,     // )
  LBracket,   // [
  RBracket,   // ]
  LBrace,     // {
  RBrace,     // }
  LAngle,     // <
  RAngle,     // >  (">>" is two tokens)
  Comma,      // ,
  Equals,     // =
  Semicolon,  // ;
  Question,   // ?  (an unknown dimension)
  Arrow,      // ->
  End,        // end of text
};

// 32 bytes: a large model.mil has millions of tokens, all lexed up front.
struct Token {
  Tok kind = Tok::End;
  uint32_t line = 1;
  uint64_t offset = 0;
  std::string_view text;  // as written (a string with its quotes)
};

// "<path>:<line>: <what>" at `offset`: every parser message has this form.
Error located(const std::string& path, uint32_t line, uint64_t offset, std::string_view what);

// Splits the whole text; the last token is always Tok::End. Fails on an
// unterminated string, an unknown escape or a byte no token starts with.
Expected<std::vector<Token>> lex(std::string_view text, const std::string& path);

// A Tok::String's text without quotes, escapes resolved (the lexer has
// checked them).
std::string string_value(const Token& t);

// A token for messages: 'conv', "...", end of text. Bounded and printable.
std::string describe(const Token& t);

// Number spellings, parsed without locale or undefined behaviour. Whole
// text or nothing: trailing characters make the spelling Invalid.
enum class NumberStatus { Ok, Invalid, OutOfRange };
NumberStatus parse_int64(std::string_view s, int64_t* out);    // [+-]digits
NumberStatus parse_uint64(std::string_view s, uint64_t* out);  // [+]digits
// [+-] then a decimal (12, 0.5, 1e-3), a hex float (0x1.8p-3), inf or nan.
NumberStatus parse_double(std::string_view s, double* out);

}  // namespace ane::mil::detail
