// Internal to the MIL text parser: the recursive-descent parser over the
// token list. Structure (program, functions, statements, names) is in
// mil_parse.cpp; types and literals in mil_literal.cpp.
//
// Every recursive step goes through Nest, so hostile nesting ends in an
// error at kMaxDepth levels instead of exhausting the stack.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ane/mil.h"
#include "mil_lexer.h"

namespace ane::mil::detail {

#define MIL_TRY(expr)                               \
  do {                                              \
    if (auto st_ = (expr); !st_) return st_.error(); \
  } while (0)

constexpr int kMaxDepth = 64;                               // nested types and lists
constexpr size_t kMaxRank = 32;                             // dimensions of a tensor type
constexpr int64_t kMaxDimension = int64_t{1} << 40;         // one dimension
constexpr uint64_t kMaxLiteralElements = uint64_t{1} << 26;  // values written in place

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::string& path) : toks_(std::move(tokens)), path_(path) {}

  Expected<Program> program();

 private:
  // Counts one level of recursion for as long as it lives.
  class Nest {
   public:
    explicit Nest(int& depth) : depth_(depth) { ++depth_; }
    ~Nest() { --depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
    bool too_deep() const { return depth_ > kMaxDepth; }

   private:
    int& depth_;
  };

  // ---- tokens (mil_parse.cpp)
  const Token& peek(size_t k = 0) const;
  const Token& next();
  bool at(Tok k, size_t ahead = 0) const { return peek(ahead).kind == k; }
  bool at_word(std::string_view w, size_t ahead = 0) const;
  bool accept(Tok k);
  Status expect(Tok k);
  Expected<const Token*> ident(std::string_view what);
  Status keyword(std::string_view word);
  // After a list item: ',' (*more = true) or `close` (*more = false).
  Status comma_or(Tok close, bool* more);
  // "<path>:<line>: <context><what>" at the token.
  Error fail(const Token& t, std::string_view what) const;
  Error too_deep(const Token& t) const;

  // ---- structure (mil_parse.cpp)
  Status attributes(std::map<std::string, Literal>* out, const std::string& owner);
  Status function(Program* prog);
  Status inputs(Function* fn);
  Status statement(Function* fn);
  Status refuse_results(size_t start);
  Status arguments(Operation* op);
  Status argument_value(Argument* out);
  Status outputs(Function* fn);
  Status define(const Token& name);
  Status resolve(const Token& name, std::string_view rule);

  // ---- types and literals (mil_literal.cpp)
  bool at_literal() const;
  Status type(Type* out);
  Status dimensions(Type* out);
  Status literal(Literal* out);
  Status literal_body(Literal* out, const Token& start);
  Status dict_literal(Literal* out);
  Status dict_entry(std::vector<std::string>* out);
  Status blobfile(BlobRef* out);
  Status blob_offset(uint64_t* out);
  Status list(Literal* out, size_t level, uint64_t count);
  Status element(Literal* out, uint64_t count);
  Status element_value(Literal* out);

  std::vector<Token> toks_;
  size_t pos_ = 0;
  const std::string& path_;
  int depth_ = 0;
  std::string context_;  // "op 'conv': argument 'x': " while parsing a value
  std::unordered_map<std::string, uint32_t> defined_;  // this function's names -> line
  std::unordered_set<std::string> functions_;          // names of the functions so far
};

}  // namespace ane::mil::detail
