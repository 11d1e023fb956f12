// MIL text -> Program: the structure. `program(1.x) [attrs] { func ... }`,
// typed inputs, one-result statements and their names. Types and literals
// are read by mil_literal.cpp.
//
// Names are checked as they are met: an argument or an output must name an
// input or an earlier result, and nothing is defined twice, so a Program
// that comes out is a well-formed dataflow graph in written order.
#include <unordered_set>

#include <fmt/format.h>

#include "ane/bytes.h"
#include "mil_parser.h"

namespace ane::mil {

namespace detail {

namespace {

const char* token_name(Tok k) {
  switch (k) {
    case Tok::Ident: return "a name";
    case Tok::Number: return "a number";
    case Tok::String: return "a string";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::LAngle: return "'<'";
    case Tok::RAngle: return "'>'";
    case Tok::Comma: return "','";
    case Tok::Equals: return "'='";
    case Tok::Semicolon: return "';'";
    case Tok::Question: return "'?'";
    case Tok::Arrow: return "'->'";
    case Tok::End: return "end of text";
  }
  return "?";
}

// Ops whose operands are blocks of statements. Refused by name whatever
// form the block takes, so the message never depends on how it was printed.
bool is_control_flow(std::string_view op) { return op == "cond" || op == "while_loop" || op == "scan"; }

// 1, 1.0, 1.3: digits separated by single dots.
bool is_version(std::string_view v) {
  if (v.empty() || v.front() == '.' || v.back() == '.') return false;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '.' ? v[i - 1] == '.' : (v[i] < '0' || v[i] > '9')) return false;
  }
  return true;
}

constexpr std::string_view kArgumentRule = "an argument must name an input or an earlier result";

}  // namespace

// ---- tokens -----------------------------------------------------------------

const Token& Parser::peek(size_t k) const {
  const size_t i = pos_ + k;
  return i < toks_.size() ? toks_[i] : toks_.back();
}

// Never moves past the End token, so a truncated text keeps meeting End.
const Token& Parser::next() {
  const Token& t = peek();
  if (pos_ + 1 < toks_.size()) ++pos_;
  return t;
}

bool Parser::at_word(std::string_view w, size_t ahead) const {
  return at(Tok::Ident, ahead) && peek(ahead).text == w;
}

bool Parser::accept(Tok k) {
  if (!at(k)) return false;
  next();
  return true;
}

Status Parser::expect(Tok k) {
  if (accept(k)) return Ok{};
  return fail(peek(), fmt::format("expected {}, found {}", token_name(k), describe(peek())));
}

Expected<const Token*> Parser::ident(std::string_view what) {
  if (!at(Tok::Ident)) return fail(peek(), fmt::format("expected {}, found {}", what, describe(peek())));
  return &next();
}

Status Parser::keyword(std::string_view word) {
  if (at_word(word)) {
    next();
    return Ok{};
  }
  return fail(peek(), fmt::format("expected '{}', found {}", word, describe(peek())));
}

Status Parser::comma_or(Tok close, bool* more) {
  *more = accept(Tok::Comma);
  if (*more || accept(close)) return Ok{};
  return fail(peek(), fmt::format("expected ',' or {}, found {}", token_name(close), describe(peek())));
}

Error Parser::fail(const Token& t, std::string_view what) const {
  return located(path_, t.line, t.offset, context_ + std::string(what));
}

Error Parser::too_deep(const Token& t) const {
  return fail(t, fmt::format("nesting deeper than {} levels", kMaxDepth));
}

// ---- program ----------------------------------------------------------------

Expected<Program> Parser::program() {
  Program prog;
  prog.path = path_;
  MIL_TRY(keyword("program"));
  MIL_TRY(expect(Tok::LParen));
  if (!at(Tok::Number) || !is_version(peek().text))
    return fail(peek(), fmt::format("expected a program version like 1.3, found {}", describe(peek())));
  prog.version = next().text;
  MIL_TRY(expect(Tok::RParen));
  if (accept(Tok::LBracket)) MIL_TRY(attributes(&prog.attributes, ""));
  MIL_TRY(expect(Tok::LBrace));
  while (!at(Tok::RBrace)) MIL_TRY(function(&prog));
  if (prog.functions.empty()) return fail(peek(), "program has no functions");
  next();
  if (!at(Tok::End)) return fail(peek(), "text after the program's closing brace");
  return prog;
}

// `name = literal, ...]` after the '['. `owner` prefixes messages ("op 'conv': ").
Status Parser::attributes(std::map<std::string, Literal>* out, const std::string& owner) {
  if (accept(Tok::RBracket)) return Ok{};
  for (bool more = true; more;) {
    auto name = ident("an attribute name");
    if (!name) return name.error();
    MIL_TRY(expect(Tok::Equals));
    std::string key((*name)->text);
    context_ = fmt::format("{}attribute '{}': ", owner, key);
    Literal value;
    MIL_TRY(literal(&value));
    context_.clear();
    if (out->count(key)) return fail(**name, fmt::format("{}attribute '{}' is given twice", owner, key));
    out->emplace(std::move(key), std::move(value));
    MIL_TRY(comma_or(Tok::RBracket, &more));
  }
  return Ok{};
}

// `func NAME<opset>(inputs) { statements } -> (outputs);`
Status Parser::function(Program* prog) {
  const Token& start = peek();
  MIL_TRY(keyword("func"));
  auto name = ident("a function name");
  if (!name) return name.error();
  Function fn;
  fn.name = (*name)->text;
  fn.line = start.line;
  if (!functions_.insert(fn.name).second)
    return fail(**name, fmt::format("function '{}' is defined twice", fn.name));
  if (accept(Tok::LAngle)) {
    auto opset = ident("an opset name");
    if (!opset) return opset.error();
    fn.opset = (*opset)->text;
    MIL_TRY(expect(Tok::RAngle));
  }
  defined_.clear();  // names are local to a function
  MIL_TRY(expect(Tok::LParen));
  MIL_TRY(inputs(&fn));
  MIL_TRY(expect(Tok::LBrace));
  while (!accept(Tok::RBrace)) MIL_TRY(statement(&fn));
  MIL_TRY(expect(Tok::Arrow));
  MIL_TRY(expect(Tok::LParen));
  MIL_TRY(outputs(&fn));
  MIL_TRY(expect(Tok::Semicolon));
  prog->functions.push_back(std::move(fn));
  return Ok{};
}

// `Type name, ...)` after the '('.
Status Parser::inputs(Function* fn) {
  if (accept(Tok::RParen)) return Ok{};
  for (bool more = true; more;) {
    Value v;
    v.line = peek().line;
    MIL_TRY(type(&v.type));
    auto name = ident("an input name");
    if (!name) return name.error();
    MIL_TRY(define(**name));
    v.name = (*name)->text;
    fn->inputs.push_back(std::move(v));
    MIL_TRY(comma_or(Tok::RParen, &more));
  }
  return Ok{};
}

// `Type result = op(arg = value, ...)[attr = literal, ...];`
Status Parser::statement(Function* fn) {
  const size_t start = pos_;
  const Token& first = peek();
  if (at(Tok::LParen)) return refuse_results(start);
  Operation op;
  op.line = first.line;
  MIL_TRY(type(&op.result_type));
  auto result = ident("a result name");
  if (!result) return result.error();
  if (at(Tok::Comma)) return refuse_results(start);
  MIL_TRY(expect(Tok::Equals));
  auto name = ident("an op name");
  if (!name) return name.error();
  op.op = (*name)->text;
  auto blocks = [&](const Token& where) {
    return fail(where, fmt::format("op '{}' has nested blocks: control flow is not supported", op.op));
  };
  if (is_control_flow(op.op)) return blocks(**name);
  MIL_TRY(expect(Tok::LParen));
  MIL_TRY(arguments(&op));
  if (accept(Tok::LBracket)) MIL_TRY(attributes(&op.attributes, fmt::format("op '{}': ", op.op)));
  if (at(Tok::LBrace)) return blocks(peek());
  MIL_TRY(expect(Tok::Semicolon));
  MIL_TRY(define(**result));  // after the arguments: `x = f(x = x)` must not see itself
  op.result = (*result)->text;
  fn->operations.push_back(std::move(op));
  return Ok{};
}

// A statement with several results, `T a, T b = split(...)` or the tuple
// form `(T a, T b) = split(...)`: read far enough to name the op, then refuse.
Status Parser::refuse_results(size_t start) {
  pos_ = start;
  const Token& first = peek();
  const bool tuple = accept(Tok::LParen);
  size_t count = 0;
  for (bool more = true; more; ++count) {
    Type t;
    MIL_TRY(type(&t));
    auto name = ident("a result name");
    if (!name) return name.error();
    more = accept(Tok::Comma);
  }
  if (tuple) MIL_TRY(expect(Tok::RParen));
  MIL_TRY(expect(Tok::Equals));
  auto op = ident("an op name");
  if (!op) return op.error();
  if (count == 1)
    return fail(first, fmt::format("statement's result is a tuple ({}): tuple results are not supported", (*op)->text));
  return fail(first, fmt::format("statement defines {} results ({}): several results per statement are not supported",
                                 count, (*op)->text));
}

// `name = value, ...)` after the '('.
Status Parser::arguments(Operation* op) {
  if (accept(Tok::RParen)) return Ok{};
  std::unordered_set<std::string_view> seen;  // views into the text, which outlives the parse
  for (bool more = true; more;) {
    auto name = ident("an argument name");
    if (!name) return name.error();
    MIL_TRY(expect(Tok::Equals));
    if (!seen.insert((*name)->text).second)
      return fail(**name, fmt::format("op '{}': argument '{}' is given twice", op->op, (*name)->text));
    context_ = fmt::format("op '{}': argument '{}': ", op->op, (*name)->text);
    Argument value;
    MIL_TRY(argument_value(&value));
    context_.clear();
    op->arguments.emplace_back(std::string((*name)->text), std::move(value));
    MIL_TRY(comma_or(Tok::RParen, &more));
  }
  return Ok{};
}

// A name, a tuple of names, or a typed literal. A tuple holding literals is
// refused: no printer writes one, and a loose list has no single type.
Status Parser::argument_value(Argument* out) {
  const Token& t = peek();
  if (at(Tok::LBrace)) return fail(t, "nested blocks: control flow is not supported");
  if (at_literal()) {
    Literal lit;
    MIL_TRY(literal(&lit));
    *out = std::move(lit);
    return Ok{};
  }
  if (!accept(Tok::LParen)) {
    auto name = ident("a name or a typed literal");
    if (!name) return name.error();
    MIL_TRY(resolve(**name, kArgumentRule));
    *out = NameRef{std::string((*name)->text)};
    return Ok{};
  }
  if (at(Tok::RParen)) return fail(peek(), "an empty tuple is not supported");
  NameTuple tuple;
  for (bool more = true; more;) {
    if (at_literal() || at(Tok::Number) || at(Tok::String))
      return fail(peek(), "a tuple of literals is not supported: a tuple names inputs or earlier results");
    auto name = ident("a name in the tuple");
    if (!name) return name.error();
    MIL_TRY(resolve(**name, kArgumentRule));
    tuple.names.emplace_back((*name)->text);
    MIL_TRY(comma_or(Tok::RParen, &more));
  }
  *out = std::move(tuple);
  return Ok{};
}

// `name, ...)` after `-> (`.
Status Parser::outputs(Function* fn) {
  if (at(Tok::RParen)) return fail(peek(), fmt::format("function '{}' has no outputs", fn->name));
  for (bool more = true; more;) {
    auto name = ident("an output name");
    if (!name) return name.error();
    if (!defined_.count(std::string((*name)->text)))
      return fail(**name, fmt::format("function '{}': output '{}' is not defined (an output must name an input or a "
                                      "result)",
                                      fn->name, (*name)->text));
    fn->outputs.emplace_back((*name)->text);
    MIL_TRY(comma_or(Tok::RParen, &more));
  }
  return Ok{};
}

Status Parser::define(const Token& name) {
  const auto [it, inserted] = defined_.emplace(std::string(name.text), name.line);
  if (inserted) return Ok{};
  return fail(name, fmt::format("name '{}' is defined twice (first on line {})", name.text, it->second));
}

Status Parser::resolve(const Token& name, std::string_view rule) {
  if (defined_.count(std::string(name.text))) return Ok{};
  return fail(name, fmt::format("'{}' is not defined ({})", name.text, rule));
}

}  // namespace detail

Expected<Program> parse_program(std::string_view text, const std::string& path) {
  auto tokens = detail::lex(text, path);
  if (!tokens) return tokens.error();
  return detail::Parser(std::move(*tokens), path).program();
}

Expected<Program> load_program(const std::string& path) {
  auto bytes = read_file(path);
  if (!bytes) {
    // read_file's messages ("cannot open: ...") do not all name the file.
    Error e = bytes.error();
    if (e.message.find(path) == std::string::npos) e.message = fmt::format("{}: {}", path, e.message);
    return e;
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  return parse_program(text, path);
}

}  // namespace ane::mil
