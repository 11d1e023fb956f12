// The strict .npy reader and the '<f2' writer. Files are built from bytes
// here (no numpy needed): "\x93NUMPY", version, header length, a Python dict
// literal padded with spaces and ended by '\n', then little-endian data.
#include <cstring>

#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/npy.h"
#include "support.h"

namespace ane {
namespace {

// A .npy file with `dict` as its header, padded so the data starts at a
// multiple of `align`, and `data` after it.
Bytes npy(const std::string& dict, const Bytes& data, int major = 1, uint64_t align = 64) {
  const uint64_t prelude = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prelude + header.size() + 1) % align != 0) header += ' ';
  header += '\n';
  Bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (uint64_t i = 0; i < prelude - 8; ++i) out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Bytes f16_data(std::initializer_list<float> v) {
  Bytes b;
  for (float f : v) {
    const uint16_t h = float_to_fp16(f);
    b.push_back(static_cast<uint8_t>(h));
    b.push_back(static_cast<uint8_t>(h >> 8));
  }
  return b;
}

Bytes f32_data(std::initializer_list<float> v) {
  Bytes b;
  for (float f : v) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }
  return b;
}

std::string error(const Bytes& b) {
  auto a = npy::parse(b);
  return a.ok() ? "" : a.error().str();
}

const std::string kDict4 = "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2, 1, 2), }";

TEST(Npy, ReadsFloat16AsNumpyWritesIt) {
  auto a = npy::parse(npy(kDict4, f16_data({1, -2, 0.5f, 65504})));
  ASSERT_TRUE(a.ok()) << a.error().str();
  EXPECT_EQ(a->dtype, npy::Dtype::F16);
  EXPECT_EQ(a->shape, (std::vector<uint64_t>{1, 2, 1, 2}));
  EXPECT_EQ(a->elements(), 4u);
  EXPECT_EQ(a->to_fp16(), (std::vector<uint16_t>{0x3c00, 0xc000, 0x3800, 0x7bff}));
}

TEST(Npy, ReadsFloat32AndRoundsToNearestEven) {
  // 1 + 2^-11 is a tie (to even: 1.0); 1 + 3 * 2^-11 rounds up to 1 + 2^-9.
  auto a = npy::parse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                          f32_data({1.0f + 0x1p-11f, 1.0f + 0x1.8p-10f, 1e6f})));
  ASSERT_TRUE(a.ok()) << a.error().str();
  EXPECT_EQ(a->dtype, npy::Dtype::F32);
  EXPECT_EQ(a->to_fp16(), (std::vector<uint16_t>{0x3c00, 0x3c02, 0x7c00}));
}

TEST(Npy, AcceptsVersions2And3KeyOrderScalarsAndOldAlignment) {
  EXPECT_EQ(error(npy(kDict4, f16_data({1, 2, 3, 4}), 2)), "");
  EXPECT_EQ(error(npy(kDict4, f16_data({1, 2, 3, 4}), 3)), "");
  EXPECT_EQ(error(npy("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f2\"}", f16_data({1, 2}))), "");
  auto s = npy::parse(npy("{'descr': '<f2', 'fortran_order': False, 'shape': (), }", f16_data({7})));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->shape.empty());
  EXPECT_EQ(s->elements(), 1u);
  EXPECT_EQ(error(npy(kDict4, f16_data({1, 2, 3, 4}), 1, 16)), "") << "NumPy before 1.14 aligned to 16";
  auto z = npy::parse(npy("{'descr': '<f2', 'fortran_order': False, 'shape': (0, 3), }", {}));
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->elements(), 0u);
}

TEST(Npy, RejectsEverythingElseWithOneLine) {
  const Bytes ok = npy(kDict4, f16_data({1, 2, 3, 4}));
  Bytes bad_magic = ok;
  bad_magic[1] = 'n';
  Bytes bad_version = ok;
  bad_version[6] = 4;
  Bytes truncated(ok.begin(), ok.begin() + 9);
  Bytes long_header = ok;
  long_header[8] = 0xff;
  long_header[9] = 0xff;
  Bytes no_newline = ok;
  no_newline[127] = ' ';  // the header is 0x76 bytes: it ends at 0x80
  Bytes control = ok;
  control[20] = 0x01;
  const std::vector<std::pair<Bytes, std::string>> cases = {
      {bad_magic, "offset 0x0: not a .npy file (no \\x93NUMPY magic)"},
      {bad_version, "offset 0x6: .npy version 4.0 is not supported (1.0, 2.0 or 3.0)"},
      {truncated, "offset 0x8: file ends inside the header length"},
      {long_header, "offset 0x8: header length 0xffff runs past the end of the file (0x88 bytes)"},
      {no_newline, "offset 0x7f: header does not end with '\\n'"},
      {control, "offset 0x14: header holds a non-ASCII or control character"},
      {npy(kDict4, f16_data({1, 2, 3, 4}), 1, 2), "offset 0x8: header ends at 0x4c, not at a multiple of 16 (.npy pads it)"},
      {npy("{'descr': '>f2', 'fortran_order': False, 'shape': (4,), }", f16_data({1, 2, 3, 4})),
       "offset 0xa: descr '>f2' is not supported (little-endian '<f2' float16 or '<f4' float32)"},
      {npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", f32_data({1, 2})),
       "offset 0xa: descr '<f8' is not supported (little-endian '<f2' float16 or '<f4' float32)"},
      {npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", f16_data({1})),
       "offset 0xa: descr '|u1' is not supported (little-endian '<f2' float16 or '<f4' float32)"},
      {npy("{'descr': '<f2', 'fortran_order': True, 'shape': (4,), }", f16_data({1, 2, 3, 4})),
       "offset 0xa: fortran_order True is not supported (C order only)"},
      {npy("{'descr': '<f2', 'fortran_order': False, 'shape': (4), }", f16_data({1, 2, 3, 4})),
       "offset 0x3f: header dict: shape (n) is not a tuple: write (n,)"},
      {npy("{'descr': '<f2', 'fortran_order': False, 'shape': [4], }", f16_data({1, 2, 3, 4})),
       "offset 0x3c: header dict: shape must be a tuple"},
      {npy("{'descr': '<f2', 'fortran_order': False, 'shape': (-4,), }", f16_data({1, 2, 3, 4})),
       "offset 0x3d: header dict: expected a non-negative integer"},
      {npy("{'descr': '<f2', 'fortran_order': False, 'shape': (4,), 'x': 1}", f16_data({1, 2, 3, 4})),
       "offset 0x42: header dict: unknown key 'x'"},
      {npy("{'descr': '<f2', 'descr': '<f2', 'shape': (4,), }", f16_data({1, 2, 3, 4})),
       "offset 0x1b: header dict: repeated key 'descr'"},
      {npy("{'descr': '<f2', 'shape': (4,), }", f16_data({1, 2, 3, 4})), "offset 0xa: header dict lacks 'fortran_order'"},
      {npy("{'descr': '<f2', 'fortran_order': False, 'shape': (4,), } x", f16_data({1, 2, 3, 4})),
       "offset 0x44: header dict: only spaces may follow the dict"},
      {npy("{'descr': '<f2' 'fortran_order': False, 'shape': (4,), }", f16_data({1, 2, 3, 4})),
       "offset 0x1a: header dict: expected ',' or '}'"},
      {npy(kDict4, f16_data({1, 2, 3})), "offset 0x80: data is 0x6 bytes; 4 elements of <f2 need 0x8"},
      {npy(kDict4, f16_data({1, 2, 3, 4, 5})), "offset 0x80: data is 0xa bytes; 4 elements of <f2 need 0x8"},
      {npy("{'descr': '<f2', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }", {}),
       "offset 0xa: shape has too many elements"},
  };
  for (const auto& [bytes, want] : cases) {
    EXPECT_EQ(error(bytes), want);
    EXPECT_EQ(want.find('\n'), std::string::npos);
  }
}

TEST(Npy, WriterMatchesNumpyByteForByte) {
  // numpy.save(f, numpy.array([[[[1, -2]]]], dtype='<f2')): the 10-byte
  // prelude, the 65-byte dict and '\n' are padded with spaces to 128 bytes.
  const std::vector<uint16_t> v = {0x3c00, 0xc000};
  const std::vector<uint64_t> shape = {1, 1, 1, 2};
  const Bytes b = npy::encode_f16(v, shape);
  const std::string dict = "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 1, 2), }";
  ASSERT_EQ(b.size(), 128u + 4u);
  EXPECT_EQ(b, npy(dict, {0x00, 0x3c, 0x00, 0xc0}));
  auto back = npy::parse(b);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shape, shape);
  EXPECT_EQ(back->to_fp16(), v);
  const std::vector<uint64_t> one = {3};
  const Bytes c = npy::encode_f16(std::vector<uint16_t>{1, 2, 3}, one);
  EXPECT_NE(std::string(c.begin(), c.end()).find("'shape': (3,)"), std::string::npos);
}

TEST(Npy, LoadReportsIoErrors) {
  auto a = npy::load("/nonexistent/dir/x.npy");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().str().rfind("cannot open: ", 0), 0u) << a.error().str();
}

}  // namespace
}  // namespace ane
