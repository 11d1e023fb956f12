// MILBlob v2 weight files: the test-side writer's layout against offsets
// worked out by hand from coremltools' StorageWriter, and the reader's
// checks, each made to fail on a mutated byte with its exact message.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ane/mil.h"
#include "blob_constant.h"
#include "milblob_writer.h"

namespace ane {
namespace {

using mil::BlobDataType;
using mil::BlobFile;
using test::MilBlob;

const std::string kPath = "weights/weight.bin";

// One fp16 blob of three values: header 0..63, record 64..127, data 128..133.
Bytes one_blob_file() {
  const std::vector<uint16_t> v = {0x3c00, 0x4000, 0xc000};
  const std::vector<MilBlob> blobs = {{BlobDataType::Fp16, test::fp16_data(v)}};
  auto f = test::write_milblob(blobs);
  EXPECT_EQ(f.offsets, std::vector<uint64_t>{64});
  EXPECT_EQ(f.bytes.size(), 134u);
  return f.bytes;
}

Bytes slice(const Bytes& b, size_t at, size_t n) { return Bytes(b.begin() + at, b.begin() + at + n); }

// An error as a caller reports it: the path, then Error::str() (the offset,
// then the message). The message itself never holds the path.
std::string reported(const Error& e) {
  EXPECT_EQ(e.message.find(kPath), std::string::npos) << e.message;
  return kPath + ": " + e.str();
}

// metadata()'s error as reported, or "ok".
std::string metadata_error(const Bytes& file, uint64_t offset, BlobDataType t, uint64_t bytes) {
  auto f = BlobFile::open(file, kPath);
  if (!f) return "open: " + reported(f.error());
  auto m = f->metadata(offset, t, bytes);
  if (m) return "ok";
  EXPECT_EQ(m.error().offset, offset);
  return reported(m.error());
}

TEST(MilBlob, DataTypeNames) {
  const std::vector<std::pair<uint32_t, std::string>> names = {
      {1, "fp16"},       {2, "fp32"},     {3, "uint8"},   {4, "int8"},     {5, "bf16"},
      {6, "int16"},      {7, "uint16"},   {8, "int4"},    {9, "uint1"},    {10, "uint2"},
      {11, "uint4"},     {12, "uint3"},   {13, "uint6"},  {14, "int32"},   {15, "uint32"},
      {16, "fp8e4m3fn"}, {17, "fp8e5m2"}, {0, "unknown"}, {18, "unknown"}, {0xDEADBEEF, "unknown"}};
  for (const auto& [code, name] : names) EXPECT_EQ(mil::blob_data_type_name(code), name) << code;
}

TEST(MilBlob, WriterLayout) {
  // 6 bytes of fp16, 80 of fp32, 1 of uint8. Each record goes at the end of
  // the file rounded up to 64, its data right after it:
  //   record 64 (data 128..133), record 192 (data 256..335), record 384 (data 448).
  const std::vector<uint16_t> h = {0x3c00, 0x4000, 0xc000};
  std::vector<float> f(20);
  for (int i = 0; i < 20; ++i) f[i] = static_cast<float>(i) - 0.5f;
  const std::vector<MilBlob> blobs = {{BlobDataType::Fp16, test::fp16_data(h)},
                                      {BlobDataType::Fp32, test::fp32_data(f)},
                                      {BlobDataType::UInt8, {0xa5}}};
  const auto out = test::write_milblob(blobs);
  EXPECT_EQ(out.offsets, (std::vector<uint64_t>{64, 192, 384}));
  ASSERT_EQ(out.bytes.size(), 449u);

  Bytes header(64, 0);
  header[0] = 3;  // count
  header[4] = 2;  // version
  EXPECT_EQ(slice(out.bytes, 0, 64), header);

  auto record = [](uint8_t type, uint8_t size, uint16_t data) {
    Bytes r(64, 0);
    r[0] = 0xef, r[1] = 0xbe, r[2] = 0xad, r[3] = 0xde;
    r[4] = type;
    r[8] = size;
    r[16] = static_cast<uint8_t>(data), r[17] = static_cast<uint8_t>(data >> 8);
    return r;
  };
  EXPECT_EQ(slice(out.bytes, 64, 64), record(1, 6, 128));
  EXPECT_EQ(slice(out.bytes, 192, 64), record(2, 80, 256));
  EXPECT_EQ(slice(out.bytes, 384, 64), record(3, 1, 448));

  EXPECT_EQ(slice(out.bytes, 128, 6), (Bytes{0x00, 0x3c, 0x00, 0x40, 0x00, 0xc0}));
  EXPECT_EQ(slice(out.bytes, 256, 8), (Bytes{0x00, 0x00, 0x00, 0xbf, 0x00, 0x00, 0x00, 0x3f}));  // -0.5, 0.5
  EXPECT_EQ(slice(out.bytes, 332, 4), (Bytes{0x00, 0x00, 0x94, 0x41}));                          // 18.5
  EXPECT_EQ(out.bytes[448], 0xa5);
  EXPECT_EQ(slice(out.bytes, 134, 192 - 134), Bytes(58, 0));  // gaps are zeros
  EXPECT_EQ(slice(out.bytes, 336, 384 - 336), Bytes(48, 0));
}

TEST(MilBlob, WriterEmptyFileAndEmptyBlob) {
  const auto none = test::write_milblob({});
  Bytes header(64, 0);
  header[4] = 2;
  EXPECT_EQ(none.bytes, header);
  EXPECT_TRUE(none.offsets.empty());

  // An empty blob's data offset is where the next record goes (coremltools'
  // writer appends nothing, so the next aligned offset is that one).
  const std::vector<MilBlob> blobs = {{BlobDataType::Fp16, {}}, {BlobDataType::Int4, {0x21}, 4}};
  const auto out = test::write_milblob(blobs);
  EXPECT_EQ(out.offsets, (std::vector<uint64_t>{64, 128}));
  ASSERT_EQ(out.bytes.size(), 193u);
  EXPECT_EQ(out.bytes[64 + 16], 128);  // empty blob's data offset
  EXPECT_EQ(out.bytes[128 + 4], 8);    // int4
  EXPECT_EQ(out.bytes[128 + 16], 192);
  EXPECT_EQ(out.bytes[128 + 24], 4);  // padding bits
  EXPECT_EQ(out.bytes[192], 0x21);

  auto file = BlobFile::open(out.bytes, kPath);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->header().count, 2u);
  auto empty = file->metadata(64, BlobDataType::Fp16, 0);
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_EQ(empty->data_offset, 128u);
  EXPECT_TRUE(file->data(*empty).empty());
  auto nibbles = file->metadata(128, BlobDataType::Int4, 1);
  ASSERT_TRUE(nibbles) << nibbles.error().message;
  EXPECT_EQ(file->data(*nibbles).size(), 1u);
  EXPECT_EQ(file->data(*nibbles)[0], 0x21);
}

TEST(MilBlob, RoundTrip) {
  const std::vector<uint16_t> h = {0x3c00, 0x4000, 0xc000, 0x7bff};
  const std::vector<float> f = {1.5f, -2.0f, 3.25f};
  const Bytes u = {1, 2, 3, 250, 255};
  const std::vector<MilBlob> blobs = {
      {BlobDataType::Fp16, test::fp16_data(h)}, {BlobDataType::Fp32, test::fp32_data(f)}, {BlobDataType::UInt8, u}};
  const auto out = test::write_milblob(blobs);
  auto file = BlobFile::open(out.bytes, kPath);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->header().count, 3u);
  EXPECT_EQ(file->header().version, 2u);

  auto m0 = file->metadata(out.offsets[0], BlobDataType::Fp16, 8);
  ASSERT_TRUE(m0) << m0.error().message;
  EXPECT_EQ(m0->sentinel, 0xDEADBEEFu);
  EXPECT_EQ(m0->data_type, 1u);
  EXPECT_EQ(m0->size, 8u);
  EXPECT_EQ(m0->data_offset, 128u);
  const auto d0 = file->data(*m0);
  EXPECT_EQ(Bytes(d0.begin(), d0.end()), (Bytes{0x00, 0x3c, 0x00, 0x40, 0x00, 0xc0, 0xff, 0x7b}));

  auto m1 = file->metadata(out.offsets[1], BlobDataType::Fp32, 12);
  ASSERT_TRUE(m1) << m1.error().message;
  EXPECT_EQ(m1->data_offset, 256u);
  const auto d1 = file->data(*m1);
  EXPECT_EQ(Bytes(d1.begin(), d1.end()),
            (Bytes{0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x50, 0x40}));

  auto m2 = file->metadata(out.offsets[2], BlobDataType::UInt8, 5);
  ASSERT_TRUE(m2) << m2.error().message;
  EXPECT_EQ(m2->data_offset, 384u);
  const auto d2 = file->data(*m2);
  EXPECT_EQ(Bytes(d2.begin(), d2.end()), u);
  EXPECT_EQ(d2.data(), out.bytes.data() + 384);  // a view, not a copy
}

TEST(MilBlob, HeaderChecks) {
  const Bytes good = one_blob_file();
  for (size_t n = 0; n < 64; ++n) {
    auto f = BlobFile::open(slice(good, 0, n), kPath);
    ASSERT_FALSE(f) << n;
    EXPECT_EQ(f.error().offset, 0u);
    EXPECT_EQ(reported(f.error()),
              fmt::format(
                  "weights/weight.bin: offset 0x0: file of {:#x} bytes is shorter than the 64-byte MILBlob header", n));
  }
  // Each byte of the version.
  const std::vector<std::pair<int, std::string>> versions = {{4, "1"}, {5, "258"}, {6, "65538"}, {7, "2147483650"}};
  for (const auto& [at, found] : versions) {
    Bytes b = good;
    b[at] = at == 7 ? 0x80 : 1;
    auto f = BlobFile::open(b, kPath);
    ASSERT_FALSE(f) << at;
    EXPECT_EQ(f.error().offset, 0u);
    EXPECT_EQ(reported(f.error()), "weights/weight.bin: offset 0x0: MILBlob version " + found + ", expected 2");
  }
  // The count and the reserved bytes are not checked.
  for (int at : {0, 1, 2, 3, 8, 31, 63}) {
    Bytes b = good;
    b[at] = 0xff;
    auto f = BlobFile::open(b, kPath);
    ASSERT_TRUE(f) << at << ": " << f.error().message;
    EXPECT_TRUE(f->metadata(64, BlobDataType::Fp16, 6)) << at;
  }
  Bytes zero_count = good;
  zero_count[0] = 0;
  auto f = BlobFile::open(zero_count, kPath);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header().count, 0u);
}

TEST(MilBlob, RecordOffsetChecks) {
  const Bytes good = one_blob_file();
  EXPECT_EQ(metadata_error(good, 64, BlobDataType::Fp16, 6), "ok");
  // Any offset may hold a record (Apple's compiler read one at 88); here
  // none of 65..127 does: a wrong sentinel, or a record past the end.
  for (uint64_t off = 65; off < 128; ++off) {
    const std::string e = metadata_error(good, off, BlobDataType::Fp16, 6);
    EXPECT_EQ(e.rfind(fmt::format("weights/weight.bin: offset {:#x}: ", off), 0), 0u) << e;
    EXPECT_TRUE(e.find(off + 64 > 0x86 ? "past the end of the file" : "blob sentinel") != std::string::npos) << e;
  }
  // 128 + 64 > 134; the largest aligned offset must not wrap around.
  EXPECT_EQ(metadata_error(good, 128, BlobDataType::Fp16, 6),
            "weights/weight.bin: offset 0x80: blob metadata record of 0x40 bytes is past the end of the file "
            "(0x86 bytes)");
  EXPECT_EQ(metadata_error(good, 0xffffffffffffffc0, BlobDataType::Fp16, 6),
            "weights/weight.bin: offset 0xffffffffffffffc0: blob metadata record of 0x40 bytes is past the end of "
            "the file (0x86 bytes)");
  // Offset 0 is aligned and inside: the header is read as a record (count 1
  // where the sentinel would be).
  EXPECT_EQ(metadata_error(good, 0, BlobDataType::Fp16, 6),
            "weights/weight.bin: offset 0x0: blob sentinel 0x00000001, expected 0xdeadbeef");
}

// Every byte of the checked fields of the record at 64, set to a new value.
TEST(MilBlob, RecordFieldChecks) {
  struct Case {
    int at;  // byte in the record
    uint8_t value;
    std::string what;  // after "weights/weight.bin: offset 0x40: "
  };
  const std::vector<Case> cases = {
      {0, 0x00, "blob sentinel 0xdeadbe00, expected 0xdeadbeef"},
      {1, 0x00, "blob sentinel 0xdead00ef, expected 0xdeadbeef"},
      {2, 0x00, "blob sentinel 0xde00beef, expected 0xdeadbeef"},
      {3, 0x00, "blob sentinel 0x00adbeef, expected 0xdeadbeef"},
      {4, 0x02, "blob holds fp32 data, the MIL type is fp16"},
      {4, 0x05, "blob holds bf16 data, the MIL type is fp16"},
      {4, 0x00, "blob holds data of unknown type 0x0, the MIL type is fp16"},
      {5, 0x01, "blob holds data of unknown type 0x101, the MIL type is fp16"},
      {6, 0x01, "blob holds data of unknown type 0x10001, the MIL type is fp16"},
      {7, 0x80, "blob holds data of unknown type 0x80000001, the MIL type is fp16"},
      {8, 0x04, "blob of 0x4 bytes, the MIL type needs 0x6"},
      {8, 0x07, "data offset 0x80 + size 0x7 is past the end of the file (0x86 bytes)"},
      {9, 0x01, "data offset 0x80 + size 0x106 is past the end of the file (0x86 bytes)"},
      {10, 0x01, "data offset 0x80 + size 0x10006 is past the end of the file (0x86 bytes)"},
      {11, 0x01, "data offset 0x80 + size 0x1000006 is past the end of the file (0x86 bytes)"},
      {12, 0x01, "data offset 0x80 + size 0x100000006 is past the end of the file (0x86 bytes)"},
      {13, 0x01, "data offset 0x80 + size 0x10000000006 is past the end of the file (0x86 bytes)"},
      {14, 0x01, "data offset 0x80 + size 0x1000000000006 is past the end of the file (0x86 bytes)"},
      {15, 0x01, "data offset 0x80 + size 0x100000000000006 is past the end of the file (0x86 bytes)"},
      {16, 0x81, "data offset 0x81 is not 64-aligned"},
      {16, 0x90, "data offset 0x90 is not 64-aligned"},
      {16, 0xc0, "data offset 0xc0 + size 0x6 is past the end of the file (0x86 bytes)"},
      {17, 0x01, "data offset 0x180 + size 0x6 is past the end of the file (0x86 bytes)"},
      {18, 0x01, "data offset 0x10080 + size 0x6 is past the end of the file (0x86 bytes)"},
      {19, 0x01, "data offset 0x1000080 + size 0x6 is past the end of the file (0x86 bytes)"},
      {20, 0x01, "data offset 0x100000080 + size 0x6 is past the end of the file (0x86 bytes)"},
      {21, 0x01, "data offset 0x10000000080 + size 0x6 is past the end of the file (0x86 bytes)"},
      {22, 0x01, "data offset 0x1000000000080 + size 0x6 is past the end of the file (0x86 bytes)"},
      {23, 0x01, "data offset 0x100000000000080 + size 0x6 is past the end of the file (0x86 bytes)"},
  };
  const Bytes good = one_blob_file();
  for (const Case& c : cases) {
    Bytes b = good;
    b[64 + c.at] = c.value;
    EXPECT_EQ(metadata_error(b, 64, BlobDataType::Fp16, 6), "weights/weight.bin: offset 0x40: " + c.what)
        << "byte " << c.at;
  }
  // The caller's expectations against an intact record.
  EXPECT_EQ(metadata_error(good, 64, BlobDataType::Fp32, 6),
            "weights/weight.bin: offset 0x40: blob holds fp16 data, the MIL type is fp32");
  EXPECT_EQ(metadata_error(good, 64, BlobDataType::Fp16, 0x100),
            "weights/weight.bin: offset 0x40: blob of 0x6 bytes, the MIL type needs 0x100");
  // Padding bits and reserved bytes (24..63) are not checked.
  for (int at = 24; at < 64; ++at) {
    Bytes b = good;
    b[64 + at] = 0xff;
    EXPECT_EQ(metadata_error(b, 64, BlobDataType::Fp16, 6), "ok") << "byte " << at;
  }
}

// The layout of mil-hwx-compiler's encoder weight files: 24-byte records at
// 64 and 88 (not 64-aligned, each overlapping the other's reserved bytes),
// which Apple's compiler read. A record may also hold more than the type
// needs (a bias read through a weight's record).
TEST(MilBlob, UnalignedRecordsAndLongerBlobs) {
  Bytes b(256, 0);
  put_u32(b, 4, 2);
  auto record = [&](uint64_t at, uint64_t size, uint64_t data) {
    put_u32(b, at, 0xdeadbeef);
    put_u32(b, at + 4, 1);
    put_u64(b, at + 8, size);
    put_u64(b, at + 16, data);
  };
  record(64, 64, 128);
  record(88, 32, 192);
  auto f = BlobFile::open(b, kPath);
  ASSERT_TRUE(f);
  auto w = f->metadata(64, BlobDataType::Fp16, 64);
  ASSERT_TRUE(w) << w.error().str();
  EXPECT_EQ(w->data_offset, 128u);
  auto bias = f->metadata(88, BlobDataType::Fp16, 16);  // 8 values of a 16-value blob
  ASSERT_TRUE(bias) << bias.error().str();
  EXPECT_EQ(bias->data_offset, 192u);
  EXPECT_EQ(f->data(*bias).size(), 32u);
  EXPECT_EQ(metadata_error(b, 88, BlobDataType::Fp16, 34),
            "weights/weight.bin: offset 0x58: blob of 0x20 bytes, the MIL type needs 0x22");
}

TEST(MilBlob, DataRangeIsOverflowSafe) {
  // 128 bytes of data: data offset + size wraps around 2^64.
  const std::vector<MilBlob> blobs = {{BlobDataType::UInt8, Bytes(128, 7)}};
  Bytes b = test::write_milblob(blobs).bytes;
  ASSERT_EQ(b.size(), 256u);
  EXPECT_EQ(metadata_error(b, 64, BlobDataType::UInt8, 128), "ok");
  put_u64(b, 64 + 16, 0xffffffffffffffc0);
  EXPECT_EQ(metadata_error(b, 64, BlobDataType::UInt8, 128),
            "weights/weight.bin: offset 0x40: data offset 0xffffffffffffffc0 + size 0x80 is past the end of the file "
            "(0x100 bytes)");
  // The size alone past the end, at an in-file data offset.
  b = test::write_milblob(blobs).bytes;
  put_u64(b, 64 + 8, 0xffffffffffffffff);
  EXPECT_EQ(metadata_error(b, 64, BlobDataType::UInt8, 0xffffffffffffffff),
            "weights/weight.bin: offset 0x40: data offset 0x80 + size 0xffffffffffffffff is past the end of the "
            "file (0x100 bytes)");
  // data() of an unchecked record that does not fit is empty.
  auto file = BlobFile::open(b, kPath);
  ASSERT_TRUE(file);
  EXPECT_TRUE(file->data(mil::BlobMetadata{0xDEADBEEF, 3, 0x80, 0xffffffffffffffc0}).empty());
  EXPECT_TRUE(file->data(mil::BlobMetadata{0xDEADBEEF, 3, 0x81, 0x80}).empty());
  EXPECT_EQ(file->data(mil::BlobMetadata{0xDEADBEEF, 3, 0x80, 0x80}).size(), 0x80u);
}

TEST(MilBlob, DataMayOverlapHeaderAndRecords) {
  // 64 bytes of fp16 data. With data offset 0 the "data" is the header;
  // with 64 it is the record itself. Both are read, not refused.
  const std::vector<MilBlob> blobs = {{BlobDataType::Fp16, Bytes(64, 0x11)}};
  const Bytes good = test::write_milblob(blobs).bytes;
  ASSERT_EQ(good.size(), 192u);
  for (uint64_t data_offset : {0, 64}) {
    Bytes b = good;
    put_u64(b, 64 + 16, data_offset);
    auto file = BlobFile::open(b, kPath);
    ASSERT_TRUE(file);
    auto m = file->metadata(64, BlobDataType::Fp16, 64);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(m->data_offset, data_offset);
    const auto d = file->data(*m);
    ASSERT_EQ(d.size(), 64u);
    EXPECT_EQ(d.data(), b.data() + data_offset);
    EXPECT_EQ(Bytes(d.begin(), d.end()), slice(b, data_offset, 64));
  }
  Bytes b = good;
  put_u64(b, 64 + 16, 0);
  auto file = BlobFile::open(b, kPath);
  auto m = file->metadata(64, BlobDataType::Fp16, 64);
  ASSERT_TRUE(m);
  const auto d = file->data(*m);
  EXPECT_EQ(slice(Bytes(d.begin(), d.end()), 0, 8), (Bytes{1, 0, 0, 0, 2, 0, 0, 0}));  // count 1, version 2
}

// The weight file of mil-hwx-compiler's campaigns (blob_constant.h) packs its
// record without alignment: the data type field holds the payload size and
// the size field 128 << 32. libane refuses it at the data type; only its
// data offset 0 alone would be accepted.
TEST(MilBlob, CampaignWeightFileIsRefusedAtItsDataType) {
  const Bytes minted = test::minted_weight_file(128);
  auto file = BlobFile::open(minted, kPath);
  ASSERT_TRUE(file) << file.error().message;
  auto m = file->metadata(64, BlobDataType::Fp16, 128);
  ASSERT_FALSE(m);
  EXPECT_EQ(reported(m.error()),
            "weights/weight.bin: offset 0x40: blob holds data of unknown type 0x80, the MIL type is fp16");
  const test::BlobMetadata raw = test::read_blob_metadata(minted, 64);
  EXPECT_EQ(raw.size, uint64_t{128} << 32);
  EXPECT_EQ(raw.offset, 0u);
}

// Every prefix of a two-blob file, each in a buffer of exactly its length (so
// ASan sees any read past it): opened and read, or refused with the message
// for where it ends.
TEST(MilBlob, EveryTruncationErrorsCleanly) {
  const std::vector<uint16_t> h = {0x3c00, 0x4000, 0xc000};
  const Bytes u = {9, 8, 7, 6, 5};
  const std::vector<MilBlob> blobs = {{BlobDataType::Fp16, test::fp16_data(h)}, {BlobDataType::UInt8, u}};
  const auto out = test::write_milblob(blobs);
  ASSERT_EQ(out.offsets, (std::vector<uint64_t>{64, 192}));
  ASSERT_EQ(out.bytes.size(), 261u);  // record 192, data 256..260
  struct Blob {
    uint64_t record, data, size;
    BlobDataType type;
  };
  const Blob expect[] = {{64, 128, 6, BlobDataType::Fp16}, {192, 256, 5, BlobDataType::UInt8}};
  for (size_t n = 0; n <= out.bytes.size(); ++n) {
    const auto prefix = std::make_unique<uint8_t[]>(n);
    std::copy_n(out.bytes.begin(), n, prefix.get());
    auto file = BlobFile::open(std::span<const uint8_t>(prefix.get(), n), kPath);
    if (n < 64) {
      ASSERT_FALSE(file) << n;
      continue;
    }
    ASSERT_TRUE(file) << n << ": " << file.error().message;
    for (const Blob& e : expect) {
      auto m = file->metadata(e.record, e.type, e.size);
      const std::string at = fmt::format("weights/weight.bin: offset {:#x}: ", e.record);
      if (n < e.record + 64) {
        ASSERT_FALSE(m);
        EXPECT_EQ(reported(m.error()),
                  at + fmt::format("blob metadata record of 0x40 bytes is past the end of the file ({:#x} bytes)", n));
      } else if (n < e.data + e.size) {
        ASSERT_FALSE(m);
        EXPECT_EQ(reported(m.error()), at + fmt::format("data offset {:#x} + size {:#x} is past the end of the file "
                                                        "({:#x} bytes)",
                                                        e.data, e.size, n));
      } else {
        ASSERT_TRUE(m) << n << ": " << m.error().message;
        const auto d = file->data(*m);
        EXPECT_EQ(Bytes(d.begin(), d.end()), slice(out.bytes, e.data, e.size));
      }
    }
  }
}

}  // namespace
}  // namespace ane
