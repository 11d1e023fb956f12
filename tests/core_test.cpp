// fp16 conversion and SHA-256: checked against published vectors and against
// each other (two independent fp16 encoders), not against themselves.
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/sha256.h"

namespace ane {
namespace {

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
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

TEST(Fp16, EveryHalfRoundTripsExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (fp16_is_nan(static_cast<uint16_t>(h))) continue;
    ASSERT_EQ(float_to_fp16(fp16_to_float(static_cast<uint16_t>(h))), h) << std::hex << h;
    ASSERT_EQ(double_to_fp16(fp16_to_float(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

// Midpoints between neighbouring halves are exact ties: both encoders must
// pick the even neighbour, and a hair above or below must pick the near one.
TEST(Fp16, TiesGoToEvenInBothEncoders) {
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const double lo = fp16_to_float(static_cast<uint16_t>(h)), hi = fp16_to_float(static_cast<uint16_t>(h + 1));
    const double mid = (lo + hi) / 2;
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    ASSERT_EQ(double_to_fp16(mid), even) << std::hex << h;
    ASSERT_EQ(float_to_fp16(static_cast<float>(mid)), even) << std::hex << h;
    ASSERT_EQ(double_to_fp16(std::nextafter(mid, 0.0)), h);
    ASSERT_EQ(double_to_fp16(std::nextafter(mid, 1e9)), h + 1);
  }
}

TEST(Fp16, BitEncoderAgreesWithArithmeticEncoderOnRandomFloats) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 1000000; ++i) {
    const float f = bits_to_float(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_fp16(f), double_to_fp16(f)) << f;
  }
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
