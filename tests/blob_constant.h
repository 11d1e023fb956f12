// Tensor constants from a weight blob in mil-hwx-compiler's constant and
// envelope campaigns (`BLOBFILE(path = "@model_path/weights.bin", offset =
// 64)`): the weight file the campaigns' script writes, the values Apple's
// compiler reads from it, and the constant section it makes of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ane/bytes.h"

namespace ane::test {

// The campaigns' weights.bin for `payload_bytes` of fp16 0.5
// (research/mint_oracles.py, blob() and half_payload()): a 64-byte file
// header (u32 1, u32 2), at 64 the words u32 0xDEADBEEF, u64 payload size,
// u64 128, and the payload at 128.
Bytes minted_weight_file(uint64_t payload_bytes);

// A MILBlob v2 metadata record (coremltools' storage format): u32 sentinel
// 0xDEADBEEF, u32 data type, u64 size in bytes, u64 data offset.
struct BlobMetadata {
  uint32_t sentinel = 0, data_type = 0;
  uint64_t size = 0, offset = 0;
};
BlobMetadata read_blob_metadata(const Bytes& file, uint64_t at);

// The `count` fp16 values of the constant whose metadata is at `at`, read as
// that layout says: from its data offset on, zeros past the file's end.
std::vector<uint16_t> blob_values(const Bytes& file, uint64_t at, uint64_t count);

// The constant section Apple writes for `operation` (add, mul, maximum,
// minimum, sub) of a constant with these values: the values then a row of
// ones (add: (x + b) * 1), the values negated then ones (sub: (x + -b) * 1),
// a row of zeros then the values (mul: (x + 0) * c; real_div, given the
// divisors' reciprocals), the values alone (maximum, minimum). Empty for
// another operation.
Bytes blob_constant_section(const std::string& operation, const std::vector<uint16_t>& values);

}  // namespace ane::test
