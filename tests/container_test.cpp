// Container reader/writer on the Apple-compiled corpus: exact round trips and
// values checked against facts stated in the shared docs (hwx-format.md).
#include <gtest/gtest.h>

#include "ane/hwx.h"
#include "support.h"

namespace ane {
namespace {

HwxFile load(const std::string& name) {
  auto bytes = test::read_or_die(test::corpus_hwx_path(name));
  auto f = read_hwx(bytes);
  EXPECT_TRUE(f.ok()) << name << ": " << (f ? "" : f.error().str());
  return f ? std::move(f).value() : HwxFile{};
}

TEST(Container, CorpusHasSixPrograms) {
  ANE_REQUIRE_CORPUS();
  EXPECT_EQ(test::corpus_hwx_names(),
            (std::vector<std::string>{"concat", "conv", "gemm", "relu", "sigmoid", "sum"}));
}

TEST(Container, EveryCorpusFileRoundTripsByteForByte) {
  ANE_REQUIRE_CORPUS();
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const auto bytes = test::read_or_die(test::corpus_hwx_path(name));
    auto f = read_hwx(bytes);
    ASSERT_TRUE(f.ok()) << f.error().str();
    const Bytes out = write_hwx(*f);
    ASSERT_EQ(out.size(), bytes.size());
    EXPECT_TRUE(out == bytes);
    // Apple's files have nothing outside the parsed structures.
    EXPECT_TRUE(f->extra.empty());
  }
}

TEST(Container, RoundTripKeepsBytesOutsideKnownStructures) {
  ANE_REQUIRE_CORPUS();
  auto bytes = test::read_or_die(test::corpus_hwx_path("relu"));
  // Poke a byte into the zero gap between the string table and __text.
  bytes[0x3000] = 0x5a;
  auto f = read_hwx(bytes);
  ASSERT_TRUE(f.ok()) << f.error().str();
  ASSERT_EQ(f->extra.size(), 1u);
  EXPECT_EQ(f->extra[0].offset, 0x3000u);
  EXPECT_TRUE(write_hwx(*f) == bytes);
}

TEST(Container, HeaderMatchesDocumentedValues) {
  ANE_REQUIRE_CORPUS();
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const HwxFile f = load(name);
    EXPECT_EQ(f.header.magic, 0xBEEFFACEu);
    EXPECT_EQ(f.header.cputype, 0x80u);
    EXPECT_EQ(f.header.cpusubtype, 4u);
    EXPECT_EQ(f.header.filetype, 2u);
    EXPECT_EQ(f.header.flags, 0x00200000u);
    // ncmds = 5 + 3 x buffers (hwx-format.md 2).
    EXPECT_EQ(f.header.ncmds, 5 + 3 * f.buffers().size());
    EXPECT_EQ(f.commands.size(), f.header.ncmds);
    // LC_SYMTAB is always last.
    EXPECT_EQ(f.commands.back().cmd, macho::LC_SYMTAB);
    EXPECT_EQ(f.symtab()->symoff, 0x20 + f.header.sizeofcmds);
  }
}

TEST(Container, TextAndConstSectionsOfConv) {
  ANE_REQUIRE_CORPUS();
  const HwxFile f = load("conv");
  const auto* text = f.find_section("__TEXT", "__text");
  const auto* cnst = f.find_section("__TEXT", "__const");
  ASSERT_TRUE(text && cnst);
  EXPECT_EQ(text->addr, 0x30000000u);
  EXPECT_EQ(text->size, 0x274u);
  EXPECT_EQ(text->offset, 0x4000u);
  EXPECT_EQ(text->align, 14u);
  EXPECT_EQ(text->flags, 0x128u);  // with relocations
  EXPECT_EQ(cnst->addr, 0x30000280u);
  EXPECT_EQ(cnst->size, 0xc0u);
  EXPECT_EQ(cnst->flags, 0x26u);
  // Three relocations, one per enabled kernel lane, at task offset 0x74 + 4i.
  ASSERT_EQ(text->relocations.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(text->relocations[i].address, 0x74 + 4 * i);
    EXPECT_EQ(text->relocations[i].info, 0x05000002u);
  }
  // The fp16 kernel is all 2.0 (0x4000), so __const holds 00 40 pairs.
  const auto data = f.section_data(*cnst);
  ASSERT_EQ(data.size(), 0xc0u);
  EXPECT_EQ(data[0], 0x00);
  EXPECT_EQ(data[1], 0x40);
}

TEST(Container, EmptyConstIsAZeroPage) {
  ANE_REQUIRE_CORPUS();
  for (const char* name : {"relu", "sum", "concat"}) {
    SCOPED_TRACE(name);
    const HwxFile f = load(name);
    const auto* cnst = f.find_section("__TEXT", "__const");
    ASSERT_TRUE(cnst);
    EXPECT_EQ(cnst->size, 0x4000u);
    const auto* text = f.find_section("__TEXT", "__text");
    EXPECT_EQ(text->flags, 0x28u);  // no relocations
    EXPECT_TRUE(text->relocations.empty());
  }
  const HwxFile concat = load("concat");
  EXPECT_EQ(concat.find_section("__TEXT", "__text")->size, 0x574u);
  EXPECT_EQ(concat.find_section("__TEXT", "__const")->addr, 0x30000580u);
  EXPECT_EQ(load("gemm").find_segment("__TEXT")->vmsize, 0x84000u);
}

TEST(Container, SumBuffersSlotsAndDescriptors) {
  ANE_REQUIRE_CORPUS();
  const HwxFile f = load("sum");
  const auto bufs = f.buffers();
  ASSERT_EQ(bufs.size(), 3u);
  // Declared in plist order: Inputs image2, image, then the output.
  EXPECT_EQ(bufs[0].name, "image2");
  EXPECT_EQ(bufs[0].address, 0x30008000u);
  EXPECT_EQ(bufs[0].slot, 5);
  EXPECT_EQ(bufs[1].name, "image");
  EXPECT_EQ(bufs[1].address, 0x3000c000u);
  EXPECT_EQ(bufs[1].slot, 6);
  EXPECT_EQ(bufs[2].direction, BufferDirection::Output);
  EXPECT_EQ(bufs[2].address, 0x30010000u);
  EXPECT_EQ(bufs[2].slot, 4);
  for (const auto& b : bufs) {
    SCOPED_TRACE(b.name);
    ASSERT_TRUE(b.descriptor.has_value());
    EXPECT_EQ(b.descriptor->nchw, (std::array<uint32_t, 4>{1, 64, 1, 1}));
    EXPECT_EQ(b.descriptor->strides, (std::array<uint64_t, 4>{0x1000, 0x40, 0x40, 2}));
    EXPECT_EQ(b.descriptor->type, 5u);
    EXPECT_EQ(element_type_name(b.descriptor->type), "float16");
    EXPECT_EQ(b.size, 0x1000u);
  }
  EXPECT_EQ(bufs[1].direction, BufferDirection::Input);
  EXPECT_EQ(bufs[2].descriptor->extent, 0xfc2u);  // tight extent of the output
  EXPECT_EQ(bufs[1].descriptor->extent, 0x1000u);
  // Flavor-3 descriptors: inputs in alphabetical order, then outputs.
  const auto descs = f.descriptors();
  ASSERT_EQ(descs.size(), 3u);
  EXPECT_EQ(descs[0].name, "image");
  EXPECT_EQ(descs[1].name, "image2");
  EXPECT_EQ(descs[2].direction, 2u);
}

TEST(Container, ProgramDescriptor) {
  ANE_REQUIRE_CORPUS();
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const HwxFile f = load(name);
    const auto p = f.program();
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->count, 0x214u);
    EXPECT_EQ(p->slots[0], 0x30000000u);  // __text
    EXPECT_EQ(p->slots[1], f.find_section("__TEXT", "__const")->addr);
    EXPECT_EQ(p->text_address, 0x30000000u);
    EXPECT_EQ(p->first_task_words_m1, 0x9cu);
    EXPECT_EQ(p->task_count, name == "concat" ? 2u : 1u);
    EXPECT_EQ(p->name_offset, 0x860u);
    EXPECT_EQ(p->network_name, "net");
  }
}

TEST(Container, SymbolsAndStabs) {
  ANE_REQUIRE_CORPUS();
  const HwxFile f = load("conv");
  // 3 kernel symbols, 2 buffer symbols, 10 type stabs, 2 tensor stabs.
  ASSERT_EQ(f.symbols.size(), 3u + 2 + 10 + 2);
  for (int i = 0; i < 3; ++i) {
    const auto& s = f.symbols[i];
    EXPECT_EQ(s.name.size(), 1 + 64 + 4 + 1u);
    EXPECT_EQ(s.name.substr(65), "_ne_" + std::to_string(i));
    EXPECT_EQ(s.nlist.type, 0x0f);
    EXPECT_EQ(s.nlist.sect, 2);
    EXPECT_EQ(s.nlist.value, 0x30000280u + 0x40u * i);
  }
  EXPECT_EQ(f.symbols[5].name, "void:t1=1");
  EXPECT_EQ(f.symbols[14].name, "uint6:t10=r1;0;63");
  EXPECT_EQ(f.symbols[15].name, "image:t11=ar1;0;1;12=s192n:ar1;0;3;13=s64c:ar1;0;1;14=s64h:ar1;0;1;15=s2w:5");
  EXPECT_EQ(f.buffers()[0].stab, f.symbols[15].name);
}

TEST(Container, IdentTextMatchesPairs) {
  ANE_REQUIRE_CORPUS();
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const HwxFile f = load(name);
    const auto ident = test::read_or_die(test::corpus_dir() + "/pairs/" + name + "/ident.txt");
    ASSERT_NE(f.ident(), nullptr);
    EXPECT_EQ(f.ident()->text, std::string(ident.begin(), ident.end()));
  }
}

TEST(Container, BufferNamesFromLoadFvmlib) {
  ANE_REQUIRE_CORPUS();
  const HwxFile f = load("concat");
  const auto bufs = f.buffers();
  ASSERT_EQ(bufs.size(), 3u);
  EXPECT_EQ(bufs[0].name, "input_1");
  EXPECT_EQ(bufs[1].name, "input_0");
  EXPECT_EQ(bufs[2].descriptor->extent, 0x1003c2u);
  EXPECT_EQ(bufs[2].size, 0x100400u);
  for (const auto& lc : f.commands)
    if (lc.cmd == macho::LC_LOADFVMLIB) {
      const auto* d = lc.as<BufferDeclCommand>();
      ASSERT_TRUE(d);
      EXPECT_EQ(d->name_offset, 0x14u);
      EXPECT_EQ(lc.cmdsize % 8, 0u);
    }
}

}  // namespace
}  // namespace ane

namespace ane {
namespace {

TEST(TensorStab, ParsesTheDocumentedForm) {
  auto st = parse_tensor_stab("image:t11=ar1;0;1;12=s192n:ar1;0;3;13=s64c:ar1;0;1;14=s64h:ar1;0;1;15=s2w:5");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->name, "image");
  EXPECT_EQ(st->first_type, 11u);
  EXPECT_EQ(st->nchw, (std::array<uint64_t, 4>{1, 3, 1, 1}));
  EXPECT_EQ(st->strides, (std::array<uint64_t, 4>{192, 64, 64, 2}));
  EXPECT_EQ(st->element_type, 5u);
  // Names may contain ':' and '@'.
  st = parse_tensor_stab("a:b@output:t16=ar1;0;2;17=s8n:ar1;0;1;18=s4c:ar1;0;1;19=s4h:ar1;0;2;20=s2w:5");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->name, "a:b@output");
  EXPECT_EQ(st->nchw[0], 2u);
}

TEST(TensorStab, RejectsOtherStrings) {
  for (const char* s : {"void:t1=1", "float16:t5=r1;2;0", "", ":t", "x:t1=ar1;0;1;2=s1n:",
                        "image:t11=ar1;0;1;13=s192n:ar1;0;3;13=s64c:ar1;0;1;14=s64h:ar1;0;1;15=s2w:5",
                        "image:t11=ar1;0;1;12=s192n:ar1;0;3;13=s64c:ar1;0;1;14=s64h:ar1;0;1;15=s2w:5x",
                        "image:t11=ar1;0;99999999999999999999999;12=s1n:ar1;0;3;13=s64c:ar1;0;1;14=s64h:ar1;0;1;15=s2w:5"})
    EXPECT_FALSE(parse_tensor_stab(s).has_value()) << s;
}

TEST(TensorStab, AgreesWithTheBufferDescriptorsInEveryCorpusFile) {
  ANE_REQUIRE_CORPUS();
  int checked = 0;
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const auto bytes = test::read_or_die(test::corpus_hwx_path(name));
    auto f = read_hwx(bytes);
    ASSERT_TRUE(f.ok());
    for (const auto& b : f->buffers()) {
      SCOPED_TRACE(b.name);
      ASSERT_TRUE(b.stab_shape.has_value());
      ASSERT_TRUE(b.descriptor.has_value());
      for (int d = 0; d < 4; ++d) {
        EXPECT_EQ(b.stab_shape->nchw[d], b.descriptor->nchw[d]);
        EXPECT_EQ(b.stab_shape->strides[d], b.descriptor->strides[d]);
      }
      EXPECT_EQ(b.stab_shape->element_type, b.descriptor->type);
      EXPECT_EQ(b.stab_shape->strides[0] * b.stab_shape->nchw[0], b.size);  // N x N stride = buffer size
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3 + 2 + 2 + 2 + 2 + 3);
}

}  // namespace
}  // namespace ane
