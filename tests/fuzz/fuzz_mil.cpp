// libFuzzer target: arbitrary bytes through hwx-build's MIL front end.
//
// Two modes, chosen by the input's first four bytes:
//
// * anything else: MIL text. Input -> mil::parse_program -> network_of_mil
//   -> compile_network (which writes the program and checks it by reading it
//   back). MilOptions::weights is one prepared regular file (a valid MILBlob
//   v2 file, written once into a scratch directory), so every BLOBFILE reads
//   it, whatever its path says: records at offsets 64 (fp16), 88 (fp16, the
//   offset Apple's records name for a bias), 192 (fp32), 320 (fp16), 448
//   (fp32), 576 (fp16, only 64 bytes) and 704 (a wrong sentinel), the large
//   ones all reading one 1 MiB region of varied bytes at 4096.
//   Invariants whose violation is a library bug abort():
//     * a refusal (parser, lowering or compiler) is one line;
//     * a compiled program decodes to as many tasks as were compiled and
//       round-trips through write_hwx(read_hwx(bytes)).
//
// * "MILB": the MILBlob v2 reader alone. After the tag: one byte N (queries,
//   at most 16), N queries of 20 bytes each (u64 record offset, u32 data
//   type, u64 expected byte count, little-endian), then the weight file
//   itself. BlobFile::open, then metadata() per query; for each record it
//   accepts, data() must lie inside the file and hold exactly the record's
//   bytes, and what metadata() checked must hold.
//
// Build: cmake -DCMAKE_CXX_COMPILER=clang++ -DLIBANE_FUZZ=ON ... (see .ci/run)
// Run:   fuzz_mil CORPUS_DIR -max_len=16384 -max_total_time=60
//        (seeds: tests/fixtures/oracles/h13/*/*.mil, tests/fixtures/coreml/*/model.mil)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ane/compiler.h"
#include "ane/mil.h"
#include "ane/mil_network.h"

namespace {

constexpr uint64_t kDataAt = 4096;
constexpr uint64_t kDataBytes = 1 << 20;

void put_le(ane::Bytes& b, uint64_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The weight file every BLOBFILE of a fuzzed program reads.
const std::string& weight_file() {
  static const std::string path = [] {
    auto dir = std::filesystem::temp_directory_path() / "libane_fuzz_mil_weights";
    std::filesystem::create_directories(dir);
    ane::Bytes w(kDataAt + kDataBytes, 0);
    put_le(w, 0, 7, 4);  // count
    put_le(w, 4, 2, 4);  // version
    struct Record {
      uint64_t at;
      uint32_t sentinel, type;
      uint64_t size;
    };
    const Record records[] = {
        {64, 0xDEADBEEF, 1, kDataBytes},  {88, 0xDEADBEEF, 1, kDataBytes},  {192, 0xDEADBEEF, 2, kDataBytes},
        {320, 0xDEADBEEF, 1, kDataBytes}, {448, 0xDEADBEEF, 2, kDataBytes}, {576, 0xDEADBEEF, 1, 64},
        {704, 0x12345678, 1, kDataBytes},
    };
    for (const Record& r : records) {
      put_le(w, r.at, r.sentinel, 4);
      put_le(w, r.at + 4, r.type, 4);
      put_le(w, r.at + 8, r.size, 8);
      put_le(w, r.at + 16, kDataAt, 8);
    }
    // Varied values: small and large, both signs, a few infinities and NaNs.
    for (uint64_t i = 0; i < kDataBytes; ++i) w[kDataAt + i] = static_cast<uint8_t>(i * 131 + (i >> 7));
    const std::string file = (dir / "weight.bin").string();
    (void)ane::write_file(file, w);
    return file;
  }();
  return path;
}

[[noreturn]] void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz_mil: invariant violated: %s%s%s\n", what, detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

void check_one_line(const ane::Error& e) {
  if (e.message.find('\n') != std::string::npos) fail("a refusal is more than one line", e.message);
}

void fuzz_blob_reader(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const size_t n = std::min<size_t>(data[0], 16);
  ++data;
  --size;
  if (size < n * 20) return;
  const uint8_t* queries = data;
  // The file in a buffer of its own size, so that any read past it is caught.
  const std::vector<uint8_t> file(data + n * 20, data + size);
  auto blob = ane::mil::BlobFile::open(file, "fuzz.bin");
  if (!blob) return;
  if (blob->header().version != 2) fail("open accepted a version other than 2");
  for (size_t q = 0; q < n; ++q) {
    const uint8_t* p = queries + q * 20;
    const uint64_t offset = get_le(p, 8);
    const auto type = static_cast<uint32_t>(get_le(p + 8, 4));
    const uint64_t expected = get_le(p + 12, 8);
    (void)ane::mil::blob_data_type_name(type);
    auto m = blob->metadata(offset, static_cast<ane::mil::BlobDataType>(type), expected);
    if (!m) {
      check_one_line(m.error());
      continue;
    }
    if (m->sentinel != 0xDEADBEEF) fail("metadata accepted a wrong sentinel");
    if (m->data_type != type) fail("metadata accepted another data type");
    if (m->size < expected) fail("metadata accepted a blob smaller than expected");
    if (m->data_offset % 64 != 0) fail("metadata accepted an unaligned data offset");
    const std::span<const uint8_t> d = blob->data(*m);
    if (d.size() != m->size) fail("data() is not the record's size");
    if (d.size() != 0 && (d.data() < file.data() || d.data() + d.size() > file.data() + file.size()))
      fail("data() lies outside the file");
    if (d.size() != 0 && d.data() != file.data() + m->data_offset) fail("data() is not at the data offset");
  }
}

void fuzz_mil_text(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto program = ane::mil::parse_program(text, "fuzz.mil");
  if (!program) {
    check_one_line(program.error());
    return;
  }
  ane::MilOptions opts;
  opts.weights = weight_file();
  auto net = ane::network_of_mil(*program, opts);
  if (!net) {
    check_one_line(net.error());
    return;
  }
  // Only the prepared file (or constants held in memory) may be read.
  for (size_t i = 0; i < net->weight_paths.size(); ++i) {
    const bool in_memory = i < net->weight_contents.size() && !net->weight_contents[i].empty();
    if (!in_memory && net->weight_paths[i] != opts.weights) fail("a weight is read from elsewhere", net->weight_paths[i]);
  }
  ane::CompileOptions copts;
  // Both layouts: hwx-build's default for MIL is macos26, v4.2.1 on request.
  copts.profile = size % 2 ? ane::CompilerProfile::Macos26 : ane::CompilerProfile::V421;
  copts.ident = "fuzz_mil";
  auto program_bytes = ane::compile_network(*net, copts);
  if (!program_bytes) {
    check_one_line(program_bytes.error());
    return;
  }
  auto back = ane::read_hwx(program_bytes->bytes);
  if (!back) fail("compiled program does not read back", back.error().str());
  if (ane::write_hwx(*back) != program_bytes->bytes) fail("compiled program does not round-trip");
  auto tasks = ane::decode_tasks(*back);
  if (!tasks || tasks->size() != program_bytes->tasks.size()) fail("compiled task chain does not decode");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 4 && std::memcmp(data, "MILB", 4) == 0) {
    fuzz_blob_reader(data + 4, size - 4);
    return 0;
  }
  fuzz_mil_text(data, size);
  return 0;
}
