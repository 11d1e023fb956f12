// A strict reader and a writer for NumPy .npy files, as hwx-run uses them:
// little-endian float16 ('<f2') or float32 ('<f4') in C order.
//
// Accepted: magic "\x93NUMPY", versions 1.0, 2.0 and 3.0, a header dict with
// exactly the keys 'descr', 'fortran_order' and 'shape' (any order, trailing
// comma allowed), 'fortran_order': False, a shape tuple of non-negative
// integers, the header padded with spaces and ended by '\n' so that the data
// starts at a multiple of 16 bytes, and exactly shape-product elements of
// data after it. Anything else is an error naming the problem and its offset.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"

namespace ane::npy {

enum class Dtype { F16, F32 };

struct Array {
  Dtype dtype = Dtype::F16;
  std::vector<uint64_t> shape;  // () is a scalar: one element
  Bytes data;                   // little-endian element bytes, C order

  uint64_t elements() const;
  // The values as fp16 bit patterns (float32 rounds to nearest even).
  std::vector<uint16_t> to_fp16() const;
};

// A .npy file's array read in place: a regular file is mapped read-only
// (nothing is copied until the values are used), anything else is read.
class Mapped {
 public:
  Dtype dtype = Dtype::F16;
  std::vector<uint64_t> shape;
  std::span<const uint8_t> data;  // little-endian element bytes, C order

  uint64_t elements() const;
  // The file behind `data`, and where `data` starts in it (Memory::view_of
  // makes a slot of it; `data` is gone once the mapping is taken).
  FileBytes& file() { return file_; }
  size_t data_offset() const { return data_offset_; }

 private:
  friend Expected<Mapped> map(const std::string& path);
  FileBytes file_;  // what `data` points into
  size_t data_offset_ = 0;
};

Expected<Array> parse(std::span<const uint8_t> bytes);
// Reads and parses a file. Like every parse error, I/O errors do not repeat
// the path: callers print "<path>: <error>".
Expected<Array> load(const std::string& path);

// A version 1.0 file (2.0 if the header needs it), descr '<f2', C order,
// header padded to a multiple of 64 bytes as NumPy writes it.
// The same checks as load, without a copy of the data.
Expected<Mapped> map(const std::string& path);

// The header NumPy writes before '<f2' data of this shape.
Bytes f16_header(std::span<const uint64_t> shape);
Bytes encode_f16(std::span<const uint16_t> values, std::span<const uint64_t> shape);
Status save_f16(const std::string& path, std::span<const uint16_t> values, std::span<const uint64_t> shape);

}  // namespace ane::npy
