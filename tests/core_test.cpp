// fp16 conversion and SHA-256: checked against published vectors and against
// each other (two independent fp16 encoders), not against themselves.
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "ane/bytes.h"
#include "ane/fp16.h"
#include "ane/sha256.h"

namespace ane {
namespace {

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// Reference conversions by arithmetic (ldexp, frexp, nearbyint), written
// independently of the bit-level library code they check.
double reference_decode(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0x1f) return m ? std::nan("") : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

uint16_t reference_encode(double d) {
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  const double a = std::fabs(d);
  if (std::isnan(d)) return 0x7e00;  // sign and payload checked separately
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < 0x1p-14) return sign | static_cast<uint16_t>(std::nearbyint(a * 0x1p24));  // ties to even
  int e;
  const double m = std::frexp(a, &e);
  double sig = std::nearbyint(std::ldexp(m, 11));
  int exp = e - 1;
  if (sig >= 2048.0) {
    sig /= 2;
    ++exp;
  }
  if (exp > 15) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(((exp + 15) << 10) | (static_cast<uint32_t>(sig) & 0x3ff));
}

// The library's NaN rule: quiet NaN, sign and the top 10 payload bits kept.
uint16_t expected_encode(double d) {
  if (!std::isnan(d)) return reference_encode(d);
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return static_cast<uint16_t>(((b >> 48) & 0x8000) | 0x7e00 | ((b >> 42) & 0x3ff));
}

TEST(Fp16, KnownValues) {
  EXPECT_EQ(fp16_to_float(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_float(0xc000), -2.0f);
  EXPECT_EQ(fp16_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(fp16_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(fp16_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_TRUE(std::signbit(fp16_to_float(0x8000)));
  EXPECT_TRUE(std::isinf(fp16_to_float(0x7c00)));
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7e00)));
  EXPECT_EQ(float_to_fp16(0.1f), 0x2e66);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7c00);  // the tie rounds to even: past the largest finite
  EXPECT_EQ(float_to_fp16(-1e9f), 0xfc00);
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);           // tie between 0 and 2^-24: even
  EXPECT_EQ(float_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_fp16(std::ldexp(3.0f, -25)), 0x0002);           // tie between 1 and 2 units: even
  EXPECT_EQ(float_to_fp16(-std::ldexp(1.0f, -30)), 0x8000);          // keeps the sign of zero
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);   // tie: even
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(3.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_fp16(std::ldexp(2047.0f, -25)), 0x0400);        // rounds up into the first normal
  EXPECT_TRUE(fp16_is_nan(float_to_fp16(std::nanf(""))));
}

TEST(Fp16, EveryHalfDecodesExactlyAndRoundTrips) {
  Bytes all(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    all[2 * h] = static_cast<uint8_t>(h);
    all[2 * h + 1] = static_cast<uint8_t>(h >> 8);
  }
  std::vector<float> bulk(65536);
  fp16_to_float_n(all.data(), bulk.data(), bulk.size());
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto x = static_cast<uint16_t>(h);
    const float f = fp16_to_float(x);
    ASSERT_EQ(float_bits(bulk[h]), float_bits(f)) << "bulk " << std::hex << h;
    if (fp16_is_nan(x)) {
      ASSERT_TRUE(std::isnan(f));
      ASSERT_EQ(float_bits(f) >> 31, h >> 15);
      ASSERT_EQ((float_bits(f) >> 13) & 0x3ff, h & 0x3ff);  // payload kept
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), reference_decode(x)) << std::hex << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0);
    ASSERT_EQ(float_to_fp16(f), h) << std::hex << h;
    ASSERT_EQ(double_to_fp16(f), h) << std::hex << h;
  }
}

// Every length from 0 to 40 at every start in a group of 8, both ways, with a
// signalling NaN among the values: the vector loop, its scalar tail and the
// scalar path for a group holding a signalling NaN write the scalar bits, and
// nothing past the end.
TEST(Fp16, BulkConversionsAgreeForEveryLengthAndStart) {
  std::vector<uint16_t> halves(48);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(0x3000 + 0x1d3 * i);
  halves[13] = 0x7c01;  // signalling NaN: VCVTPH2PS would quiet it
  for (size_t start = 0; start < 8; ++start)
    for (size_t n = 0; n <= 40; ++n) {
      std::vector<float> wide(n + 1, -7.0f);
      fp16_to_float_n(halves.data() + start, wide.data(), n);
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(float_bits(wide[i]), float_bits(fp16_to_float(halves[start + i]))) << start << " " << n << " " << i;
      ASSERT_EQ(wide[n], -7.0f) << "wrote past " << n;
      std::vector<uint16_t> narrow(n + 1, 0xabcd);
      float_to_fp16_n(wide.data(), narrow.data(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(narrow[i], float_to_fp16(wide[i])) << start << " " << n << " " << i;
      ASSERT_EQ(narrow[n], 0xabcd) << "wrote past " << n;
    }
}

// Midpoints between neighbouring halves are exact ties: the encoders must
// pick the even neighbour, and a hair above or below must pick the near one.
TEST(Fp16, TiesGoToEvenInBothEncoders) {
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const double lo = fp16_to_float(static_cast<uint16_t>(h)), hi = fp16_to_float(static_cast<uint16_t>(h + 1));
    const double mid = (lo + hi) / 2;
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    ASSERT_EQ(reference_encode(mid), even) << std::hex << h;
    ASSERT_EQ(double_to_fp16(mid), even) << std::hex << h;
    ASSERT_EQ(float_to_fp16(static_cast<float>(mid)), even) << std::hex << h;
    ASSERT_EQ(double_to_fp16(std::nextafter(mid, 0.0)), h);
    ASSERT_EQ(double_to_fp16(std::nextafter(mid, 1e9)), h + 1);
    ASSERT_EQ(float_to_fp16(std::nextafter(static_cast<float>(mid), 0.0f)), h);
    ASSERT_EQ(float_to_fp16(std::nextafter(static_cast<float>(mid), 1e9f)), h + 1);
  }
}

// The bulk encoder (F16C's VCVTPS2PH where the CPU has it, else the portable
// loop) against the scalar one at every rounding boundary, both signs: each
// tie, the floats just below and above it, and the overflow threshold.
TEST(Fp16, BulkEncoderAgreesAtEveryRoundingBoundary) {
  std::vector<float> floats;
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const float mid = static_cast<float>((double(fp16_to_float(static_cast<uint16_t>(h))) +
                                          double(fp16_to_float(static_cast<uint16_t>(h + 1)))) / 2);
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      floats.push_back(f);
      floats.push_back(-f);
    }
  }
  for (float f : {65504.0f, 65519.0f, 65520.0f, std::nextafter(65520.0f, 0.0f), 1e9f})
    for (float g : {f, -f}) floats.push_back(g);
  Bytes out(2 * floats.size());
  float_to_fp16_n(floats.data(), out.data(), floats.size());
  for (size_t i = 0; i < floats.size(); ++i)
    ASSERT_EQ(static_cast<uint16_t>(out[2 * i] | out[2 * i + 1] << 8), float_to_fp16(floats[i]))
        << std::hexfloat << floats[i];
}

TEST(Fp16, EncodersAgreeWithTheArithmeticReference) {
  std::mt19937_64 rng(12345);
  std::vector<float> floats;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 65521) floats.push_back(bits_to_float(static_cast<uint32_t>(b)));
  for (int i = 0; i < 1000000; ++i) floats.push_back(bits_to_float(static_cast<uint32_t>(rng())));
  for (float f : floats) ASSERT_EQ(float_to_fp16(f), expected_encode(f)) << std::hex << float_bits(f);
  // Bulk (F16C where the CPU has it) gives the scalar results.
  Bytes out(2 * floats.size());
  float_to_fp16_n(floats.data(), out.data(), floats.size());
  for (size_t i = 0; i < floats.size(); ++i)
    ASSERT_EQ(static_cast<uint16_t>(out[2 * i] | out[2 * i + 1] << 8), float_to_fp16(floats[i])) << i;
  for (int i = 0; i < 400000; ++i) {
    double d;
    const uint64_t b = rng();
    std::memcpy(&d, &b, sizeof d);
    ASSERT_EQ(double_to_fp16(d), expected_encode(d)) << d;
    // Near the fp16 range, with more bits than fp32 holds: rounded once, not twice.
    const double near = std::ldexp(static_cast<double>(rng() >> 11), -static_cast<int>(rng() % 90));
    ASSERT_EQ(double_to_fp16(near), expected_encode(near)) << near;
  }
  EXPECT_EQ(double_to_fp16(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);  // just above a tie: up (fp32 would round it away)
}

std::string hex(std::string_view s) {
  return sha256_hex(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}

// FIPS 180-4 example vectors.
TEST(Sha256, PublishedVectors) {
  EXPECT_EQ(hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around the padding boundary, from Python's hashlib.
  EXPECT_EQ(hex(std::string(55, 'x')), "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
  EXPECT_EQ(hex(std::string(56, 'x')), "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
  EXPECT_EQ(hex(std::string(63, 'x')), "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2");
  EXPECT_EQ(hex(std::string(64, 'x')), "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
  EXPECT_EQ(hex(std::string(65, 'x')), "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9");
}

}  // namespace
}  // namespace ane
