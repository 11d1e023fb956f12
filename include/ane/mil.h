// Core ML's MIL text (the `model.mil` of a compiled .mlmodelc bundle) and its
// weight file (coremltools' MILBlob v2): a typed syntax tree and two strict
// readers. What a program means for the ANE is decided by the lowering
// (mil_network.h), which names the line, op and argument of anything it
// cannot compile.
//
// The grammar is the one Apple's and coremltools' printers write
// (docs/mil.md): `program(1.x)`, optional `[attr = value, ...]`, then
// `{ func main<opset>(typed inputs) { statements } -> (outputs); }`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"

namespace ane::mil {

// MIL element types by their printed names (fp16, fp32, int32, ...).
enum class DType { Fp16, Fp32, Fp64, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Bool, String };
const char* dtype_name(DType t);                       // "fp16", ...
std::optional<DType> dtype_of_name(std::string_view);  // nullopt: not a MIL element type

// `fp16` (a scalar, rank 0) or `tensor<fp16, [1, 3, 8, 8]>`. Symbolic
// dimensions are refused by the parser, so every dimension is known.
struct Type {
  DType dtype = DType::Fp32;
  bool is_tensor = false;      // written as tensor<...> (a rank-0 tensor is tensor<T, []>)
  std::vector<int64_t> shape;  // empty for scalars
  uint64_t element_count() const;
};
std::string type_text(const Type& t);  // "tensor<fp16, [1, 3]>" or "int32"

// BLOBFILE(path = string("@model_path/weights/weight.bin"), offset = uint64(64)):
// the offset is where the blob's 64-byte metadata record starts.
struct BlobRef {
  std::string path;
  uint64_t offset = 0;
};

// A literal value: scalars are one-element lists. Floats keep the parsed
// double (hex floats exactly); integers and bools as int64; strings as text.
struct Literal {
  Type type;
  std::variant<std::vector<double>, std::vector<int64_t>, std::vector<std::string>, BlobRef> values;
  uint32_t line = 0;
};

// An operation argument: a name (`x = x`), a tuple of names
// (`values = (a, b)`), or a literal written in place.
struct NameRef {
  std::string name;
};
struct NameTuple {
  std::vector<std::string> names;
};
using Argument = std::variant<NameRef, NameTuple, Literal>;

struct Operation {
  uint32_t line = 0;
  Type result_type;
  std::string result;  // the one value it defines
  std::string op;      // "conv", "const", "add", ...
  std::vector<std::pair<std::string, Argument>> arguments;  // in written order
  std::map<std::string, Literal> attributes;                // [name = string("y"), val = ...]

  const Argument* argument(std::string_view name) const;  // nullptr when absent
};

struct Value {
  std::string name;
  Type type;
  uint32_t line = 0;
};

struct Function {
  std::string name;   // "main"
  std::string opset;  // "ios18" ("" when not written)
  uint32_t line = 0;
  std::vector<Value> inputs;
  std::vector<Operation> operations;
  std::vector<std::string> outputs;  // `-> (y, z)`
};

struct Program {
  std::string path;     // for messages
  std::string version;  // "1.3"
  std::map<std::string, Literal> attributes;  // buildInfo, ... (values kept loosely)
  std::vector<Function> functions;
  const Function* function(std::string_view name) const;
};

// Parses MIL text. Errors are one line: "<path>:<line>: <what>", with
// Error::offset the byte offset in `text`. Refused by name (not guessed):
// several results per statement, control flow (cond, while_loop, ...
// blocks), state types, symbolic dimensions, unknown element types.
Expected<Program> parse_program(std::string_view text, const std::string& path);
Expected<Program> load_program(const std::string& path);

// ---- MILBlob v2 (coremltools mlmodel/src/MILBlob/Blob/StorageFormat.hpp) ---
//
// File header (64 bytes): u32 count, u32 version (2), then reserved bytes.
// Each blob: a 64-byte metadata record (64-aligned as coremltools writes it):
//   u32 sentinel 0xDEADBEEF, u32 data type, u64 size in bytes,
//   u64 data offset (absolute, 64-aligned), u64 padding bits (sub-byte
//   types), then reserved bytes, and the data itself at the data offset.
// docs/mil-weights.md: what is checked, and the messages.

enum class BlobDataType : uint32_t {
  Fp16 = 1,
  Fp32 = 2,
  UInt8 = 3,
  Int8 = 4,
  BFloat16 = 5,
  Int16 = 6,
  UInt16 = 7,
  Int4 = 8,
  UInt1 = 9,
  UInt2 = 10,
  UInt4 = 11,
  UInt3 = 12,
  UInt6 = 13,
  Int32 = 14,
  UInt32 = 15,
  Fp8E4M3FN = 16,
  Fp8E5M2 = 17,
};
const char* blob_data_type_name(uint32_t code);  // "fp16", "bf16", "int4", ..., "unknown"

struct BlobMetadata {
  uint32_t sentinel = 0;
  uint32_t data_type = 0;  // BlobDataType code as stored
  uint64_t size = 0;       // bytes
  uint64_t data_offset = 0;
};

struct BlobFileHeader {
  uint32_t count = 0;
  uint32_t version = 0;
};

// A bounds-checked view of one weight file (the bytes must outlive it).
// Errors: Error::offset is the header's (0) or the record's offset and the
// message says what is wrong, without the path; report them as
// `path + ": " + error.str()`, which reads
// "weights/weight.bin: offset 0x40: blob sentinel 0x12345678, expected 0xdeadbeef".
class BlobFile {
 public:
  // Checks the header (64 bytes, version 2; the count is not checked).
  static Expected<BlobFile> open(std::span<const uint8_t> bytes, const std::string& path);
  const BlobFileHeader& header() const { return header_; }
  // The metadata record at `offset` (the BLOBFILE offset, any alignment, as
  // Apple's compiler reads it), checked: inside the file, the sentinel, data
  // type `expected`, at least `expected_bytes` of data (read from its start),
  // the data 64-aligned and inside the file (it may overlap the header or a
  // record: a data offset of 0 reads the header bytes, as Apple's compiler does).
  Expected<BlobMetadata> metadata(uint64_t offset, BlobDataType expected, uint64_t expected_bytes) const;
  // The data of a checked record (empty for a record that does not fit).
  std::span<const uint8_t> data(const BlobMetadata& m) const;

 private:
  std::span<const uint8_t> bytes_;
  std::string path_;
  BlobFileHeader header_;
};

}  // namespace ane::mil
