// A test-side MILBlob v2 writer (milblob_writer.h).
#include "milblob_writer.h"

#include <bit>

namespace ane::test {

namespace {
constexpr uint64_t kAlignment = 64;
uint64_t align_up(uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }
}  // namespace

MilBlobFile write_milblob(std::span<const MilBlob> blobs) {
  MilBlobFile out;
  out.bytes.assign(64, 0);
  put_u32(out.bytes, 0, static_cast<uint32_t>(blobs.size()));  // count
  put_u32(out.bytes, 4, 2);                                    // version
  for (const MilBlob& blob : blobs) {
    const uint64_t record = align_up(out.bytes.size());
    const uint64_t data = record + 64;
    out.bytes.resize(data, 0);  // the gap and the record's reserved bytes are zeros
    put_u32(out.bytes, record, 0xDEADBEEF);
    put_u32(out.bytes, record + 4, static_cast<uint32_t>(blob.type));
    put_u64(out.bytes, record + 8, blob.data.size());
    put_u64(out.bytes, record + 16, data);
    put_u64(out.bytes, record + 24, blob.padding_bits);
    put_bytes(out.bytes, data, blob.data);
    out.offsets.push_back(record);
  }
  return out;
}

Bytes fp16_data(std::span<const uint16_t> values) {
  Bytes b;
  for (size_t i = 0; i < values.size(); ++i) put_u16(b, 2 * i, values[i]);
  return b;
}

Bytes fp32_data(std::span<const float> values) {
  Bytes b;
  for (size_t i = 0; i < values.size(); ++i) put_u32(b, 4 * i, std::bit_cast<uint32_t>(values[i]));
  return b;
}

}  // namespace ane::test
