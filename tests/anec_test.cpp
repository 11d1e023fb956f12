// The anec container: eiln's kernels read with and without a descriptor,
// the descriptor spellings (manifest JSON, anect's C header, the packed
// header of newer anecc), the HWX -> anec -> Program round trip, and
// malformed images.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ane/anec.h"
#include "ane/dump.h"
#include "ane/fp16.h"
#include "ane/sim.h"
#include "support.h"

namespace ane {
namespace {

using json = nlohmann::json;

std::string anec_dir() { return test::corpus_dir() + "/anec"; }

json manifest() {
  const Bytes b = test::read_or_die(anec_dir() + "/MANIFEST.json");
  return json::parse(b.begin(), b.end());
}

OpenOptions with_descriptor(const std::string& path, const std::string& entry = "") {
  OpenOptions o;
  o.descriptor_path = path;
  o.descriptor_entry = entry;
  return o;
}

// Without a descriptor the tasks alone give the manifest's task and kernel
// sizes and its whole slot table: slot sizes from the DMA extents rounded to
// tiles, roles from the driver's convention.
TEST(Anec, EveryCorpusKernelMatchesItsManifestEntryWithoutADescriptor) {
  ANE_REQUIRE_CORPUS();
  const json m = manifest();
  ASSERT_EQ(m["kernels"].size(), 25u);
  for (const auto& k : m["kernels"]) {
    const std::string name = k["name"];
    SCOPED_TRACE(name);
    auto p = open_program(anec_dir() + "/" + k["file"].get<std::string>());
    ASSERT_TRUE(p.ok()) << p.error().str();
    EXPECT_EQ(p->format, ContainerFormat::Anec);
    EXPECT_FALSE(p->hwx.has_value());
    ASSERT_TRUE(p->anec.has_value());
    EXPECT_EQ(p->tasks.size(), k["td_count"].get<size_t>());
    EXPECT_EQ(p->anec->task_bytes, k["tsk_size"].get<uint64_t>());
    EXPECT_EQ(p->anec->kernel_bytes, k["krn_size"].get<uint64_t>());
    EXPECT_EQ(p->anec->kernel_offset, (k["tsk_size"].get<uint64_t>() + 15) / 16 * 16);
    for (const auto& t : p->tasks) EXPECT_EQ(t.size, k["td_size"].get<uint32_t>());
    int srcs = 0, dsts = 0;
    for (const auto& s : k["slots"]) {
      const int idx = s["slot"];
      const ProgramSlot* slot = p->slot(idx);
      ASSERT_NE(slot, nullptr) << "slot " << idx;
      EXPECT_EQ(slot->size, s["bytes"].get<uint64_t>()) << "slot " << idx;
      const std::string type = s["type"];
      const SlotRole want = type == "cmd"   ? SlotRole::Tasks
                            : type == "itm" ? SlotRole::Intermediate
                            : type == "dst" ? SlotRole::Output
                                            : SlotRole::Input;
      EXPECT_EQ(slot->role, want) << "slot " << idx;
      srcs += type == "src";
      dsts += type == "dst";
    }
    EXPECT_EQ(srcs, k["input_count"].get<int>());
    EXPECT_EQ(dsts, k["output_count"].get<int>());
    // Slot 1 is the kernel bytes, right after the padded task chain.
    const ProgramSlot* krn = p->slot(1);
    ASSERT_NE(krn, nullptr);
    EXPECT_EQ(krn->address, p->slot(0)->address + p->anec->kernel_offset);
    EXPECT_EQ(krn->contents.size(), k["krn_size"].get<uint64_t>());
    // Buffers: src0.., dst0.. with the shape the tasks read and write.
    ASSERT_EQ(p->buffers.size(), static_cast<size_t>(srcs + dsts));
    for (const auto& b : p->buffers) {
      ASSERT_TRUE(b.layout.has_value()) << b.name;
      EXPECT_EQ(b.layout->nchw, (std::array<uint64_t, 4>{1, 1, 2560, 1600})) << b.name;
      EXPECT_EQ(b.layout->strides[2], 3200u) << b.name;
      EXPECT_EQ(b.layout->strides[3], 2u) << b.name;
    }
    EXPECT_NE(p->buffer("src0"), nullptr);
    EXPECT_NE(p->buffer("dst0"), nullptr);
  }
}

TEST(Anec, ManifestDescriptorIsCheckedAgainstTheImage) {
  ANE_REQUIRE_CORPUS();
  const std::string softmax = anec_dir() + "/activation/softmax.bin";
  auto p = open_program(softmax, with_descriptor(anec_dir() + "/MANIFEST.json"));
  ASSERT_TRUE(p.ok()) << p.error().str();
  EXPECT_EQ(p->name, "softmax");
  EXPECT_NE(p->anec->descriptor.find("entry 'softmax'"), std::string::npos) << p->anec->descriptor;
  // Another entry's sizes do not fit this image.
  auto wrong = open_program(softmax, with_descriptor(anec_dir() + "/MANIFEST.json", "tanh"));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("says size 0x300, the image has 0xf00"), std::string::npos)
      << wrong.error().str();
  auto none = open_program(softmax, with_descriptor(anec_dir() + "/MANIFEST.json", "nope"));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no entry named 'nope'"), std::string::npos) << none.error().str();
}

// The C header eiln's anect writes (struct ane_model with designated
// initializers): names by slot order, NCHW with plane and row strides.
TEST(Anec, CHeaderDescriptorGivesNamesAndShapes) {
  ANE_REQUIRE_CORPUS();
  test::TempDir dir;
  const std::string header = R"(// a test header in anect's layout
static const struct ane_model anec_add = {
    .name = "add",
    .input_count = 2,
    .output_count = 1,
    .anec = {
        .size = 0x4280,
        .td_size = 0x274,
        .td_count = 0x1,
        .tsk_size = 0x274,
        .krn_size = 0x4000,
        .tiles[0] = 2, // tsk 0x8000
        .tiles[4] = 500, // dst0 0x7d0000
        .tiles[5] = 500, // src0 0x7d0000
        .tiles[6] = 500, /* src1 */
        .types[0] = ANE_TILE_CMD,
        .types[4] = ANE_TILE_DST,
        .types[5] = ANE_TILE_SRC,
        .types[6] = ANE_TILE_SRC,
    },
    .nchw[4] = { 1, 1, 2560, 1600, 0x7d0000, 0xc80 }, // dst0
    .nchw[5] = { 1, 1, 2560, 1600, 0x7d0000, 0xc80 },
    .nchw[6] = { 1, 1, 2560, 1600, 0x7d0000, 0xc80 },
};
)";
  test::write_text(dir.file("anec_add.h"), header);
  auto p = open_program(anec_dir() + "/binary/add.bin", with_descriptor(dir.file("anec_add.h")));
  ASSERT_TRUE(p.ok()) << p.error().str();
  EXPECT_EQ(p->name, "add");
  ASSERT_NE(p->buffer("src1"), nullptr);
  EXPECT_EQ(p->buffer("src1")->slot, 6);
  EXPECT_EQ(p->buffer("src1")->shape_source, "descriptor");
  EXPECT_EQ(p->buffer("dst0")->layout->strides, (std::array<uint64_t, 4>{0x7d0000, 0x7d0000, 0xc80, 2}));
  // A size that disagrees with the image is named.
  std::string bad = header;
  bad.replace(bad.find(".krn_size = 0x4000"), 18, ".krn_size = 0x4080");
  test::write_text(dir.file("bad.h"), bad);
  auto q = open_program(anec_dir() + "/binary/add.bin", with_descriptor(dir.file("bad.h")));
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().message, dir.file("bad.h") + " (anec_add) says krn_size 0x4080, the image has 0x4000");
}

// Newer anecc (and mil-hwx-compiler) put a packed 0x6a8-byte header,
// zero-filled to 0x1000, in front of the same image.
Bytes packed(const Bytes& image, uint32_t td_size, uint32_t td_count, uint64_t tsk, uint64_t krn) {
  Bytes out(0x1000, 0);
  put_u64(out, 0, image.size());
  put_u32(out, 8, td_size);
  put_u32(out, 0xc, td_count);
  put_u64(out, 0x10, tsk);
  put_u64(out, 0x18, krn);
  put_u32(out, 0x20, 1);    // inputs
  put_u32(out, 0x24, 1);    // outputs
  put_u32(out, 0x28, 1);    // tiles[0]
  for (int k : {4, 5}) {
    put_u32(out, 0x28 + 4 * k, 500);
    const uint64_t nchw[6] = {1, 1, 2560, 1600, 0x7d0000, 0xc80};
    for (int i = 0; i < 6; ++i) put_u64(out, 0xa8 + 48 * k + 8 * i, nchw[i]);
  }
  out.insert(out.end(), image.begin(), image.end());
  return out;
}

TEST(Anec, PackedHeaderFlavourIsRead) {
  ANE_REQUIRE_CORPUS();
  const Bytes image = test::read_or_die(anec_dir() + "/unary/tanh.bin");
  const Bytes file = packed(image, 0x274, 1, 0x274, 0x80);
  EXPECT_TRUE(anec_has_packed_header(file));
  EXPECT_FALSE(anec_has_packed_header(image));
  auto p = parse_program(file, "tanh.anec");
  ASSERT_TRUE(p.ok()) << p.error().str();
  auto plain = parse_program(image, "tanh.bin");
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(p->tasks.size(), 1u);
  EXPECT_EQ(p->tasks[0].regs, plain->tasks[0].regs);
  EXPECT_EQ(p->tasks[0].file_offset, 0x1000u);
  EXPECT_EQ(p->anec->descriptor, "the image's 0x1000-byte header");
  EXPECT_EQ(p->buffer("src0")->shape_source, "descriptor");
  EXPECT_EQ(std::vector<uint8_t>(p->kernel_bytes().begin(), p->kernel_bytes().end()),
            std::vector<uint8_t>(plain->kernel_bytes().begin(), plain->kernel_bytes().end()));
  // Fields that disagree with the file: not a header, read as a plain image.
  Bytes off = file;
  put_u64(off, 0, image.size() + 16);
  EXPECT_FALSE(anec_has_packed_header(off));
}

// HWX -> anec -> Program: the same tasks, kernel bytes and buffers, and the
// same simulated outputs.
void expect_round_trip(const Program& hwx) {
  auto out = export_anec(hwx, "model");
  ASSERT_TRUE(out.ok()) << out.error().str();
  test::TempDir dir;
  test::write_bytes(dir.file("model.anec"), out->image);
  test::write_text(dir.file("model.json"), out->descriptor_json);
  test::write_text(dir.file("anec_model.h"), out->header);
  for (const std::string d : {"model.json", "anec_model.h"}) {
    SCOPED_TRACE(d);
    auto back = open_program(dir.file("model.anec"), with_descriptor(dir.file(d)));
    ASSERT_TRUE(back.ok()) << back.error().str();
    ASSERT_EQ(back->tasks.size(), hwx.tasks.size());
    for (size_t i = 0; i < hwx.tasks.size(); ++i) {
      EXPECT_EQ(back->tasks[i].regs, hwx.tasks[i].regs) << "task " << i;
      EXPECT_EQ(back->tasks[i].text_offset, hwx.tasks[i].text_offset) << "task " << i;
    }
    EXPECT_TRUE(std::equal(back->kernel_bytes().begin(), back->kernel_bytes().end(), hwx.kernel_bytes().begin(),
                           hwx.kernel_bytes().end()));
    ASSERT_EQ(back->buffers.size(), hwx.buffers.size());
    // anect's header carries no tensor names (the driver's src0.., dst0..
    // remain), so buffers meet by slot there, by name through the JSON.
    const bool named = d == "model.json";
    for (const auto& b : hwx.buffers) {
      const Buffer* c = nullptr;
      for (const auto& cand : back->buffers)
        if (named ? cand.name == b.name : cand.slot == b.slot) c = &cand;
      ASSERT_NE(c, nullptr) << b.name;
      EXPECT_EQ(c->direction, b.direction) << b.name;
      EXPECT_EQ(c->slot, b.slot) << b.name;
      ASSERT_TRUE(c->layout && b.layout) << b.name;
      EXPECT_EQ(c->layout->nchw, b.layout->nchw) << b.name;
      EXPECT_EQ(c->layout->strides[1], b.layout->strides[1]) << b.name;
      EXPECT_EQ(c->layout->strides[2], b.layout->strides[2]) << b.name;
    }
  }
}

TEST(Anec, CorpusHwxRoundTripsThroughAnec) {
  ANE_REQUIRE_CORPUS();
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    auto p = open_program(test::corpus_hwx_path(name));
    ASSERT_TRUE(p.ok());
    expect_round_trip(*p);
  }
}

TEST(Anec, ExampleNetworksRoundTripAndRunTheSame) {
  test::TempDir dir;
  const std::string hwx = dir.file("mlp.hwx");
  ASSERT_EQ(test::run_command(std::string(HWX_BUILD_EXE) + " -q " + LIBANE_SOURCE_DIR +
                                  "/examples/networks/mlp/net.plist -o " + hwx,
                              nullptr),
            0);
  auto p = open_program(hwx);
  ASSERT_TRUE(p.ok()) << p.error().str();
  expect_round_trip(*p);
  auto out = export_anec(*p, "mlp");
  ASSERT_TRUE(out.ok());
  auto back = parse_program(out->image, "mlp.anec");
  ASSERT_TRUE(back.ok()) << back.error().str();
  // Without a descriptor the names are the driver's: dst0 dst1 src0 src1.
  auto a = sim::Simulator::create(*p), b = sim::Simulator::create(*back);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<std::string> in_names;
  for (const auto& i : b->inputs()) in_names.push_back(i.name);
  EXPECT_EQ(in_names, (std::vector<std::string>{"src0", "src1"}));
  for (size_t i = 0; i < a->inputs().size(); ++i) {
    const auto& hb = a->inputs()[i];
    const auto shape = hb.layout->nchw;
    sim::Tensor t;
    t.nchw = {1, static_cast<uint32_t>(shape[1]), static_cast<uint32_t>(shape[2]), static_cast<uint32_t>(shape[3])};
    for (uint64_t e = 0; e < shape[1] * shape[2] * shape[3]; ++e)
      t.data.push_back(float_to_fp16(0.25f * static_cast<float>(e % 13) - 1.5f));
    ASSERT_TRUE(a->set_input(hb.name, t).ok());
    // The anec's inputs follow the slot order the HWX uses.
    const Buffer* twin = nullptr;
    for (const auto& c : b->inputs())
      if (c.slot == hb.slot) twin = &c;
    ASSERT_NE(twin, nullptr);
    ASSERT_TRUE(b->set_input(twin->name, t).ok());
  }
  ASSERT_TRUE(a->run().ok());
  ASSERT_TRUE(b->run().ok());
  for (const auto& o : a->outputs()) {
    const Buffer* twin = nullptr;
    for (const auto& c : b->outputs())
      if (c.slot == o.slot) twin = &c;
    ASSERT_NE(twin, nullptr) << o.name;
    EXPECT_EQ(a->read_buffer(o.name)->data, b->read_buffer(twin->name)->data) << o.name;
  }
}

TEST(Anec, ExportRefusesProgramsOffTheDriversConvention) {
  ANE_REQUIRE_CORPUS();
  auto p = open_program(test::corpus_hwx_path("sum"));
  ASSERT_TRUE(p.ok());
  Program q = *p;
  for (auto& b : q.buffers)
    if (b.name == "image") b.slot = 9;
  auto out = export_anec(q, "sum");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message,
            "input 'image' sits in slot 9; the driver's convention (outputs from slot 4, then inputs) needs slot 6");
}

void expect_anec_error(const Bytes& b, uint64_t offset, const std::string& what) {
  OpenOptions o;
  o.format = ContainerFormat::Anec;
  auto p = parse_program(b, "bad.anec", o);
  ASSERT_FALSE(p.ok()) << "expected: " << what;
  EXPECT_EQ(p.error().offset, offset) << p.error().str();
  EXPECT_NE(p.error().message.find(what), std::string::npos) << p.error().str();
  EXPECT_EQ(p.error().str().find('\n'), std::string::npos);
}

TEST(Anec, MalformedImagesGiveOneLineErrors) {
  ANE_REQUIRE_CORPUS();
  const Bytes atan = test::read_or_die(anec_dir() + "/unary/atan.bin");
  expect_anec_error({}, 0, "too short for an anec image");
  expect_anec_error(Bytes(atan.begin(), atan.begin() + 0x400), 0x300,
                    "task 1 (0x274 bytes at the anec image+0x300) runs past the end");
  Bytes pad = atan;
  pad[0x875] = 1;  // the padding between the chain (0x874) and the kernel bytes (0x880)
  expect_anec_error(pad, 0x875, "in the padding after the task chain");
  Bytes cyc = atan;
  put_u32(cyc, 0x300 + 0x1c, 0x100);  // task 1 points back
  expect_anec_error(cyc, 0x31c, "does not move forward");
  Bytes out = atan;
  put_u32(out, 0x1c, 0x7fff0000);  // task 0 points past the image
  expect_anec_error(out, 0x1c, "is outside the anec image");
}

TEST(Anec, ContentDecidesTheFormat) {
  ANE_REQUIRE_CORPUS();
  EXPECT_TRUE(looks_like_anec(test::read_or_die(anec_dir() + "/unary/exp.bin")));
  EXPECT_FALSE(looks_like_anec(test::read_or_die(test::corpus_hwx_path("relu"))));
  EXPECT_TRUE(looks_like_hwx(test::read_or_die(test::corpus_hwx_path("relu"))));
  // Garbage is neither: the HWX reader's error, which names the magic.
  auto p = parse_program(Bytes(64, 0x11), "x");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("bad magic"), std::string::npos) << p.error().str();
}

}  // namespace
}  // namespace ane
