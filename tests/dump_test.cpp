// hwx-dump: JSON shape, text output, diff, weights and one-line errors,
// exercised through the real binary.
#include <filesystem>
#include <cstring>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ane/dump.h"
#include "ane/registers.h"
#include "support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ane {
namespace {

std::string dump_cmd(const std::string& args) { return std::string(HWX_DUMP_EXE) + " " + args; }

json run_json(const std::string& file) {
  std::string out, err;
  const int rc = test::run_command(dump_cmd("--json '" + file + "'"), &out, &err);
  EXPECT_EQ(rc, 0) << err;
  return json::parse(out);
}

using test::TempDir;
using test::write_bytes;

TEST(DumpJson, HasTheDocumentedShapeForEveryCorpusFile) {
  ANE_REQUIRE_CORPUS();
  const auto& db = RegisterDatabase::h13();
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const std::string path = test::corpus_hwx_path(name);
    const json j = run_json(path);
    EXPECT_EQ(j["file"], path);
    EXPECT_EQ(j["size"], fs::file_size(path));
    for (const char* k : {"magic", "cputype", "cpusubtype", "filetype", "ncmds", "sizeofcmds", "flags"})
      EXPECT_TRUE(j["header"].contains(k)) << k;
    EXPECT_EQ(j["header"]["magic"], 0xBEEFFACEu);
    EXPECT_EQ(j["target"], "h13");
    ASSERT_EQ(j["load_commands"].size(), j["header"]["ncmds"].get<size_t>());
    for (const auto& lc : j["load_commands"])
      for (const char* k : {"cmd", "cmdsize", "offset"}) EXPECT_TRUE(lc.contains(k)) << k;
    for (const auto& s : j["segments"]) {
      for (const char* k : {"name", "vmaddr", "vmsize", "fileoff", "filesize", "sections"})
        EXPECT_TRUE(s.contains(k)) << k;
      for (const auto& sec : s["sections"])
        for (const char* k : {"name", "segment", "addr", "size", "offset"}) EXPECT_TRUE(sec.contains(k)) << k;
    }
    for (const auto& s : j["symbols"])
      for (const char* k : {"name", "value", "type", "sect"}) EXPECT_TRUE(s.contains(k)) << k;
    for (const auto& b : j["buffers"]) EXPECT_TRUE(b.contains("name"));
    ASSERT_FALSE(j["tasks"].empty());
    for (const auto& t : j["tasks"]) {
      for (const char* k : {"index", "offset", "size", "registers"}) EXPECT_TRUE(t.contains(k)) << k;
      // Every field of the database is present, and nothing else.
      EXPECT_EQ(t["registers"].size(), db.fields().size());
      for (const auto& f : db.fields()) EXPECT_TRUE(t["registers"].contains(f.name)) << f.name;
    }
  }
}

TEST(DumpJson, ValuesMatchTheFile) {
  ANE_REQUIRE_CORPUS();
  const json j = run_json(test::corpus_hwx_path("relu"));
  const auto& regs = j["tasks"][0]["registers"];
  EXPECT_EQ(regs["Common.InDim.Win"], 77);
  EXPECT_EQ(regs["Common.OutDim.Wout"], 77);
  EXPECT_EQ(regs["NE.MACCfg.NonlinearMode"], 1);  // ReLU
  EXPECT_EQ(regs["Header[0].EON"], 1);
  EXPECT_EQ(regs["TileDMASrc.RowStride.Stride"], 3);  // 0xc0 bytes in 64-byte units
  EXPECT_EQ(j["tasks"][0]["offset"], 0x4000);
  const json concat = run_json(test::corpus_hwx_path("concat"));
  ASSERT_EQ(concat["tasks"].size(), 2u);
  EXPECT_EQ(concat["tasks"][1]["offset"], 0x4300);
  EXPECT_EQ(concat["tasks"][1]["index"], 1);
  const json sum = run_json(test::corpus_hwx_path("sum"));
  ASSERT_EQ(sum["buffers"].size(), 3u);
  EXPECT_EQ(sum["buffers"][0]["name"], "image2");
  EXPECT_EQ(sum["buffers"][0]["direction"], "input");
  EXPECT_EQ(sum["buffers"][0]["slot"], 5);
  EXPECT_EQ(sum["buffers"][2]["direction"], "output");
  EXPECT_EQ(sum["buffers"][2]["c"], 64);
  EXPECT_EQ(sum["buffers"][2]["strides"]["c"], 64);
  EXPECT_EQ(sum["buffers"][2]["type_name"], "float16");
}

TEST(DumpText, ShowsBuffersAndNamedRegisters) {
  ANE_REQUIRE_CORPUS();
  std::string out;
  ASSERT_EQ(test::run_command(dump_cmd(test::corpus_hwx_path("sigmoid")), &out), 0);
  EXPECT_NE(out.find("Mach-O header"), std::string::npos);
  EXPECT_NE(out.find("Buffers"), std::string::npos);
  EXPECT_NE(out.find("image"), std::string::npos);
  EXPECT_NE(out.find("Task 0 at __text+0x0 (file 0x4000), 0x274 bytes, 7 streams"), std::string::npos);
  EXPECT_NE(out.find("InDim"), std::string::npos);
  EXPECT_NE(out.find("Win=0x4d"), std::string::npos);  // 77
  EXPECT_NE(out.find("NonlinearMode=2"), std::string::npos);
  EXPECT_NE(out.find("zin_ane_compiler v4.2.1"), std::string::npos);
  std::string raw;
  ASSERT_EQ(test::run_command(dump_cmd("--raw " + test::corpus_hwx_path("sigmoid")), &raw), 0);
  EXPECT_NE(raw.find("+0x028: 0xf401f800  stream: 62 words at 0x1f800"), std::string::npos);
}

TEST(DumpDiff, IdenticalFilesHaveNoDifferences) {
  ANE_REQUIRE_CORPUS();
  std::string out;
  const std::string f = test::corpus_hwx_path("conv");
  EXPECT_EQ(test::run_command(dump_cmd("--diff " + f + " " + f), &out), 0);
  EXPECT_NE(out.find("no differences"), std::string::npos);
}

TEST(DumpDiff, ReluAgainstSigmoidNamesTheRegistersThatDiffer) {
  ANE_REQUIRE_CORPUS();
  std::string out;
  const int rc = test::run_command(
      dump_cmd("--diff " + test::corpus_hwx_path("relu") + " " + test::corpus_hwx_path("sigmoid")), &out);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("task[0].NE.MACCfg.NonlinearMode: 1 -> 2"), std::string::npos) << out;
  EXPECT_NE(out.find("task[0].KernelDMASrc.CoeffDMAConfig[0].En: 0 -> 1"), std::string::npos) << out;
  EXPECT_NE(out.find("task[0].Header[9].KBE0: 0 -> 1"), std::string::npos) << out;
  // Registers that are the same in both are not listed.
  EXPECT_EQ(out.find("Common.InDim.Win"), std::string::npos) << out;
  EXPECT_NE(out.find("section __TEXT,__const bytes"), std::string::npos) << out;
}

TEST(DumpDiff, OneChangedWordIsExactlyOneFieldDifference) {
  ANE_REQUIRE_CORPUS();
  TempDir tmp;
  Bytes b = test::read_or_die(test::corpus_hwx_path("relu"));
  const std::string a = test::corpus_hwx_path("relu");
  // Common.InDim (task offset 0x128): Win 77 -> 78.
  b[0x4000 + 0x128] = 78;
  write_bytes(tmp.file("b.hwx"), b);
  auto pa = open_program(a);
  auto pb = open_program(tmp.file("b.hwx"));
  ASSERT_TRUE(pa.ok() && pb.ok());
  const auto d = diff_programs(*pa, *pb);
  std::vector<std::string> reg_diffs;
  for (const auto& e : d)
    if (e.path.rfind("task[", 0) == 0) reg_diffs.push_back(e.path + "=" + e.a + "->" + e.b);
  EXPECT_EQ(reg_diffs, (std::vector<std::string>{"task[0].Common.InDim.Win=77 (0x4d)->78 (0x4e)"}));
}

TEST(DumpWeights, WritesEachKernelSymbolsBytes) {
  ANE_REQUIRE_CORPUS();
  TempDir tmp;
  std::string out;
  ASSERT_EQ(test::run_command(dump_cmd("--weights " + tmp.file("w") + " " + test::corpus_hwx_path("conv")), &out), 0);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(tmp.file("w"))) files.push_back(e.path());
  ASSERT_EQ(files.size(), 3u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    EXPECT_EQ(f.extension(), ".bin");
    EXPECT_EQ(f.stem().string().substr(0, 1), "K");
    const Bytes data = test::read_or_die(f.string());
    ASSERT_EQ(data.size(), 0x40u);
    // fp16 kernel of 2.0: little-endian 0x4000 in the first used position.
    EXPECT_EQ(data[0], 0x00);
    EXPECT_EQ(data[1], 0x40);
  }
}

TEST(DumpWeights, HostileSymbolNamesStayInsideTheDirectory) {
  ANE_REQUIRE_CORPUS();
  TempDir tmp;
  Bytes b = test::read_or_die(test::corpus_hwx_path("conv"));
  auto f = read_hwx(b);
  ASSERT_TRUE(f.ok());
  // Rename kernel symbol 0 to "../../<rest>" and symbol 1 to ".." in place.
  const uint64_t s0 = f->symtab()->stroff + f->symbols[0].nlist.strx;
  const uint64_t s1 = f->symtab()->stroff + f->symbols[1].nlist.strx;
  std::memcpy(&b[s0], "../../", 6);
  std::memcpy(&b[s1], "..\0", 3);
  write_bytes(tmp.file("evil.hwx"), b);
  fs::create_directories(tmp.file("out/inner"));
  std::string out, err;
  ASSERT_EQ(test::run_command(dump_cmd("--weights " + tmp.file("out/inner") + " " + tmp.file("evil.hwx")), &out, &err),
            0)
      << err;
  size_t inside = 0;
  for (const auto& e : fs::directory_iterator(tmp.file("out/inner"))) {
    EXPECT_EQ(e.path().parent_path(), fs::path(tmp.file("out/inner")));
    ++inside;
  }
  EXPECT_EQ(inside, 3u);
  size_t outer = 0;
  for (const auto& e : fs::recursive_directory_iterator(tmp.path)) outer += e.path().extension() == ".bin";
  EXPECT_EQ(outer, 3u);
}

TEST(DumpErrors, MalformedInputGivesOneLineAndNonZeroExit) {
  ANE_REQUIRE_CORPUS();
  TempDir tmp;
  const Bytes full = test::read_or_die(test::corpus_hwx_path("conv"));
  write_bytes(tmp.file("trunc.hwx"), Bytes(full.begin(), full.begin() + 0x100));
  std::string out, err;
  int rc = test::run_command(dump_cmd(tmp.file("trunc.hwx")), &out, &err);
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err, "hwx-dump: " + tmp.file("trunc.hwx") + ": offset 0x14: sizeofcmds 0x" +
                     [&] { char buf[16]; snprintf(buf, sizeof buf, "%x", *ByteView(full).u32(0x14)); return std::string(buf); }() +
                     " runs past the end of the file (0x100 bytes)\n");
  EXPECT_TRUE(out.empty());

  rc = test::run_command(dump_cmd(tmp.file("missing.hwx")), &out, &err);
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err.rfind("hwx-dump: " + tmp.file("missing.hwx") + ": cannot open", 0), 0u) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);

  Bytes bad = full;
  bad[0] = 0;
  write_bytes(tmp.file("magic.hwx"), bad);
  rc = test::run_command(dump_cmd("--json " + tmp.file("magic.hwx")), &out, &err);
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err, "hwx-dump: " + tmp.file("magic.hwx") + ": offset 0x0: bad magic 0xbeeffa00, expected 0xbeefface (HWX)\n");
}

TEST(DumpErrors, DirectoriesAndEmptyFiles) {
  TempDir tmp;
  std::string out, err;
  EXPECT_EQ(test::run_command(dump_cmd(tmp.path), &out, &err), 2);
  EXPECT_EQ(err, "hwx-dump: " + tmp.path + ": is a directory, not a file\n");
  write_bytes(tmp.file("empty.hwx"), {});
  EXPECT_EQ(test::run_command(dump_cmd(tmp.file("empty.hwx")), &out, &err), 2);
  EXPECT_EQ(err, "hwx-dump: " + tmp.file("empty.hwx") +
                     ": offset 0x0: file is 0 bytes, smaller than the 32-byte Mach-O header\n");
}

TEST(DumpErrors, UsageErrors) {
  std::string out, err;
  EXPECT_EQ(test::run_command(dump_cmd(""), &out, &err), 2);
  EXPECT_EQ(test::run_command(dump_cmd("--diff onlyone.hwx"), &out, &err), 2);
  EXPECT_EQ(test::run_command(dump_cmd("--help"), &out, &err), 0);
  EXPECT_NE(out.find("--diff"), std::string::npos);
  EXPECT_NE(out.find("--weights"), std::string::npos);
}

}  // namespace
}  // namespace ane

namespace ane {
namespace {

// An independent decoder: for v4.2.1 files every task has the fixed 0x274
// layout, so each aneregs.json field can be read straight from the file at
// task offset + byte. Every published field of every task in hwx-dump --json
// must agree with it.
TEST(DumpJson, EveryPublishedFieldAgreesWithAFixedOffsetDecoder) {
  ANE_REQUIRE_CORPUS();
  std::ifstream in(test::corpus_dir() + "/aneregs.json");
  const json table = json::parse(in);
  ASSERT_EQ(table.size(), 258u);
  size_t compared = 0;
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const Bytes file = test::read_or_die(test::corpus_hwx_path(name));
    const json j = run_json(test::corpus_hwx_path(name));
    for (const auto& task : j["tasks"]) {
      const uint64_t base = task["offset"].get<uint64_t>();
      for (const auto& entry : table) {
        std::string field = entry[0].get<std::string>();
        field = field.substr(field.find('.') + 1);  // drop aneTD. / aneRegs.
        const uint64_t byte = entry[1][0].get<uint64_t>();
        const uint32_t bit = entry[1][1].get<uint32_t>() + 8 * (byte % 4);
        const uint32_t width = entry[1][2].get<uint32_t>();
        const uint64_t at = base + byte - byte % 4;
        const uint32_t word = file[at] | file[at + 1] << 8 | file[at + 2] << 16 |
                              static_cast<uint32_t>(file[at + 3]) << 24;
        const uint32_t expect = width == 32 ? word : (word >> bit) & ((1u << width) - 1);
        ASSERT_TRUE(task["registers"].contains(field)) << field;
        EXPECT_EQ(task["registers"][field].get<uint32_t>(), expect) << field;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 258u * 7);  // seven tasks in the corpus
}

}  // namespace
}  // namespace ane

namespace ane {
namespace {

TEST(DumpJson, UnknownCommandsShowTheirRawBytes) {
  ANE_REQUIRE_CORPUS();
  TempDir tmp;
  Bytes b = test::read_or_die(test::corpus_hwx_path("relu"));
  auto f = read_hwx(b);
  ASSERT_TRUE(f.ok());
  size_t ident = 0;
  for (size_t i = 0; i < f->commands.size(); ++i)
    if (f->commands[i].cmd == macho::LC_IDENT) ident = i;
  put_u32(b, f->commands[ident].offset, 0x77);  // now an unknown command
  write_bytes(tmp.file("raw.hwx"), b);
  const json j = run_json(tmp.file("raw.hwx"));
  const auto& lc = j["load_commands"][ident];
  EXPECT_EQ(lc["cmd"], 0x77);
  // "ANEC v1\n..." as hex, right after cmd and cmdsize.
  EXPECT_EQ(lc["raw"].get<std::string>().substr(0, 16), "414e45432076310a");
  EXPECT_EQ(lc["raw"].get<std::string>().size(), 2 * (f->commands[ident].cmdsize - 8u));
}

}  // namespace
}  // namespace ane
