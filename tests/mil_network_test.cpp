// hwx-build from MIL, against Apple: every H13 convolution and reduction
// record's own MIL text (tests/fixtures/oracles/h13/*/<case>.mil, verbatim)
// is compiled with a weight file holding the values Apple's compiler read
// (rebuilt from the record's formula; they hash to the record's constants).
// The result must
//   * equal, byte for byte, the program of the plist that says the same thing
//     (so MIL and plist input share the planner and the lowering), and
//   * equal Apple's task field by field outside the version fields
//     (oracle_build_fields.h), with the constant section's SHA-256.
// Records the plist path refuses must be refused from MIL too, naming the
// MIL line, op and argument.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/anec.h"
#include "ane/compiler.h"
#include "ane/mil.h"
#include "ane/mil_network.h"
#include "ane/program.h"
#include "ane/registers.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "ane/fp16.h"
#include "milblob_writer.h"
#include "oracle_build_fields.h"
#include "compile_net.h"
#include "oracle_fixture.h"
#include "oracle_plists.h"
#include "plist_builder.h"
#include "support.h"

namespace ane {
namespace {

using namespace test::pl;

const std::string kOracles = std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/oracles/h13/";
const std::string kNetworkIdent = "libane mil test";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string mil_path_of(const std::string& fx) { return fx.substr(0, fx.size() - 3) + ".mil"; }

std::vector<std::string> records_with_mil(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& fx : oracle::fixture_files(dir))
    if (std::filesystem::exists(mil_path_of(fx))) out.push_back(fx);
  return out;
}

const mil::Operation* find_op(const mil::Function& f, const std::string& op) {
  for (const auto& o : f.operations)
    if (o.op == op) return &o;
  return nullptr;
}

std::string name_argument(const mil::Operation& op, const std::string& argument) {
  const mil::Argument* a = op.argument(argument);
  if (!a) return "";
  const auto* r = std::get_if<mil::NameRef>(a);
  return r ? r->name : "";
}

Bytes fp16_bytes(const std::vector<uint16_t>& v) { return test::fp16_le_bytes(v); }

// A MILBlob v2 file with a record (fp16, `data`) at each given offset, the
// data placed from 256 on at 64-byte boundaries. The records' offsets are
// the MIL's, as the record generator wrote them (64, and 88 for a bias).
Bytes blob_file(const std::vector<std::pair<uint64_t, Bytes>>& records) {
  Bytes out(256, 0);
  put_u32(out, 0, static_cast<uint32_t>(records.size()));
  put_u32(out, 4, 2);
  for (const auto& [at, data] : records) {
    const uint64_t data_at = (out.size() + 63) / 64 * 64;
    put_u32(out, at, 0xdeadbeef);
    put_u32(out, at + 4, 1);  // fp16
    put_u64(out, at + 8, data.size());
    put_u64(out, at + 16, data_at);
    out.resize(data_at);
    out.insert(out.end(), data.begin(), data.end());
  }
  return out;
}

Expected<CompiledProgram> compile_with_ident(const Network& n, CompilerProfile profile = CompilerProfile::V421) {
  return test::compile_as(n, profile, kNetworkIdent);
}

// Under the macos26 profile, the fields that still differ from Apple's
// records, and why (docs/mil.md, "Compiler profiles"). Every other field
// must equal the record's.
const std::vector<std::pair<std::string, std::string>>& macos26_remaining() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"Header[1].ExeCycles", "a cycle estimate: the rule is known on one-value planes only (MilExeCycles)"},
  };
  return v;
}

// And on large convolutions, where Apple tiles the rows (TileHeight below
// Hout), narrows the L2 channel strips (rows of 0x2f00 - 0xbc000 bytes) or
// writes more than 16 output rows: how it chooses tiles and lays out L2
// there is not pinned down by the records, so hwx-build keeps its own.
const std::vector<std::string>& macos26_large_conv_fields() {
  static const std::vector<std::string> v = {"Common.TileCfg.TileHeight", "TileDMADst.DMAConfig.L2BfrMode", "L2."};
  return v;
}

// One record is off the ShMax rule (docs/mil.md): 3 at 750 output columns,
// where every other record gives 0 from 65 columns on.
bool macos26_record_exception(const std::string& record, const std::string& field) {
  return record == "encoder_conv_idx_c8_n8_k1x1_s1_g8_bias0_valid_pad" && field == "Common.Cfg.ShMax";
}

bool has_prefix(const std::string& name, const std::string& prefix) { return name.rfind(prefix, 0) == 0; }

bool macos26_remaining_field(const std::string& name, bool large_conv) {
  for (const auto& [prefix, why] : macos26_remaining())
    if (has_prefix(name, prefix)) return true;
  if (large_conv)
    for (const auto& prefix : macos26_large_conv_fields())
      if (has_prefix(name, prefix)) return true;
  return false;
}

// The macos26 profile's task against Apple's: equal outside macos26_remaining().
void expect_macos26_fields(const oracle::Fixture& f, const Network& net) {
  auto built = compile_with_ident(net, CompilerProfile::Macos26);
  ASSERT_TRUE(built.ok()) << built.error().str();
  auto apple = parse_program(oracle::anec_image(f, Bytes(f.constant_size, 0)), f.name + ".anec");
  ASSERT_TRUE(apple.ok()) << apple.error().str();
  ASSERT_EQ(built->tasks.size(), 1u);
  const auto& db = RegisterDatabase::h13();
  const RegisterImage& theirs_regs = apple->tasks[0].regs;
  auto field = [&](const RegisterImage& r, const char* name) { return r.get(*db.find(name)); };
  const bool large_conv =
      field(theirs_regs, "Common.TileCfg.TileHeight") != field(theirs_regs, "Common.OutDim.Hout") ||
      field(theirs_regs, "Common.OutDim.Hout") > 16 ||
      field(theirs_regs, "L2.SourceChannelStride.Stride") != field(built->tasks[0].regs, "L2.SourceChannelStride.Stride");
  for (const FieldInfo& fi : db.fields()) {
    const uint32_t ours = built->tasks[0].regs.get(fi), theirs = theirs_regs.get(fi);
    if (ours != theirs && !macos26_remaining_field(fi.name, large_conv) && !macos26_record_exception(f.name, fi.name))
      ADD_FAILURE() << f.name << " (macos26): " << fi.name << " hwx-build " << ours << ", Apple " << theirs;
  }
  // The constant section: Apple's bytes exactly (tables in 2048 bytes).
  const auto* konst = built->file.find_section("__TEXT", "__const");
  ASSERT_NE(konst, nullptr);
  EXPECT_EQ(sha256_hex(built->file.section_data(*konst)), f.constant_sha256) << f.name << " (macos26)";
}

// Both profiles' programs compute the same bits on the simulator.
void expect_profiles_run_alike(const Network& net, uint32_t seed) {
  auto a = compile_with_ident(net, CompilerProfile::V421);
  auto b = compile_with_ident(net, CompilerProfile::Macos26);
  ASSERT_TRUE(a.ok() && b.ok());
  auto pa = parse_program(a->bytes, "v421.hwx");
  auto pb = parse_program(b->bytes, "macos26.hwx");
  ASSERT_TRUE(pa.ok() && pb.ok());
  auto sa = sim::Simulator::create(*pa);
  auto sb = sim::Simulator::create(*pb);
  ASSERT_TRUE(sa.ok()) << sa.error().str();
  ASSERT_TRUE(sb.ok()) << sb.error().str();
  uint32_t state = seed;
  for (const auto& in : net.inputs) {
    sim::Tensor t;
    t.nchw = {1, in.channels, in.height, in.width};
    for (uint64_t i = 0; i < uint64_t{in.channels} * in.height * in.width; ++i) {
      state = state * 1664525u + 1013904223u;
      t.data.push_back(float_to_fp16(static_cast<float>(state >> 8) / 16777216.0f * 4 - 1));  // [-1, 3)
    }
    ASSERT_TRUE(sa->set_input(in.name, t).ok());
    ASSERT_TRUE(sb->set_input(in.name, t).ok());
  }
  auto ra = sa->run();
  auto rb = sb->run();
  ASSERT_TRUE(ra.ok()) << ra.error().str();
  ASSERT_TRUE(rb.ok()) << rb.error().str();
  for (const auto& out : net.outputs) {
    auto oa = sa->read_buffer(out.name);
    auto ob = sb->read_buffer(out.name);
    ASSERT_TRUE(oa.ok() && ob.ok());
    EXPECT_EQ(oa->data, ob->data) << out.name;
  }
}

// Apple's task against ours, field by field outside the version fields.
void expect_apple_fields(const oracle::Fixture& f, const CompiledProgram& built, bool reduction,
                         bool copy = false) {
  auto apple = parse_program(oracle::anec_image(f, Bytes(f.constant_size, 0)), f.name + ".anec");
  ASSERT_TRUE(apple.ok()) << apple.error().str();
  ASSERT_EQ(apple->tasks.size(), 1u);
  ASSERT_EQ(built.tasks.size(), 1u);
  size_t compared = 0;
  for (const FieldInfo& fi : RegisterDatabase::h13().fields()) {
    if (oracle::version_field(fi.name) || (reduction && oracle::reduction_version_field(fi.name)) ||
        (copy && oracle::passthrough_version_field(fi.name)))
      continue;
    ++compared;
    EXPECT_EQ(built.tasks[0].regs.get(fi), apple->tasks[0].regs.get(fi)) << f.name << ": " << fi.name;
  }
  EXPECT_GT(compared, 100u);
}

class MilConvRecord : public ::testing::TestWithParam<std::string> {};

TEST_P(MilConvRecord, CompilesAsItsPlistAndAsApple) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  const std::string text = read_text(mil_path_of(GetParam()));
  auto program = mil::parse_program(text, "model.mil");
  ASSERT_TRUE(program.ok()) << program.error().str();
  const mil::Function& main = program->functions.at(0);
  const mil::Operation* conv = find_op(main, "conv");
  ASSERT_NE(conv, nullptr);

  const oracle::ConvRecord c = oracle::ConvRecord::of(*f);
  if (oracle::too_large_for_sanitizers(c)) GTEST_SKIP() << "under AddressSanitizer: checked in the release build";
  auto k = oracle::rebuild_constants(*f, c.weight_count(), c.bias ? c.cout : 0);
  ASSERT_TRUE(k.ok()) << k.error().message;

  // The weight file: the weight's values at the weight's BLOBFILE offset, the
  // bias's at its own (where both name one offset, the bias is the first
  // values there: rebuild_constants reads both from the same start).
  std::map<uint64_t, Bytes> at_offset;
  const std::string w_name = name_argument(*conv, "weight"), b_name = name_argument(*conv, "bias");
  ASSERT_EQ(!b_name.empty(), c.bias);
  for (const auto& op : main.operations) {
    if (op.op != "const") continue;
    const auto* blob = std::get_if<mil::BlobRef>(&op.attributes.at("val").values);
    if (!blob) continue;
    ASSERT_TRUE(op.result == w_name || op.result == b_name) << op.result;
    Bytes data = fp16_bytes(op.result == w_name ? k->weights : k->bias);
    Bytes& slot = at_offset[blob->offset];
    if (data.size() > slot.size()) {
      if (!slot.empty()) {
        ASSERT_TRUE(std::equal(slot.begin(), slot.end(), data.begin())) << "offset " << blob->offset;
      }
      slot = std::move(data);
    }
  }
  test::TempDir dir;
  test::write_text(dir.file("model.mil"), text);
  test::write_bytes(dir.file("weights.bin"), blob_file({at_offset.begin(), at_offset.end()}));
  auto net = load_model(dir.file("model.mil"));
  ASSERT_TRUE(net.ok()) << net.error().str();
  auto built = compile_with_ident(*net);

  // The same network as a plist, with the units named as the MIL lowering names them.
  const std::string y = conv->result;
  oracle::ConvNames names;
  names.input = main.inputs.at(0).name;
  names.conv = c.bias ? y + "@conv" : y;
  names.bias = y;
  const std::string out = main.outputs.at(0);  // the conv's, or the relu's after it
  names.relu = out;
  names.output = out + "@output";
  const Net plist = oracle::conv_record_network(c, names);
  test::write_text(dir.file("net.plist"), plist.xml());
  test::write_bytes(dir.file("w.weights"), fp16_bytes(k->weights));
  if (c.bias) test::write_bytes(dir.file("b.weights"), fp16_bytes(k->bias));
  auto pnet = load_network(dir.file("net.plist"));
  ASSERT_TRUE(pnet.ok()) << pnet.error().str();
  auto from_plist = compile_with_ident(*pnet);

  ASSERT_EQ(built.ok(), from_plist.ok()) << (built ? from_plist.error().str() : built.error().str());
  if (!built) {
    // The packer's refusal (a layout libane does not know), named at the conv.
    const std::string m = built.error().str();
    EXPECT_NE(m.find(fmt::format("model.mil:{}: op 'conv'", conv->line)), std::string::npos) << m;
    std::cout << "[ refused  ] " << f->name << ": " << m << "\n";
    return;
  }
  EXPECT_TRUE(built->bytes == from_plist->bytes) << f->name << ": MIL and plist programs differ";
  if (f->tasks.size() == 1) {
    expect_apple_fields(*f, *built, false);
    expect_macos26_fields(*f, *net);
    if (c.cin * c.hin * c.win <= 64 * 16 * 16) expect_profiles_run_alike(*net, c.cin + c.cout);
  }
  // The constant section: Apple's SHA-256 (the records hash what the compiler read).
  const auto* konst = built->file.find_section("__TEXT", "__const");
  ASSERT_NE(konst, nullptr);
  if (f->tasks.size() == 1) {
    EXPECT_EQ(sha256_hex(built->file.section_data(*konst)), f->constant_sha256) << f->name;
  }
}

INSTANTIATE_TEST_SUITE_P(Records, MilConvRecord, ::testing::ValuesIn(records_with_mil(kOracles + "conv")),
                         oracle::test_name);

// Apple's single task (the record's words; a reduction reads no kernel, so
// the zero section stands for Apple's) and hwx-build's macos26 program on the
// same input: the same bits.
void expect_runs_as_apple(const oracle::Fixture& f, const Network& net) {
  auto built = compile_with_ident(net, CompilerProfile::Macos26);
  ASSERT_TRUE(built.ok()) << built.error().str();
  const Bytes image = oracle::anec_image(f, Bytes(f.constant_size, 0));
  auto decoded = parse_program(image, f.name + ".anec");
  ASSERT_TRUE(decoded.ok()) << decoded.error().str();
  const auto& db = RegisterDatabase::h13();
  const RegisterImage& first = decoded->tasks.front().regs;
  const AnecDescriptor d =
      oracle::io_descriptor(f, first.get(*db.find("Header[8].RBase0")), first.get(*db.find("Header[8].WBase")));
  auto theirs = read_anec(image, f.name + ".anec", &d);
  ASSERT_TRUE(theirs.ok()) << theirs.error().str();
  auto ours = parse_program(built->bytes, "macos26.hwx");
  ASSERT_TRUE(ours.ok());
  auto sa = sim::Simulator::create(*theirs);
  auto sb = sim::Simulator::create(*ours);
  ASSERT_TRUE(sa.ok() && sb.ok());
  sim::Tensor x;
  const auto shape = f.tensors.at(0).shape;
  x.nchw = {static_cast<uint32_t>(shape[0]), static_cast<uint32_t>(shape[1]), static_cast<uint32_t>(shape[2]),
            static_cast<uint32_t>(shape[3])};
  uint32_t state = 29;
  for (size_t i = 0; i < x.elements(); ++i) {
    state = state * 1664525u + 1013904223u;
    x.data.push_back(float_to_fp16(static_cast<float>(state >> 8) / 16777216.0f * 8 - 4));
  }
  ASSERT_TRUE(sa->set_input("x", x).ok());
  ASSERT_TRUE(sb->set_input(net.inputs.at(0).name, x).ok());
  ASSERT_TRUE(sa->run().ok());
  ASSERT_TRUE(sb->run().ok());
  auto ya = sa->read_buffer("y");
  auto yb = sb->read_buffer(net.outputs.at(0).name);
  ASSERT_TRUE(ya.ok() && yb.ok());
  EXPECT_EQ(yb->data, ya->data) << f.name;
}

class MilReduceRecord : public ::testing::TestWithParam<std::string> {};

TEST_P(MilReduceRecord, CompilesOrIsRefusedByName) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  test::TempDir dir;
  test::write_text(dir.file("model.mil"), read_text(mil_path_of(GetParam())));
  // Refused by the lowering (keep_dims) or by the planner, or compiled.
  auto net = load_model(dir.file("model.mil"));
  Expected<CompiledProgram> built = net ? compile_with_ident(*net) : Expected<CompiledProgram>(net.error());
  const auto axes = f->param_list("axes");
  const auto shape = f->param_list("shape");
  // Channels of 1x1 planes are reduced as the rows of one plane (compiler.md).
  // Over channels: a maximum (one neural-engine task), sums and means of 1x1
  // planes, and anything over one channel (a copy) compile.
  const bool channels_of_points = axes == std::vector<uint64_t>{1} &&
                                  ((shape[2] == 1 && shape[3] == 1) || shape[1] == 1 ||
                                   f->params.at("operation") == "reduce_max");
  const bool channel = std::find(axes.begin(), axes.end(), 1) != axes.end() && !channels_of_points;
  // Over the width alone, each row of a taller plane is a group (compiler.md).
  const bool plane = axes == std::vector<uint64_t>{2, 3} || axes == std::vector<uint64_t>{3} ||
                     (axes == std::vector<uint64_t>{2} && shape[3] == 1) || channels_of_points;
  std::array<uint64_t, 4> kept{shape[0], shape[1], shape[2], shape[3]};
  for (uint64_t a : axes) kept[a] = 1;
  // keep_dims false on a plane reduction: the C results as one row (OutChannelsW).
  const bool along_w = kept[2] == 1 && kept[3] == 1 && kept[1] > 1 &&
                       f->tensors.at(1).shape == std::array<uint64_t, 4>{kept[0], 1, 1, kept[1]};
  const bool kept_layout = f->tensors.at(1).shape == kept || along_w;
  if (channel || !plane || !kept_layout) {
    ASSERT_FALSE(built.ok()) << f->name << " compiled";
    const std::string m = built.error().str();
    EXPECT_NE(m.find("model.mil:"), std::string::npos) << m;
    EXPECT_NE(m.find(": op 'reduce_"), std::string::npos) << m;
    std::cout << "[ refused  ] " << f->name << ": " << m << "\n";
    return;
  }
  ASSERT_TRUE(built.ok()) << built.error().str();
  auto apple = parse_program(oracle::anec_image(*f, Bytes(f->constant_size, 0)), f->name + ".anec");
  ASSERT_TRUE(apple.ok());
  const auto* win = RegisterDatabase::h13().find("Common.InDim.Win");
  ASSERT_EQ(apple->tasks.size(), 1u) << f->name;
  if (apple->tasks[0].regs.get(*win) != built->tasks[0].regs.get(*win)) {
    // macOS 26 reads a long row as 4 shorter rows, v4.2.1 (eiln's
    // reductions over 1600 values) as one: the macos26 program is Apple's.
    std::cout << "[ folded   ] " << f->name << ": Apple (and the macos26 profile) read the row as 4 rows\n";
    expect_macos26_fields(*f, *net);
    expect_profiles_run_alike(*net, 11);
    expect_runs_as_apple(*f, *net);
    return;
  }
  // Over one channel the reduction is a copy, and a channel maximum a
  // pass-through task too: macOS 26 writes their kernel format.
  expect_apple_fields(*f, *built, true,
                      channels_of_points && (shape[1] == 1 || f->params.at("operation") == "reduce_max"));
  expect_macos26_fields(*f, *net);
  expect_profiles_run_alike(*net, 11);
  expect_runs_as_apple(*f, *net);
}

INSTANTIATE_TEST_SUITE_P(Records, MilReduceRecord, ::testing::ValuesIn(records_with_mil(kOracles + "reduce")),
                         oracle::test_name);


// ---- element-wise and table records (h13/binary, h13/unary) ----------------
//
// macOS 26 writes these tasks with a fixed set of words v4.2.1 leaves alone
// (hwx-build writes v4.2.1's). Each such field is listed with what Apple
// writes; any other field that differs from Apple's fails the test, and an
// entry no record needs fails it too (the list cannot hide a change).
struct Macos26Field {
  const char* family;  // "binary", "sub", "table", "relu", "bias": the records it applies to
  const char* prefix;  // register field name prefix
  const char* why;
};
const std::vector<Macos26Field>& macos26_fields() {
  static const std::vector<Macos26Field> v = {
      {"binary", "KernelDMASrc.CoeffDMAConfig[", "CacheHint 2 on every lane of a task that reads no kernel"},
      {"binary", "KernelDMASrc.Unk1F8C", "0x80 in four unnamed words (0x1F8C8, 0x1F8CC)"},
      {"binary", "KernelDMASrc.Unk1F8D", "0x80, as 0x1F8C8"},
      {"binary", "NE.KernelCfg.PalettizedBits", "8, and MACCfg bit 20, on the idle neural engine of a planar task"},
      {"binary", "NE.MACCfg.UnkBit20", "as PalettizedBits"},
      {"binary", "TileDMADst.Fmt.ZeroPad", "ZeroPadFirst / Last 1 on planar tasks too"},
      {"binary", "TileDMASrc.Src2GroupStride", "the whole second operand, as GroupStride (a version field)"},
      {"binary", "TileDMASrc.Unk13840", "0x100"},
      {"sub", "PE.Cfg.SecSrc", "a - b in one step: SecSrc 3, PreScale 1.0, operands in order; v4.2.1's form "
                               "(eiln sub) is (-1 x b) + a"},
      {"sub", "PE.PreScale", "as SecSrc"},
      {"sub", "Header[8].RBase1", "as SecSrc (the operands' order)"},
      {"table", "NE.KernelCfg.KernelFmt", "2 and BinaryPoint 28, as a convolution's"},
      {"table", "NE.MACCfg.BinaryPoint", "as KernelFmt"},
      {"table", "KernelDMASrc.CoeffDMAConfig[", "the table in a 2048-byte section read by all 16 lanes"},
      {"table", "KernelDMASrc.CoeffBfrSize[", "as CoeffDMAConfig (relu: 0, no table)"},
      {"bias", "Common.DPE.Category", "1 on a task that adds AccBias (rsqrt)"},
  };
  return v;
}

std::vector<std::string> families_of(const std::string& name) {
  if (name.find("_maximum_c") != std::string::npos || name.find("_minimum_c") != std::string::npos) return {"table"};
  if (name.find("_constant_scalar") != std::string::npos) return {"binary", "scalar"};
  if (name.rfind("binary_", 0) == 0)
    return name.find("_sub_") != std::string::npos ? std::vector<std::string>{"binary", "sub"}
                                                   : std::vector<std::string>{"binary"};
  if (name.find("rsqrt") != std::string::npos) return {"table", "bias"};
  if (name.rfind("unary_abs_", 0) == 0) return {"binary"};  // a one-source planar task
  return {"table"};
}

std::vector<std::string> op_records() {
  auto v = records_with_mil(kOracles + "binary");
  for (auto& u : records_with_mil(kOracles + "unary")) v.push_back(u);
  // A scalar constant operand: add, sub and mul are one planar affine task,
  // maximum and minimum one table task (Clip).
  for (auto& u : records_with_mil(kOracles + "binary_constant")) v.push_back(u);
  return v;
}

// Compiles one record's MIL and compares it with Apple's task; `used`
// collects the listed fields that differed.
void compare_op_record(const std::string& fx, std::set<std::string>& used) {
  auto f = oracle::load_fixture(fx);
  ASSERT_TRUE(f.ok()) << f.error().message;
  test::TempDir dir;
  test::write_text(dir.file("model.mil"), read_text(mil_path_of(fx)));
  auto net = load_model(dir.file("model.mil"));
  ASSERT_TRUE(net.ok()) << net.error().str();
  auto built = compile_with_ident(*net);
  ASSERT_TRUE(built.ok()) << built.error().str();
  auto apple = parse_program(oracle::anec_image(*f, Bytes(f->constant_size, 0)), f->name + ".anec");
  ASSERT_TRUE(apple.ok()) << apple.error().str();
  ASSERT_EQ(built->tasks.size(), 1u);
  ASSERT_EQ(apple->tasks.size(), 1u);
  const auto families = families_of(f->name);
  for (const FieldInfo& fi : RegisterDatabase::h13().fields()) {
    const uint32_t ours = built->tasks[0].regs.get(fi), theirs = apple->tasks[0].regs.get(fi);
    if (ours == theirs || oracle::version_field(fi.name)) continue;
    const Macos26Field* listed = nullptr;
    for (const auto& m : macos26_fields())
      if (fi.name.rfind(m.prefix, 0) == 0 && std::count(families.begin(), families.end(), m.family)) listed = &m;
    if (listed) {
      used.insert(std::string(listed->family) + " " + listed->prefix);
      continue;
    }
    ADD_FAILURE() << f->name << ": " << fi.name << " hwx-build " << ours << ", Apple " << theirs;
  }
  // macOS 26's stream layout (compiler.md, "Stream layout"): the same
  // streams as the record, in the same order.
  auto m26 = compile_with_ident(*net, CompilerProfile::Macos26);
  ASSERT_TRUE(m26.ok()) << m26.error().str();
  EXPECT_EQ(oracle::stream_shape(m26->tasks[0]), oracle::stream_shape(f->tasks[0])) << f->name;
  // The constants: v4.2.1 stores a table's 128 bytes, macOS 26 the same
  // bytes in a 2048-byte section; an element-wise task's section is zeros.
  const auto* konst = built->file.find_section("__TEXT", "__const");
  ASSERT_NE(konst, nullptr);
  auto data = built->file.section_data(*konst);
  Bytes padded(data.begin(), data.end());
  ASSERT_LE(padded.size(), f->constant_size);
  padded.resize(f->constant_size, 0);
  EXPECT_EQ(sha256_hex(padded), f->constant_sha256) << f->name;
  expect_macos26_fields(*f, *net);
  expect_profiles_run_alike(*net, 7);
}

class MilOpRecord : public ::testing::TestWithParam<std::string> {};

TEST_P(MilOpRecord, CompilesAsAppleOutsideTheListedFields) {
  std::set<std::string> used;
  compare_op_record(GetParam(), used);
}

INSTANTIATE_TEST_SUITE_P(Records, MilOpRecord, ::testing::ValuesIn(op_records()), oracle::test_name);

// Every listed field is needed by some record.
TEST(MilOpRecordList, EveryListedFieldIsNeeded) {
  std::set<std::string> used;
  for (const auto& fx : op_records()) compare_op_record(fx, used);
  for (const auto& m : macos26_fields())
    EXPECT_TRUE(used.count(std::string(m.family) + " " + m.prefix)) << m.family << " " << m.prefix;
}

// macOS 26's cycle estimate on one-value planes (compiler.md): every task of
// every element-wise, unary, scalar, real_div and channel-maximum record on
// 1xCx1x1 planes, C = 1 to 4096, as Apple's. The other records keep it in
// macos26_remaining().
TEST(MilExeCycles, OneValuePlanesAsApple) {
  std::vector<std::string> fxs = op_records();
  for (const auto& d : {"binary_div", "reduce"})
    for (auto& u : records_with_mil(kOracles + d)) fxs.push_back(u);
  const auto* cycles = RegisterDatabase::h13().find("Header[1].ExeCycles");
  size_t checked = 0, nonzero = 0;
  for (const auto& fx : fxs) {
    auto f = oracle::load_fixture(fx);
    ASSERT_TRUE(f.ok()) << f.error().message;
    const auto shape = f->tensors.at(0).shape;
    const std::string op = f->params.count("operation") ? f->params.at("operation") : "";
    if (shape[2] != 1 || shape[3] != 1) continue;
    if (op.rfind("reduce_", 0) == 0 && op != "reduce_max") continue;  // a planar reduction: no rule
    test::TempDir dir;
    test::write_text(dir.file("model.mil"), read_text(mil_path_of(fx)));
    auto net = load_model(dir.file("model.mil"));
    ASSERT_TRUE(net.ok()) << net.error().str();
    auto built = compile_with_ident(*net, CompilerProfile::Macos26);
    ASSERT_TRUE(built.ok()) << f->name << ": " << built.error().str();
    auto apple = parse_program(oracle::anec_image(*f, Bytes(f->constant_size, 0)), f->name + ".anec");
    ASSERT_TRUE(apple.ok());
    ASSERT_EQ(built->tasks.size(), apple->tasks.size()) << f->name;
    for (size_t i = 0; i < built->tasks.size(); ++i) {
      const uint32_t theirs = apple->tasks[i].regs.get(*cycles);
      EXPECT_EQ(built->tasks[i].regs.get(*cycles), theirs) << f->name << " task " << i;
      nonzero += theirs != 0;
    }
    ++checked;
  }
  EXPECT_GE(checked, 80u);
  EXPECT_GE(nonzero, 40u);
}

// A main(x: [1, 64, 1, 1] fp16) -> y program of `body`'s statements,
// compiled and run on x; y's values (empty after a failure, reported).
std::vector<uint16_t> run_mil(const std::string& body, const std::vector<uint16_t>& x, const Bytes& weights = {}) {
  test::TempDir dir;
  test::write_text(dir.file("model.mil"), "program(1.3)\n{\n  func main<ios18>(tensor<fp16, [1, 64, 1, 1]> x) {\n" +
                                              body + "  } -> (y);\n}\n");
  if (!weights.empty()) test::write_bytes(dir.file("weights.bin"), weights);
  auto net = load_model(dir.file("model.mil"));
  EXPECT_TRUE(net.ok()) << net.error().str();
  if (!net) return {};
  auto built = compile_with_ident(*net);
  EXPECT_TRUE(built.ok()) << built.error().str();
  if (!built) return {};
  auto program = parse_program(built->bytes, "m.hwx");
  EXPECT_TRUE(program.ok());
  if (!program) return {};
  auto sim = sim::Simulator::create(*program);
  EXPECT_TRUE(sim.ok()) << sim.error().str();
  if (!sim) return {};
  sim::Tensor in;
  in.nchw = {1, 64, 1, 1};
  in.data = x;
  EXPECT_TRUE(sim->set_input("x", in).ok());
  EXPECT_TRUE(sim->run().ok());
  auto out = sim->read_buffer(sim->outputs().at(0).name);
  EXPECT_TRUE(out.ok());
  return out ? out->data : std::vector<uint16_t>{};
}

// x + c, x - c, c + x, x * c and c * x for an fp16 scalar c run as one
// planar affine task, Scale x + Bias; each result is the exact value rounded
// once to fp16 (the sum or product of two fp16 values is exact in fp32).
// maximum and minimum with c run as one Clip table task, exactly.
TEST(MilScalar, ElementWiseOpsWithAScalarRunAsTheirDefinition) {
  struct Case {
    std::string expr;
    double (*f)(double, double);
  } cases[] = {
      {"add(x = x, y = c)", [](double x, double c) { return x + c; }},
      {"add(x = c, y = x)", [](double x, double c) { return x + c; }},
      {"sub(x = x, y = c)", [](double x, double c) { return x - c; }},
      // Scale x + Bias with Bias +0: 0 times a negative c gives +0, not -0.
      {"mul(x = x, y = c)", [](double x, double c) { return x * c + 0.0; }},
      {"mul(x = c, y = x)", [](double x, double c) { return x * c + 0.0; }},
      {"maximum(x = x, y = c)", [](double x, double c) { return std::max(x, c); }},
      {"maximum(x = c, y = x)", [](double x, double c) { return std::max(x, c); }},
      {"minimum(x = x, y = c)", [](double x, double c) { return std::min(x, c); }},
  };
  std::vector<uint16_t> x;
  for (int i = 0; i < 64; ++i) x.push_back(float_to_fp16(static_cast<float>(i - 32) * 0.37f));
  // The scalar spelled as a scalar, as a one-value tensor in the text, and as
  // a one-value tensor in a weight blob: each broadcasts as the scalar.
  enum class Spelling { Scalar, OneValueTensor, OneValueBlob };
  for (const Case& k : cases)
    for (const char* c : {"0x1.8p+1", "-0x1.4p-3"})
      for (Spelling sp : {Spelling::Scalar, Spelling::OneValueTensor, Spelling::OneValueBlob}) {
        SCOPED_TRACE(k.expr + " with c = " + c + " spelled " + std::to_string(static_cast<int>(sp)));
        const double cv = std::strtod(c, nullptr);
        std::string constant;
        Bytes weights;
        if (sp == Spelling::Scalar) {
          constant = std::string("fp16 c = const()[name = string(\"c\"), val = fp16(") + c + ")]";
        } else if (sp == Spelling::OneValueTensor) {
          constant = std::string("tensor<fp16, [1]> c = const()[name = string(\"c\"), val = tensor<fp16, [1]>([") + c +
                     "])]";
        } else {
          const uint16_t one[1] = {double_to_fp16(cv)};
          const test::MilBlob blob{mil::BlobDataType::Fp16, test::fp16_data(one), 0};
          weights = test::write_milblob(std::span(&blob, 1)).bytes;
          constant = "tensor<fp16, [1, 1, 1, 1]> c = const()[name = string(\"c\"), val = tensor<fp16, [1, 1, 1, "
                     "1]>(BLOBFILE(path = string(\"@model_path/weights.bin\"), offset = uint64(64)))]";
        }
        const auto y = run_mil("    " + constant + ";\n    tensor<fp16, [1, 64, 1, 1]> y = " + k.expr +
                                   "[name = string(\"y\")];\n",
                               x, weights);
        ASSERT_EQ(y.size(), x.size());
        for (size_t i = 0; i < x.size(); ++i)
          EXPECT_EQ(y[i], double_to_fp16(k.f(fp16_to_float(x[i]), cv))) << "x = " << fp16_to_float(x[i]);
      }
}

// abs(x) is one planar task, |1.0 x + 0| (PE.Cfg.Cond): the sign cleared,
// for normal and subnormal values, zeros and infinities alike.
TEST(MilAbs, RunsAsTheAbsoluteValue) {
  const std::vector<uint16_t> specials = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400,
                                          0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x3555, 0xb555};
  std::vector<uint16_t> x = specials;
  uint32_t state = 11;
  while (x.size() < 64) {
    state = state * 1664525u + 1013904223u;
    const auto v = static_cast<uint16_t>(state >> 16);
    if ((v & 0x7c00) != 0x7c00) x.push_back(v);  // finite values
  }
  const auto y = run_mil("    tensor<fp16, [1, 64, 1, 1]> y = abs(x = x)[name = string(\"y\")];\n", x);
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], x[i] & 0x7fff) << std::hex << "x = 0x" << x[i];
}

// rsqrt(x, epsilon) and inverse(x, epsilon) add the epsilon before the table
// (AccBias): the result follows 1 / sqrt(x + eps) and 1 / (x + eps), also
// where x is 0 and the table alone would give infinity.
TEST(MilEpsilon, RsqrtAndInverseAddTheirEpsilon) {
  std::vector<uint16_t> x;
  for (int i = 0; i < 64; ++i) x.push_back(float_to_fp16(static_cast<float>(i) / 8));  // 0 .. 7.875
  for (const auto& [op, f] : std::vector<std::pair<std::string, double (*)(double)>>{
           {"rsqrt", [](double v) { return 1 / std::sqrt(v); }}, {"inverse", [](double v) { return 1 / v; }}}) {
    const auto y = run_mil("    tensor<fp16, [1, 64, 1, 1]> y = " + op +
                               "(x = x, epsilon = fp32(0.25))[name = string(\"y\")];\n",
                           x);
    ASSERT_EQ(y.size(), x.size());
    for (int i = 0; i < 64; ++i) {
      const double want = f(i / 8.0 + 0.25);
      EXPECT_NEAR(fp16_to_float(y[i]), want, 2e-3 * want + std::ldexp(want, -11)) << op << " x = " << i / 8.0;
    }
  }
}

}  // namespace
}  // namespace ane
