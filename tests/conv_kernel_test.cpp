// The kernel-lane layouts of include/ane/conv_kernel.h: hand-written bytes of
// the zero-skipping form (stride 2) for small shapes, pack/unpack round trips
// on random weights with zeros, and malformed lanes refused by name. The
// records' hashes (oracle_conv_test.cpp) check the same layouts at scale.
#include <gtest/gtest.h>

#include <random>

#include "ane/conv_kernel.h"

namespace ane {
namespace {

std::array<KernelLane, kKernelLanes> lanes_of(const PackedConvKernel& k) {
  std::array<KernelLane, kKernelLanes> l{};
  for (int i = 0; i < kKernelLanes; ++i)
    if (k.lane_size[i]) l[i] = {k.bytes.data() + k.lane_offset[i], k.lane_size[i]};
  return l;
}

Bytes lane_bytes(const PackedConvKernel& k, int lane) {
  return Bytes(k.bytes.begin() + static_cast<std::ptrdiff_t>(k.lane_offset[lane]),
               k.bytes.begin() + static_cast<std::ptrdiff_t>(k.lane_offset[lane] + k.lane_size[lane]));
}

// Little-endian halfwords, then zeros up to 64 bytes.
Bytes padded(std::initializer_list<uint8_t> head) {
  Bytes b(head);
  b.resize((b.size() + 63) / 64 * 64, 0);
  return b;
}

ConvKernelShape depthwise3x3(bool small_source) {
  ConvKernelShape s;
  s.cin = s.cout = 1;
  s.kh = s.kw = 3;
  s.depthwise = true;
  s.bias = true;
  s.sparse = true;
  s.small_source = small_source;
  return s;
}

// Taps 0x3c00 + t, tap 4 zero; bias 0x4000.
ConvWeights one_channel_taps() {
  ConvWeights w;
  for (uint16_t t = 0; t < 9; ++t) w.weights.push_back(t == 4 ? 0 : static_cast<uint16_t>(0x3c00 + t));
  w.bias = {0x4000};
  return w;
}

TEST(ZeroSkippingKernel, DepthwiseWithTwoSlotsPerPosition) {
  // Without SmallSourceMode a position holds 2 slots: one mask per stride
  // phase. Phase (even, even): taps 0 2 6 8 at slots 0 2 4 6 -> 0x55; (even,
  // odd): taps 1 and 7 at positions 0 and 2 -> 0x11; (odd, even): 3 and 5 at
  // positions 0 and 1 -> 0x05; (odd, odd): tap 4, zero -> 0x00. Body 20 bytes.
  auto k = pack_conv_kernel(depthwise3x3(false), one_channel_taps());
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(lane_bytes(*k, 0), padded({0x00, 0x40, 20, 0, 0,                                  //
                                       0x55, 0x00, 0x3c, 0x02, 0x3c, 0x06, 0x3c, 0x08, 0x3c,  //
                                       0x11, 0x01, 0x3c, 0x07, 0x3c,                          //
                                       0x05, 0x03, 0x3c, 0x05, 0x3c,                          //
                                       0x00}));
  for (int lane = 1; lane < kKernelLanes; ++lane) EXPECT_EQ(k->lane_size[lane], 0u) << lane;
}

TEST(ZeroSkippingKernel, DepthwiseWithFourSlotsPerPosition) {
  // SmallSourceMode: 4 slots a position, two masks per phase. Body 24 bytes.
  auto k = pack_conv_kernel(depthwise3x3(true), one_channel_taps());
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(lane_bytes(*k, 0), padded({0x00, 0x40, 24, 0, 0,                 //
                                       0x11, 0x00, 0x3c, 0x02, 0x3c,         // taps 0, 2
                                       0x11, 0x06, 0x3c, 0x08, 0x3c,         // taps 6, 8
                                       0x01, 0x01, 0x3c, 0x01, 0x07, 0x3c,   // tap 1 | tap 7
                                       0x11, 0x03, 0x3c, 0x05, 0x3c, 0x00,   // taps 3, 5 | -
                                       0x00, 0x00}));                        // tap 4 (zero) | -
}

TEST(ZeroSkippingKernel, H14PutsTwoMasksBeforeTheirWeights) {
  // The same kernel in H14's form: the mask bytes of 16 slots, then those
  // slots' weights. Phases (even, even) + (even, odd), then (odd, even) +
  // (odd, odd). Body 24 bytes, as on H13: the bytes are a reordering.
  ConvKernelShape s = depthwise3x3(true);
  s.mask_group_slots = 16;
  auto k = pack_conv_kernel(s, one_channel_taps());
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(lane_bytes(*k, 0), padded({0x00, 0x40, 24, 0, 0,                          //
                                       0x11, 0x11, 0x00, 0x3c, 0x02, 0x3c,           // taps 0, 2 |
                                       0x06, 0x3c, 0x08, 0x3c,                       // taps 6, 8
                                       0x01, 0x01, 0x01, 0x3c, 0x07, 0x3c,           // tap 1 | tap 7
                                       0x11, 0x00, 0x03, 0x3c, 0x05, 0x3c,           // taps 3, 5 | -
                                       0x00, 0x00}));                                // tap 4 (zero) | -
}

ConvKernelShape make(uint32_t groups, uint32_t cin, uint32_t cout, uint32_t k, bool depthwise, bool bias, uint32_t ocg,
                     bool sparse, bool small_source) {
  ConvKernelShape s;
  s.groups = groups;
  s.cin = cin;
  s.cout = cout;
  s.kh = s.kw = k;
  s.depthwise = depthwise;
  s.bias = bias;
  s.ocg = ocg;
  s.sparse = sparse;
  s.small_source = small_source;
  return s;
}

TEST(ZeroSkippingKernel, DenseThreeByThreeInterleavesChannelsPerPosition) {
  // 2 input channels, 64 outputs: OCGSize 2, lane l holds outputs 4l..4l+3,
  // 4 slots a position = its 4 channels, two positions per mask. Weights:
  // output o, input i, tap t = 0x3800 + 16 * o + 4 * i + t, except output 1
  // whose taps are all zero.
  const ConvKernelShape s = make(1, 2, 64, 3, false, false, 2, true, false);
  ConvWeights w;
  for (uint16_t o = 0; o < 64; ++o)
    for (uint16_t i = 0; i < 2; ++i)
      for (uint16_t t = 0; t < 9; ++t) w.weights.push_back(o == 1 ? 0 : static_cast<uint16_t>(0x3800 + 16 * o + 4 * i + t));
  auto k = pack_conv_kernel(s, w);
  ASSERT_TRUE(k.ok()) << k.error().message;
  // Lane 0 by hand: per input channel 16 positions x 4 slots = 8 masks.
  Bytes want = {0, 0, 0};
  auto v = [](int o, int i, int t) { return static_cast<uint16_t>(0x3800 + 16 * o + 4 * i + t); };
  const int order[16] = {0, 2, 6, 8, 1, -1, 7, -1, 3, 5, -1, -1, 4, -1, -1, -1};
  for (int i = 0; i < 2; ++i)
    for (int pair = 0; pair < 8; ++pair) {
      uint8_t mask = 0;
      Bytes vals;
      for (int half = 0; half < 2; ++half) {
        const int tap = order[2 * pair + half];
        if (tap < 0) continue;
        for (int o : {0, 2, 3}) {  // output 1 is all zero
          mask |= static_cast<uint8_t>(1u << (4 * half + o));
          vals.push_back(static_cast<uint8_t>(v(o, i, tap)));
          vals.push_back(static_cast<uint8_t>(v(o, i, tap) >> 8));
        }
      }
      want.push_back(mask);
      want.insert(want.end(), vals.begin(), vals.end());
    }
  const size_t body = want.size() - 3;
  want[0] = static_cast<uint8_t>(body);
  want[1] = static_cast<uint8_t>(body >> 8);
  want.resize((want.size() + 63) / 64 * 64, 0);
  EXPECT_EQ(lane_bytes(*k, 0), want);
  // The first mask: taps 0 and 2 of outputs 0, 2, 3.
  EXPECT_EQ(want[3], 0xdd);
}

TEST(ZeroSkippingKernel, AGroupOfSeveralChunksPutsItsStreamsBackToBack) {
  // 64 outputs in planes of 2 (OCGSize 1): two chunks of 16 planes, so lane 0
  // holds outputs 0, 1 (chunk 0) and then 32, 33 (chunk 1). One input
  // channel, 1x1: 4 positions x 2 slots = one mask byte, taps at slots 0, 1.
  // Each stream: a 24-bit count, the mask, two weights, a pad byte (the body
  // is odd); the second starts right after the first, the lane's end on 64
  // bytes (records conv_probe_k1_c256_n1024_s16_st2_g1_bias0_same and
  // conv_probe_k3_c{512,1024}_n1024_s16_st2_g1_bias0_valid: 1024 outputs in
  // planes of 32 hash so, and not with a 64-byte boundary between chunks).
  const ConvKernelShape s = make(1, 1, 64, 1, false, false, 1, true, false);
  ConvWeights w;
  for (uint16_t o = 0; o < 64; ++o) w.weights.push_back(static_cast<uint16_t>(0x3c00 + o));
  auto k = pack_conv_kernel(s, w);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(lane_bytes(*k, 0), padded({6, 0, 0, 0x03, 0x00, 0x3c, 0x01, 0x3c, 0,  //
                                       6, 0, 0, 0x03, 0x20, 0x3c, 0x21, 0x3c, 0}));
  EXPECT_EQ(lane_bytes(*k, 15), padded({6, 0, 0, 0x03, 0x1e, 0x3c, 0x1f, 0x3c, 0,  //
                                        6, 0, 0, 0x03, 0x3e, 0x3c, 0x3f, 0x3c, 0}));
}

struct Case {
  const char* name;
  ConvKernelShape shape;
};

TEST(ZeroSkippingKernel, PackThenUnpackGivesTheWeightsBack) {
  const Case cases[] = {
      {"dense 3x3 s2, 16 wide", make(1, 8, 256, 3, false, true, 4, true, true)},
      {"dense 3x3 s2, 4 wide", make(1, 5, 64, 3, false, false, 2, true, false)},
      {"dense 1x1 s2, 8 wide", make(1, 7, 128, 1, false, true, 3, true, true)},
      {"dense 1x1 s2, two chunks 2 wide", make(1, 3, 64, 1, false, true, 1, true, false)},
      {"dense 3x3 s2, two chunks 32 wide", make(1, 2, 1024, 3, false, false, 5, true, true)},
      {"dense 3x3 s2, 12 wide under OCGSize 4", make(1, 3, 192, 3, false, true, 4, true, false)},
      {"dense 1x1 s2, 14 wide under OCGSize 4", make(1, 5, 224, 1, false, false, 4, true, true)},
      {"grouped 3x3 s2, 1 per lane", make(4, 3, 16, 3, false, true, 0, true, true)},
      {"grouped 1x1 s2, 2 per lane", make(3, 6, 32, 1, false, false, 1, true, false)},
      {"depthwise 3x3 s2", make(1, 40, 40, 3, true, true, 0, true, true)},
      {"depthwise 3x3 s2, 2 slots", make(1, 21, 21, 3, true, false, 0, true, false)},
      {"dense 3x3 s1", make(1, 6, 48, 3, false, true, 2, false, true)},
      {"grouped 3x3 s1", make(2, 4, 16, 3, false, false, 0, false, true)},
  };
  std::mt19937 rng(7);
  std::vector<Case> every(std::begin(cases), std::end(cases));
  for (const Case& c : cases)  // and each sparse case in H14's mask grouping
    if (c.shape.sparse) {
      Case h14 = c;
      h14.shape.mask_group_slots = 16;
      every.push_back(h14);
    }
  for (const Case& c : every) {
    ConvWeights w;
    w.weights.resize(c.shape.outputs() * c.shape.reduction());
    for (uint16_t& x : w.weights) x = rng() % 3 == 0 ? (rng() % 2 ? 0x8000 : 0) : static_cast<uint16_t>(rng() % 0x7bff + 1);
    if (c.shape.bias) {
      w.bias.resize(c.shape.outputs());
      for (uint16_t& x : w.bias) x = static_cast<uint16_t>(rng());
    }
    auto k = pack_conv_kernel(c.shape, w);
    ASSERT_TRUE(k.ok()) << c.name << ": " << k.error().message;
    const auto lanes = lanes_of(*k);
    auto back = unpack_conv_kernel(c.shape, lanes);
    ASSERT_TRUE(back.ok()) << c.name << ": " << back.error().message;
    if (c.shape.sparse)  // -0 is skipped like +0 and reads back as +0
      for (uint16_t& x : w.weights) x = x == 0x8000 ? 0 : x;
    EXPECT_EQ(back->weights, w.weights) << c.name;
    EXPECT_EQ(back->bias, w.bias) << c.name;
  }
}

TEST(ZeroSkippingKernel, MalformedLanesAreRefusedByName) {
  auto k = pack_conv_kernel(depthwise3x3(false), one_channel_taps());
  ASSERT_TRUE(k.ok());
  const auto& s = depthwise3x3(false);
  // A mask bit on a slot that holds no weight (phase (odd, odd), position 1).
  Bytes b = k->bytes;
  b[k->lane_offset[0] + 24] = 0x04;
  auto lanes = lanes_of(*k);
  lanes[0].data = b.data() + k->lane_offset[0];
  auto r = unpack_conv_kernel(s, lanes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("holds no weight"), std::string::npos) << r.error().message;
  // A count that disagrees with the masks.
  b = k->bytes;
  b[k->lane_offset[0] + 2] = 22;
  lanes[0].data = b.data() + k->lane_offset[0];
  r = unpack_conv_kernel(s, lanes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("counts 0x16 bytes"), std::string::npos) << r.error().message;
  // A lane cut short: every cut is an error, never a read past the end.
  for (uint64_t size = 0; size < 25; ++size) {  // the stream takes 25 bytes
    Bytes cut(k->bytes.begin() + static_cast<std::ptrdiff_t>(k->lane_offset[0]),
              k->bytes.begin() + static_cast<std::ptrdiff_t>(k->lane_offset[0] + size));
    lanes[0] = {cut.data(), size};
    EXPECT_FALSE(unpack_conv_kernel(s, lanes).ok()) << size;
  }
  // An off lane.
  lanes[0] = {};
  EXPECT_FALSE(unpack_conv_kernel(s, lanes).ok());
}

TEST(ZeroSkippingKernel, StreamsNarrowerThanOCGSizeHoldCoutOver16Channels) {
  // A stride-2 layer Apple splits keeps the layer's OCGSize in each task: 64
  // outputs under OCGSize 4 are streams of 4 channels, laid out exactly as
  // under OCGSize 2, and 192 are streams of 12 (records
  // conv_probe_k3_c256_n256_s{32,64}_st2_*: Apple's SHA-256, and lanes of
  // 0x5040 and 0xf040 bytes).
  ConvWeights w;
  for (uint16_t o = 0; o < 64; ++o)
    for (uint16_t r = 0; r < 18; ++r) w.weights.push_back(static_cast<uint16_t>(0x3800 + 18 * o + r));
  auto wide = pack_conv_kernel(make(1, 2, 64, 3, false, false, 4, true, false), w);
  auto own = pack_conv_kernel(make(1, 2, 64, 3, false, false, 2, true, false), w);
  ASSERT_TRUE(wide.ok()) << wide.error().message;
  ASSERT_TRUE(own.ok()) << own.error().message;
  EXPECT_EQ(wide->bytes, own->bytes);
  // 192 outputs, one input channel, 1x1: 4 positions x 12 slots = 6 mask
  // bytes (0x0fff: slots 0..11 of position 0), 12 weights, lane l holding
  // outputs 12l .. 12l + 11.
  ConvWeights w192;
  for (uint16_t o = 0; o < 192; ++o) w192.weights.push_back(static_cast<uint16_t>(0x3c00 + o));
  auto k = pack_conv_kernel(make(1, 1, 192, 1, false, false, 4, true, false), w192);
  ASSERT_TRUE(k.ok()) << k.error().message;
  Bytes lane1 = {30, 0, 0, 0xff};
  for (int o = 12; o < 20; ++o) lane1.insert(lane1.end(), {static_cast<uint8_t>(o), 0x3c});
  lane1.push_back(0x0f);
  for (int o = 20; o < 24; ++o) lane1.insert(lane1.end(), {static_cast<uint8_t>(o), 0x3c});
  lane1.insert(lane1.end(), {0, 0, 0, 0});  // positions 1..3 (slots 12..47): no taps
  lane1.resize(64, 0);
  EXPECT_EQ(lane_bytes(*k, 1), lane1);
}

TEST(ZeroSkippingKernel, ShapesWithoutRecordsAreRefused) {
  // 768 outputs in planes of 32 would be a chunk of 32 then one of 16 a
  // lane: no record shows streams of two widths in one group.
  const ConvKernelShape s = make(1, 4, 768, 3, false, false, 5, true, true);
  const Status st = check_conv_kernel(s);
  ASSERT_FALSE(st.ok()) << s.cout;
  EXPECT_EQ(st.error().message.rfind("unsupported: ", 0), 0u) << st.error().message;
}

}  // namespace
}  // namespace ane
