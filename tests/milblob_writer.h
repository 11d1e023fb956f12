// A test-side MILBlob v2 writer: weight files for Core ML test models, laid
// out as coremltools' StorageWriter lays them out (docs/mil-weights.md):
// a 64-byte header (u32 count, u32 version 2, zeros), then per blob, in
// order, its 64-byte metadata record at the end of the file rounded up to
// 64 (zeros fill the gap) and its data right after the record. The file ends
// with the last blob's data, unpadded.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ane/bytes.h"
#include "ane/mil.h"

namespace ane::test {

struct MilBlob {
  mil::BlobDataType type = mil::BlobDataType::Fp16;
  Bytes data;                 // written as is; its size is the record's size in bytes
  uint64_t padding_bits = 0;  // padding_size_in_bits (sub-byte types; 0 otherwise)
};

struct MilBlobFile {
  Bytes bytes;                    // the whole weight.bin
  std::vector<uint64_t> offsets;  // each blob's metadata offset: its BLOBFILE offset
};

MilBlobFile write_milblob(std::span<const MilBlob> blobs);

// Little-endian data of fp16 bit patterns, fp32 values.
Bytes fp16_data(std::span<const uint16_t> values);
Bytes fp32_data(std::span<const float> values);

}  // namespace ane::test
