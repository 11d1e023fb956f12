// Malformed and hostile inputs: each must give one clear error naming the
// offset, never a crash or an out-of-bounds read (the suite also runs under
// AddressSanitizer + UBSan).
#include <random>

#include <gtest/gtest.h>

#include "ane/dump.h"
#include "support.h"

namespace ane {
namespace {

void put32(Bytes& b, uint64_t off, uint32_t v) { put_u32(b, off, v); }
uint32_t get32(const Bytes& b, uint64_t off) { return *ByteView(b).u32(off); }

OpenOptions hwx_only() {
  OpenOptions o;
  o.format = ContainerFormat::Hwx;
  return o;
}

Bytes corpus(const std::string& name) { return test::read_or_die(test::corpus_hwx_path(name)); }

// Parses (container + task chain) and expects an error at `offset` whose
// message contains `what`.
void expect_error(const Bytes& bytes, uint64_t offset, const std::string& what) {
  auto p = parse_program(bytes, "x.hwx", hwx_only());
  ASSERT_FALSE(p.ok()) << "expected an error containing '" << what << "'";
  EXPECT_EQ(p.error().offset, offset) << p.error().str();
  EXPECT_NE(p.error().message.find(what), std::string::npos) << p.error().str();
  EXPECT_EQ(p.error().str().find('\n'), std::string::npos) << "error must be one line";
}

TEST(Malformed, EmptyAndTinyFiles) {
  expect_error({}, 0, "smaller than the 32-byte Mach-O header");
  expect_error(Bytes(31, 0), 0, "smaller than the 32-byte Mach-O header");
}

TEST(Malformed, BadMagic) {
  Bytes b(64, 0);
  put32(b, 0, 0xfeedfacf);
  expect_error(b, 0, "not an HWX file");
  put32(b, 0, 0x12345678);
  expect_error(b, 0, "bad magic 0x12345678");
}

TEST(Malformed, TruncatedAtEveryLoadCommandBoundary) {
  ANE_REQUIRE_CORPUS();
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const Bytes full = corpus(name);
    auto f = read_hwx(full);
    ASSERT_TRUE(f.ok());
    std::vector<uint64_t> cuts{0x20};
    for (const auto& lc : f->commands) cuts.push_back(lc.offset + lc.cmdsize);
    const uint64_t after_commands = cuts.back();
    cuts.pop_back();
    for (uint64_t cut : cuts) {
      SCOPED_TRACE(cut);
      // The load commands no longer fit: the header's sizeofcmds is named.
      expect_error(Bytes(full.begin(), full.begin() + cut), 0x14, "sizeofcmds");
    }
    // Cut right after the commands: they fit, but the first file-backed
    // segment (__TEXT) no longer does.
    uint64_t first_backed = 0;
    for (const auto& lc : f->commands)
      if (const auto* seg = lc.as<SegmentCommand>(); seg && seg->filesize && !first_backed) first_backed = lc.offset;
    expect_error(Bytes(full.begin(), full.begin() + after_commands), first_backed + 0x28,
                 "runs past the end of the file");
  }
}

TEST(Malformed, TruncatedInsideEverySegment) {
  ANE_REQUIRE_CORPUS();
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const Bytes full = corpus(name);
    auto f = read_hwx(full);
    ASSERT_TRUE(f.ok());
    for (const auto& lc : f->commands) {
      const auto* seg = lc.as<SegmentCommand>();
      if (!seg || seg->filesize == 0) continue;
      for (uint64_t cut : {seg->fileoff + 1, seg->fileoff + seg->filesize / 2, seg->fileoff + seg->filesize - 1}) {
        SCOPED_TRACE(cut);
        expect_error(Bytes(full.begin(), full.begin() + cut), lc.offset + 0x28, "runs past the end of the file");
      }
    }
  }
}

TEST(Malformed, CountsAndSizesPastTheEnd) {
  ANE_REQUIRE_CORPUS();
  const Bytes full = corpus("conv");
  auto f = read_hwx(full);
  ASSERT_TRUE(f.ok());
  const auto& cmds = f->commands;
  auto find = [&](uint32_t cmd, uint32_t flavor = 0) -> const LoadCommand& {
    for (const auto& lc : cmds)
      if (lc.cmd == cmd && (!flavor || lc.as<ThreadCommand>()->flavor == flavor)) return lc;
    ADD_FAILURE() << "command not found";
    return cmds[0];
  };
  const uint64_t text_seg = cmds[1].offset;  // __TEXT
  const uint64_t symtab = find(macho::LC_SYMTAB).offset;
  const uint64_t thread1 = find(macho::LC_THREAD, 1).offset;
  const uint64_t thread3 = find(macho::LC_THREAD, 3).offset;
  const uint64_t fvmlib = find(macho::LC_LOADFVMLIB).offset;

  struct Case {
    uint64_t at;
    uint32_t value;
    uint64_t err_offset;
    const char* what;
  } cases[] = {
      {0x10, 0xffffffff, 0x10, "ncmds"},
      {0x14, 0xffffff00, 0x14, "sizeofcmds"},
      {0x24, 0, 0x24, "not a positive multiple of 8"},
      {0x24, 0x4c, 0x24, "not a positive multiple of 8"},
      {0x24, 0x7ffffff8, 0x24, "runs past sizeofcmds"},
      {text_seg + 0x40, 1000, text_seg + 0x40, "nsects"},
      {text_seg + 0x30, 0x7fffffff, text_seg + 0x28, "runs past the end of the file"},
      {text_seg + 0x48 + 0x3c, 0x10000000, text_seg + 0x48 + 0x38, "relocations"},
      {text_seg + 0x48 + 0x28, 0x1000000, text_seg + 0x48 + 0x28, "runs past the end of the file"},
      {symtab + 0x0c, 0x10000000, symtab + 8, "symbol table"},
      {symtab + 0x14, 0x10000000, symtab + 16, "string table"},
      {thread1 + 0x0c, 0x10000000, thread1 + 12, "exceeds cmdsize"},
      {thread1 + 0x83c, 0x10000, thread1 + 0x83c, "network name offset"},
      {thread3 + 0x20, 0x10000, thread3 + 0x20, "buffer name offset"},
      {thread3 + 0x0c, 4, thread3 + 12, "fewer than the 0x1e"},
      {fvmlib + 0x08, 0x1000, fvmlib + 8, "name offset"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Bytes b = full;
    put32(b, c.at, c.value);
    expect_error(b, c.err_offset, c.what);
  }

  // A symbol whose name index leaves the string table.
  const uint32_t symoff = get32(full, symtab + 8);
  Bytes b = full;
  put32(b, symoff + 16, 0x7fffffff);
  expect_error(b, symoff + 16, "outside the string table");
  // A relocation pointing outside __text.
  const uint32_t reloff = get32(full, text_seg + 0x48 + 0x38);
  b = full;
  put32(b, reloff, 0x1000);
  expect_error(b, reloff, "outside section __TEXT,__text");
  // A string table without a final NUL.
  const uint32_t stroff = get32(full, symtab + 16), strsize = get32(full, symtab + 20);
  b = full;
  b[stroff + strsize - 1] = 'x';
  auto r = read_hwx(b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not NUL-terminated"), std::string::npos) << r.error().str();
}

TEST(Malformed, OtherGenerationsAreRefused) {
  ANE_REQUIRE_CORPUS();
  Bytes b = corpus("relu");
  put32(b, 8, 3);  // H12: named, not decoded
  expect_error(b, 8, "H12");
  put32(b, 8, 11);  // H18G: a different format
  expect_error(b, 8, "H18G");
  put32(b, 8, 5);  // H14 in the header, an H13 program descriptor below
  expect_error(b, 8, "cpusubtype 5 says H14, but the program descriptor is LC_THREAD flavor 1");
  EXPECT_TRUE(read_hwx(b).ok());  // the container itself is still readable
}

TEST(Malformed, TaskChains) {
  ANE_REQUIRE_CORPUS();
  const Bytes concat = corpus("concat");
  const uint64_t task1 = 0x4000 + 0x300;
  // Task 1 clears EON and points back at itself: a cycle.
  Bytes b = concat;
  put32(b, task1, get32(b, task1) & ~(1u << 25));
  put32(b, task1 + 0x1c, 0x300);
  put32(b, task1 + 4, get32(b, 0x4000 + 4));
  expect_error(b, task1 + 0x1c, "cyclic task chain");
  // ... or back at task 0.
  put32(b, task1 + 0x1c, 0);
  put32(b, task1 + 0x1c, 0x100);
  expect_error(b, task1 + 0x1c, "does not move forward");

  // A single task whose NextPointer leaves __text.
  const Bytes relu = corpus("relu");
  b = relu;
  put32(b, 0x4000, get32(b, 0x4000) & ~(1u << 25));
  put32(b, 0x4000 + 0x1c, 0x4000);
  expect_error(b, 0x4000 + 0x1c, "outside __text");

  // A next task that does not fit in __text (NextSize too large).
  b = concat;
  put32(b, 0x4000 + 4, (0x1ffu << 16));
  expect_error(b, task1, "runs past the end of __text");

  // A register stream longer than its task.
  b = relu;
  put32(b, 0x4000 + 0x254, (63u << 26) | 0x17800);
  expect_error(b, 0x4000 + 0x254, "runs past the end of the task");

  // The program descriptor's task count disagrees with the chain.
  auto f = read_hwx(relu);
  ASSERT_TRUE(f.ok());
  const auto prog = f->program();
  ASSERT_TRUE(prog);
  const uint64_t count_at = f->commands[prog->command_index].offset + 0x81c;
  b = relu;
  put32(b, count_at, 3);
  expect_error(b, count_at, "says 3 tasks but the task chain has 1");
}

// Deterministic random mutations of every corpus file: each must either parse
// and round-trip exactly, or fail with a one-line error.
TEST(Malformed, RandomMutationsNeverCrash) {
  ANE_REQUIRE_CORPUS();
  std::mt19937_64 rng(12345);
  int parsed = 0, rejected = 0;
  for (const auto& name : test::corpus_hwx_names()) {
    const Bytes full = corpus(name);
    auto f = read_hwx(full);
    ASSERT_TRUE(f.ok());
    const uint64_t hot = f->symtab()->stroff + f->symtab()->strsize;  // header + tables
    for (int iter = 0; iter < 300; ++iter) {
      Bytes b = full;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k) {
        // Mostly in the structured first page and the first task.
        uint64_t off = (rng() % 2) ? rng() % hot : 0x4000 + rng() % 0x274;
        switch (rng() % 3) {
          case 0: b[off] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
          case 1: b[off] = static_cast<uint8_t>(rng()); break;
          default: if (off + 4 <= b.size()) put32(b, off, static_cast<uint32_t>(rng())); break;
        }
      }
      if (rng() % 8 == 0) b.resize(rng() % b.size());
      auto p = parse_program(b, name, hwx_only());
      if (p.ok()) {
        ++parsed;
        const Bytes out = write_hwx(*p->hwx);
        size_t first = 0;
        while (first < std::min(out.size(), b.size()) && out[first] == b[first]) ++first;
        EXPECT_TRUE(out == b) << name << " mutation " << iter << " did not round-trip: sizes " << out.size()
                              << " vs " << b.size() << ", first difference at " << first;
        (void)dump_text(*p);
        (void)dump_json(*p);
      } else {
        ++rejected;
        EXPECT_FALSE(p.error().message.empty());
        EXPECT_EQ(p.error().str().find('\n'), std::string::npos);
      }
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace ane

namespace ane {
namespace {

// Fuzzer finding: bytes between the last parsed command and sizeofcmds were
// dropped by the writer.
TEST(Malformed, BytesAfterTheLastCommandRoundTrip) {
  ANE_REQUIRE_CORPUS();
  Bytes b = corpus("conv");
  put32(b, 0x10, get32(b, 0x10) - 1);  // the LC_SYMTAB is no longer a command
  auto f = read_hwx(b);
  ASSERT_TRUE(f.ok()) << f.error().str();
  EXPECT_EQ(f->symtab(), nullptr);
  EXPECT_FALSE(f->extra.empty());
  EXPECT_TRUE(write_hwx(*f) == b);
}

// Fuzzer finding: sections with the same name (__FVMLIB,__const for each
// input) must be compared pairwise, not all against the first.
TEST(Malformed, SelfDiffIsEmptyWithRepeatedSectionNames) {
  ANE_REQUIRE_CORPUS();
  for (const auto& name : test::corpus_hwx_names()) {
    auto p = parse_program(corpus(name), name);
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(diff_programs(*p, *p).empty()) << name;
  }
  Bytes b = corpus("concat");
  auto f = read_hwx(b);
  ASSERT_TRUE(f.ok());
  // Give the second input's segment (command 3) file bytes: 0x400 at offset 0.
  put_u64(b, f->commands[3].offset + 0x30, 0x400);
  auto p = parse_program(b, "concat");
  ASSERT_TRUE(p.ok()) << p.error().str();
  EXPECT_TRUE(diff_programs(*p, *p).empty());
}

}  // namespace
}  // namespace ane

namespace ane {
namespace {

TEST(Malformed, ZeroFillSectionsNeedNoFileBytes) {
  ANE_REQUIRE_CORPUS();
  Bytes b = corpus("relu");
  auto f = read_hwx(b);
  ASSERT_TRUE(f.ok());
  const uint64_t const_sec = f->commands[1].offset + 0x48 + 0x50;  // __TEXT,__const
  put_u64(b, const_sec + 0x28, 0x1000000);                         // 16 MiB
  expect_error(b, const_sec + 0x28, "runs past the end of the file");
  put32(b, const_sec + 0x40, 0x01);  // S_ZEROFILL
  auto z = read_hwx(b);
  ASSERT_TRUE(z.ok()) << z.error().str();
  EXPECT_TRUE(write_hwx(*z) == b);
}

}  // namespace
}  // namespace ane
