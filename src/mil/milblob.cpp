// MILBlob v2 weight files (the weights/weight.bin of a .mlmodelc): a
// bounds-checked reader. The format and what is checked: docs/mil-weights.md.
// Errors carry the header's (0) or the record's offset in Error::offset and
// say what is wrong in the message, so that `path + ": " + error.str()`
// reads "weights/weight.bin: offset 0x40: blob sentinel ...".
#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string>

#include "ane/mil.h"

namespace ane::mil {

namespace {

constexpr uint64_t kAlignment = 64;  // header, records and data
constexpr uint64_t kHeaderBytes = 64;
constexpr uint64_t kRecordBytes = 64;
constexpr uint32_t kSentinel = 0xDEADBEEF;
constexpr uint32_t kVersion = 2;

// Little-endian loads; the caller has checked that the bytes are there.
uint32_t load_u32(std::span<const uint8_t> b, uint64_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | b[at + i];
  return v;
}
uint64_t load_u64(std::span<const uint8_t> b, uint64_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[at + i];
  return v;
}

// [off, off + len) lies inside `size` bytes, without overflow.
bool fits(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

// "fp32 data" or "data of unknown type 0x63".
std::string held_type(uint32_t code) {
  const char* name = blob_data_type_name(code);
  if (std::string_view(name) == "unknown") return fmt::format("data of unknown type {:#x}", code);
  return fmt::format("{} data", name);
}

}  // namespace

const char* blob_data_type_name(uint32_t code) {
  switch (static_cast<BlobDataType>(code)) {
    case BlobDataType::Fp16:
      return "fp16";
    case BlobDataType::Fp32:
      return "fp32";
    case BlobDataType::UInt8:
      return "uint8";
    case BlobDataType::Int8:
      return "int8";
    case BlobDataType::BFloat16:
      return "bf16";
    case BlobDataType::Int16:
      return "int16";
    case BlobDataType::UInt16:
      return "uint16";
    case BlobDataType::Int4:
      return "int4";
    case BlobDataType::UInt1:
      return "uint1";
    case BlobDataType::UInt2:
      return "uint2";
    case BlobDataType::UInt4:
      return "uint4";
    case BlobDataType::UInt3:
      return "uint3";
    case BlobDataType::UInt6:
      return "uint6";
    case BlobDataType::Int32:
      return "int32";
    case BlobDataType::UInt32:
      return "uint32";
    case BlobDataType::Fp8E4M3FN:
      return "fp8e4m3fn";
    case BlobDataType::Fp8E5M2:
      return "fp8e5m2";
  }
  return "unknown";
}

Expected<BlobFile> BlobFile::open(std::span<const uint8_t> bytes, const std::string& path) {
  auto fail = [](const std::string& what) { return make_error(0, what); };
  if (bytes.size() < kHeaderBytes)
    return fail(
        fmt::format("file of {:#x} bytes is shorter than the {}-byte MILBlob header", bytes.size(), kHeaderBytes));
  BlobFile file;
  file.bytes_ = bytes;
  file.path_ = path;
  file.header_.count = load_u32(bytes, 0);  // not checked: records are found by offset
  file.header_.version = load_u32(bytes, 4);
  if (file.header_.version != kVersion)
    return fail(fmt::format("MILBlob version {}, expected {}", file.header_.version, kVersion));
  return file;
}

Expected<BlobMetadata> BlobFile::metadata(uint64_t offset, BlobDataType expected, uint64_t expected_bytes) const {
  auto fail = [&](const std::string& what) { return make_error(offset, what); };
  const uint64_t file_size = bytes_.size();
  // The record's offset need not be 64-aligned: coremltools' reader does not
  // check it, and Apple's compiler read records at offset 88 (the encoder
  // records of mil-hwx-compiler, whose weights hash to Apple's constants).
  if (!fits(offset, kRecordBytes, file_size))
    return fail(fmt::format("blob metadata record of {:#x} bytes is past the end of the file ({:#x} bytes)",
                            kRecordBytes, file_size));
  BlobMetadata m;
  m.sentinel = load_u32(bytes_, offset);
  m.data_type = load_u32(bytes_, offset + 4);
  m.size = load_u64(bytes_, offset + 8);
  m.data_offset = load_u64(bytes_, offset + 16);
  // Bytes 24..63 (padding bits for sub-byte types, reserved) are not checked:
  // writers before iOS 18 left them uninitialised.
  if (m.sentinel != kSentinel)
    return fail(fmt::format("blob sentinel {:#010x}, expected {:#010x}", m.sentinel, kSentinel));
  const auto want = static_cast<uint32_t>(expected);
  if (m.data_type != want)
    return fail(fmt::format("blob holds {}, the MIL type is {}", held_type(m.data_type), blob_data_type_name(want)));
  // At least what the type needs, read from the data's start: Apple's
  // compiler read a weight and a shorter bias through one record (the
  // convolution records with a bias name one BLOBFILE offset for both).
  if (m.size < expected_bytes)
    return fail(fmt::format("blob of {:#x} bytes, the MIL type needs {:#x}", m.size, expected_bytes));
  // The data may overlap the header or any record (a writer that left the
  // data offset 0 had Apple's compiler read the header bytes as data).
  if (m.data_offset % kAlignment != 0)
    return fail(fmt::format("data offset {:#x} is not {}-aligned", m.data_offset, kAlignment));
  if (!fits(m.data_offset, m.size, file_size))
    return fail(fmt::format("data offset {:#x} + size {:#x} is past the end of the file ({:#x} bytes)", m.data_offset,
                            m.size, file_size));
  return m;
}

std::span<const uint8_t> BlobFile::data(const BlobMetadata& m) const {
  if (!fits(m.data_offset, m.size, bytes_.size())) return {};
  return bytes_.subspan(m.data_offset, m.size);
}

}  // namespace ane::mil
