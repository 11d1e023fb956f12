// Tensor constants from a weight blob (blob_constant.h).
#include "blob_constant.h"

#include <cstring>

namespace ane::test {

namespace {

void put_u32(Bytes& b, uint64_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(Bytes& b, uint64_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get(const Bytes& b, uint64_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= at + i < b.size() ? uint64_t{b[at + i]} << (8 * i) : 0;
  return v;
}

}  // namespace

Bytes minted_weight_file(uint64_t payload_bytes) {
  Bytes file(128 + payload_bytes, 0);
  put_u32(file, 0, 1);
  put_u32(file, 4, 2);
  put_u32(file, 64, 0xDEADBEEF);
  put_u64(file, 68, payload_bytes);
  put_u64(file, 76, 128);
  for (uint64_t i = 0; i + 1 < payload_bytes; i += 2) {
    file[128 + i] = 0x00;  // fp16 0.5 = 0x3800, little-endian
    file[128 + i + 1] = 0x38;
  }
  return file;
}

BlobMetadata read_blob_metadata(const Bytes& file, uint64_t at) {
  BlobMetadata m;
  m.sentinel = static_cast<uint32_t>(get(file, at, 4));
  m.data_type = static_cast<uint32_t>(get(file, at + 4, 4));
  m.size = get(file, at + 8, 8);
  m.offset = get(file, at + 16, 8);
  return m;
}

std::vector<uint16_t> blob_values(const Bytes& file, uint64_t at, uint64_t count) {
  const BlobMetadata m = read_blob_metadata(file, at);
  std::vector<uint16_t> values(count);
  for (uint64_t i = 0; i < count; ++i) values[i] = static_cast<uint16_t>(get(file, m.offset + 2 * i, 2));
  return values;
}

Bytes blob_constant_section(const std::string& operation, const std::vector<uint16_t>& values) {
  auto row = [](const std::vector<uint16_t>& v) {
    Bytes b(2 * v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      b[2 * i] = static_cast<uint8_t>(v[i]);
      b[2 * i + 1] = static_cast<uint8_t>(v[i] >> 8);
    }
    return b;
  };
  const Bytes mine = row(values);
  Bytes section;
  if (operation == "add") {
    section = mine;
    const Bytes ones = row(std::vector<uint16_t>(values.size(), 0x3c00));
    section.insert(section.end(), ones.begin(), ones.end());
  } else if (operation == "sub") {
    // (x + -v) * 1: each value with its sign flipped (0 as -0), then ones
    // (the H13 records binary_sub_c{64,512}_constant_blob hash so).
    std::vector<uint16_t> negated(values);
    for (uint16_t& v : negated) v ^= 0x8000;
    section = row(negated);
    const Bytes ones = row(std::vector<uint16_t>(values.size(), 0x3c00));
    section.insert(section.end(), ones.begin(), ones.end());
  } else if (operation == "mul" || operation == "real_div") {  // real_div: `values` are 1/z
    section.assign(mine.size(), 0);
    section.insert(section.end(), mine.begin(), mine.end());
  } else if (operation == "maximum" || operation == "minimum") {
    section = mine;
  }
  return section;
}

}  // namespace ane::test
