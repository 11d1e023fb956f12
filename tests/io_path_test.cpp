// The fast I/O path of hwx-run against the plain one it replaces: slot
// memory that starts as zeros without being written, files read in place
// (mapped), inputs copied by rows from raw .npy bytes, outputs written straight
// from their slot. Each must give exactly what the plain path gives.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "../src/core/large_memory.h"
#include "ane/bytes.h"
#include "ane/fp16.h"
#include "ane/memory.h"
#include "ane/npy.h"
#include "ane/sim.h"
#include "compile_net.h"
#include "support.h"

namespace ane {
namespace {

namespace pl = test::pl;

bool all_zero(const Memory& m) {
  for (uint8_t b : m)
    if (b) return false;
  return true;
}

TEST(IoPath, MemoryStartsAsZerosAtEverySize) {
  // Around the size where buffers switch from the heap to mapped huge pages.
  for (size_t size : {size_t{0}, size_t{1}, size_t{4095}, (size_t{256} << 10) - 1, size_t{256} << 10,
                      (size_t{5} << 20) + 3}) {
    SCOPED_TRACE(size);
    Memory m(size);
    ASSERT_EQ(m.size(), size);
    EXPECT_TRUE(all_zero(m));
    if (size >= (size_t{256} << 10)) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(m.data()) % (size_t{4} << 10), 0u) << "not on a page boundary";
    }
    if (size) {
      m[size - 1] = 7;  // writable to the last byte
      Memory moved(std::move(m));
      EXPECT_EQ(moved[size - 1], 7);
      EXPECT_EQ(m.size(), 0u);
    }
  }
}

TEST(IoPath, ARegionGivenBackIsReusedAsZeros) {
  // A freed slot memory's region serves the next one of its length (the
  // process keeps it mapped), and the new one still starts as zeros. Earlier
  // tests in this process may have filled the cache: start from an empty one.
  release_cached_memory();
  const size_t size = (size_t{3} << 20) + 5;
  const uint8_t* first = nullptr;
  {
    Memory m(size);
    std::memset(m.data(), 0xa5, size);
    first = m.data();
  }
  Memory again(size);
  EXPECT_EQ(again.data(), first) << "the region was not reused";
  EXPECT_TRUE(all_zero(again));
  // A smaller one of the same 4 KiB-rounded length: zeros over its own size.
  std::memset(again.data(), 0x5a, size);
  const uint8_t* dirty = again.data();
  again = Memory(size - 3);  // gives the 0x5a region back
  Memory shorter(size - 3);
  EXPECT_EQ(shorter.data(), dirty) << "the region was not reused";
  EXPECT_TRUE(all_zero(shorter));
  // Past the cache's bound (64 MiB) regions are unmapped, not kept: many
  // large ones in turn stay correct.
  for (int i = 0; i < 6; ++i) {
    Memory big(size_t{40} << 20);
    EXPECT_EQ(big[(size_t{40} << 20) - 1], 0);
    big[0] = 1;
  }
}

TEST(IoPath, AKeptRegionIsSplitForSmallerOnesAndMergedAgain) {
  // A region given back serves smaller memories too (its pages are faulted
  // in already): the smallest kept region that holds one is cut, the rest
  // kept; pieces given back next to each other become one region again.
  release_cached_memory();
  const size_t quarter = size_t{256} << 10, piece = quarter + detail::kGuardBytes;
  const uint8_t* first = nullptr;
  {
    Memory big(4 * quarter);
    std::memset(big.data(), 0xa5, big.size());
    first = big.data();
  }
  {
    Memory a(quarter), b(quarter);
    EXPECT_EQ(a.data(), first) << "the kept region was not cut";
    EXPECT_EQ(b.data(), first + piece) << "the rest of it was not kept";
    EXPECT_TRUE(all_zero(a));
    EXPECT_TRUE(all_zero(b));
    std::memset(a.data(), 0x11, quarter);
    std::memset(b.data(), 0x22, quarter);
  }
  Memory whole(4 * quarter);
  EXPECT_EQ(whole.data(), first) << "the pieces were not merged again";
  EXPECT_TRUE(all_zero(whole));
  release_cached_memory();
}

TEST(IoPath, LargeMemoriesShareHugePagesAndStayApart) {
  // Large buffers are cut one after another from one huge-page chunk, so
  // that small ones do not each fault in a 2 MiB page of their own. Each is
  // its own zeros, and writing one to its last byte leaves the next alone.
  release_cached_memory();
  // A chunk (32 MiB) of its own, with less than a piece left over (with or
  // without a guard page): the four below start the next one.
  Memory whole_chunk((size_t{32} << 20) - (size_t{8} << 10));
  const size_t size = (size_t{512} << 10) + 100;
  std::vector<Memory> m;
  for (int i = 0; i < 4; ++i) m.emplace_back(size);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(all_zero(m[i])) << i;
    std::memset(m[i].data(), 0x10 + i, size);
  }
  for (int i = 0; i + 1 < 4; ++i) {
    const auto gap = reinterpret_cast<uintptr_t>(m[i + 1].data()) - reinterpret_cast<uintptr_t>(m[i].data());
    EXPECT_EQ(gap, (size_t{512} << 10) + (size_t{4} << 10) + detail::kGuardBytes) << "not cut one after another from one chunk";
    EXPECT_TRUE(std::all_of(m[i].begin(), m[i].end(), [&](uint8_t b) { return b == 0x10 + i; })) << i;
  }
  // Given back and taken again: zeros, whichever piece serves it.
  m.clear();
  Memory again(size);
  EXPECT_TRUE(all_zero(again));
  release_cached_memory();
}

TEST(IoPath, MemoryFromBytesCopiesThenZeroFills) {
  const Bytes src = {1, 2, 3, 4, 5};
  Memory m(src, 300000);
  ASSERT_EQ(m.size(), 300000u);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), m.begin()));
  EXPECT_TRUE(std::all_of(m.begin() + 5, m.end(), [](uint8_t b) { return b == 0; }));
  Memory exact{std::span<const uint8_t>(src)};
  EXPECT_EQ(Bytes(exact.begin(), exact.end()), src);
}

TEST(IoPath, MappedFileHasTheBytesReadFileReads) {
  test::TempDir tmp;
  Bytes data(1 << 20);
  std::mt19937 rng(3);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  test::write_bytes(tmp.file("f.bin"), data);
  test::write_bytes(tmp.file("empty.bin"), {});
  for (const std::string name : {"f.bin", "empty.bin"}) {
    auto mapped = map_file(tmp.file(name));
    auto read = read_file(tmp.file(name));
    ASSERT_TRUE(mapped.ok() && read.ok()) << name;
    EXPECT_EQ(Bytes(mapped->span().begin(), mapped->span().end()), *read) << name;
  }
  // Not mappable: the errors read_file gives.
  for (const std::string& path : {tmp.file("missing.bin"), tmp.path}) {
    auto mapped = map_file(path);
    auto read = read_file(path);
    ASSERT_FALSE(mapped.ok());
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(mapped.error().str(), read.error().str());
  }
}

TEST(IoPath, MappedNpyAgreesWithLoad) {
  test::TempDir tmp;
  const std::vector<uint16_t> values = {0x3c00, 0xc000, 0x0001, 0x7c00, 0x7e00, 0x8000};
  const std::array<uint64_t, 2> shape = {2, 3};
  test::write_bytes(tmp.file("a.npy"), npy::encode_f16(values, shape));
  auto m = npy::map(tmp.file("a.npy"));
  auto l = npy::load(tmp.file("a.npy"));
  ASSERT_TRUE(m.ok() && l.ok());
  EXPECT_EQ(m->dtype, l->dtype);
  EXPECT_EQ(m->shape, l->shape);
  EXPECT_EQ(m->elements(), l->elements());
  EXPECT_EQ(Bytes(m->data.begin(), m->data.end()), l->data);
  // A damaged file: the same one-line error with its offset.
  Bytes bad = npy::encode_f16(values, shape);
  bad.pop_back();
  test::write_bytes(tmp.file("bad.npy"), bad);
  auto mb = npy::map(tmp.file("bad.npy"));
  auto lb = npy::load(tmp.file("bad.npy"));
  ASSERT_FALSE(mb.ok());
  ASSERT_FALSE(lb.ok());
  EXPECT_EQ(mb.error().str(), lb.error().str());
}

TEST(IoPath, MemoryViewOfAFileIsItsBytesThenZeros) {
  test::TempDir tmp;
  Bytes data(100000);
  std::mt19937 rng(5);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  test::write_bytes(tmp.file("f.bin"), data);
  // Inside the file's last page, and past it (zeros from anonymous pages).
  for (size_t size : {size_t{1000}, data.size() - 128, size_t{300000}}) {
    SCOPED_TRACE(size);
    auto file = map_file(tmp.file("f.bin"));
    ASSERT_TRUE(file.ok());
    Memory m = Memory::view_of(*file, 128, size);
    ASSERT_EQ(m.size(), size);
    EXPECT_TRUE(file->span().empty()) << "the mapping is the view's now";
    const size_t from_file = std::min(size, data.size() - 128);
    EXPECT_TRUE(std::equal(m.begin(), m.begin() + from_file, data.begin() + 128));
    EXPECT_TRUE(std::all_of(m.begin() + from_file, m.end(), [](uint8_t b) { return b == 0; }));
    m[0] ^= 0xff;  // copy on write: the file keeps its bytes
    m[size - 1] = 9;
    Memory moved(std::move(m));
    EXPECT_EQ(moved[size - 1], 9);
  }
  EXPECT_EQ(*read_file(tmp.file("f.bin")), data);
  // A file that was read, not mapped (empty here): no view, the bytes stay.
  test::write_bytes(tmp.file("empty.bin"), {});
  auto empty = map_file(tmp.file("empty.bin"));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(Memory::view_of(*empty, 0, 4096).empty());
}

// A ReLU over [c, h, w]: w = 32 makes the buffers dense (rows of 64 bytes),
// w = 40 pads each row to 128 bytes.
Expected<Program> relu_program(test::TempDir& dir, int c, int h, int w) {
  pl::Net n;
  n.inputs = {{"x", pl::input(c, w, h)}};
  n.units = {{"y", pl::unit("x", "Neuron", {{"Type", pl::str("ReLU")}})}};
  n.outputs = {{"y@output", pl::output("y")}};
  return test::compile_net(n, dir);
}

TEST(IoPath, RawInputsAndDirectOutputsEqualTheTensorPath) {
  for (int w : {32, 40}) {
    SCOPED_TRACE(w);
    test::TempDir tmp;
    auto p = relu_program(tmp, 3, 2, w);
    ASSERT_TRUE(p.ok()) << p.error().str();
    const uint64_t n = 3 * 2 * uint64_t(w);
    std::mt19937 rng(w);
    sim::Tensor t;
    t.nchw = {1, 3, 2, static_cast<uint32_t>(w)};
    std::vector<float> f32(n);
    for (uint64_t i = 0; i < n; ++i) {
      f32[i] = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 37.0f;
      t.data.push_back(float_to_fp16(f32[i]));
    }
    auto plain = sim::Simulator::create(*p);
    ASSERT_TRUE(plain.ok());
    ASSERT_TRUE(plain->set_input("x", t).ok());
    ASSERT_TRUE(plain->run().ok());
    auto want = plain->read_buffer("y@output");
    ASSERT_TRUE(want.ok());
    const std::array<uint64_t, 4> dims = {1, 3, 2, static_cast<uint64_t>(w)};
    const Bytes want_file = npy::encode_f16(want->data, dims);

    // fp16 bytes and fp32 bytes (rounded to nearest even on the way in).
    const std::span<const uint16_t> h16(t.data);
    const std::span<const float> h32(f32);
    for (auto [type, bytes] : {std::pair{npy::Dtype::F16, std::as_bytes(h16)}, {npy::Dtype::F32, std::as_bytes(h32)}}) {
      auto fast = sim::Simulator::create(*p);
      ASSERT_TRUE(fast.ok());
      ASSERT_TRUE(fast->set_input("x", type, bytes).ok());
      ASSERT_TRUE(fast->run().ok());
      auto in = fast->read_buffer("x");
      ASSERT_TRUE(in.ok());
      EXPECT_EQ(in->data, t.data);
      const std::string path = tmp.file("y.npy");
      ASSERT_TRUE(fast->save_npy("y@output", path).ok());
      EXPECT_EQ(*read_file(path), want_file);
    }
    // A mapped .npy: a dense input becomes its slot (the file's pages), a
    // padded one is copied by rows; the same values and results either way.
    {
      const std::string file = tmp.file("x.npy");
      test::write_bytes(file, npy::encode_f16(t.data, dims));
      auto mapped = npy::map(file);
      ASSERT_TRUE(mapped.ok());
      auto fast = sim::Simulator::create(*p);
      ASSERT_TRUE(fast.ok());
      ASSERT_TRUE(fast->set_input("x", *mapped).ok());
      EXPECT_EQ(mapped->file().span().empty(), w == 32) << "dense inputs are viewed, padded ones copied";
      ASSERT_TRUE(fast->run().ok());
      auto in = fast->read_buffer("x");
      ASSERT_TRUE(in.ok());
      EXPECT_EQ(in->data, t.data);
      // Over a longer file of other bytes (outputs are written over what is
      // there, then cut to length): exactly the new file.
      test::write_bytes(tmp.file("y.npy"), Bytes(want_file.size() + 5000, 0xee));
      ASSERT_TRUE(fast->save_npy("y@output", tmp.file("y.npy")).ok());
      EXPECT_EQ(*read_file(tmp.file("y.npy")), want_file);
      EXPECT_EQ(*read_file(file), npy::encode_f16(t.data, dims)) << "the input file is never written";
    }
    // A count that does not match is refused, as with a Tensor.
    auto fast = sim::Simulator::create(*p);
    const auto error = fast->set_input("x", npy::Dtype::F16, std::as_bytes(h16).first(2 * (n - 1)));
    ASSERT_FALSE(error.ok());
    EXPECT_NE(error.error().str().find("needs " + std::to_string(n) + " elements, the tensor has " +
                                       std::to_string(n - 1)),
              std::string::npos)
        << error.error().str();
    EXPECT_FALSE(fast->save_npy("nope", tmp.file("z.npy")).ok());
    EXPECT_FALSE(fast->save_npy("y@output", tmp.file("no/such/dir/z.npy")).ok());
  }
}

}  // namespace
}  // namespace ane
