// H14 convolution tasks seen by H13's packer (packed_conv_kernel.h).
#include "packed_conv_kernel.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/conv_kernel.h"

namespace ane::test {

namespace {

// The kernel DMA words (no names in the tables yet): lane i's config,
// offset and size, and the base the offsets add to. H15 - H18 keep the
// block at 0x5500, each word after the first 8 bytes further up.
struct KernelDmaWords {
  uint32_t lane_cfg, lane_offset, lane_size, base;
};
KernelDmaWords kernel_dma_words(Generation g) {
  if (g == Generation::H14) return {0x1918, 0x1958, 0x1998, 0x1908};
  return {0x5520, 0x5560, 0x55a0, 0x5510};
}

uint32_t field(const RegisterImage& r, const char* name) {
  const FieldInfo* f = r.database().find(name);
  // H15 - H18 name no convolution window or padding fields: their records
  // with a kernel are 1x1 matmuls, no padding (U1).
  if (!f && r.database().generation() != Generation::H14) return 0;
  EXPECT_NE(f, nullptr) << name;
  return f ? r.get(*f) : 0;
}

}  // namespace

oracle::Fixture as_oracle(const packed::Fixture& f) {
  oracle::Fixture o;
  o.file = f.file;
  o.name = f.name;
  o.family = f.family;
  o.params = f.params;
  o.weights = f.weights;
  return o;
}

uint32_t packed_conv_value(const RegisterImage& r, const char* name) {
  if (auto v = r.written_value(name)) return *v;
  const std::string_view n = name;
  if (n == "Common.ConvCfg.Kw" || n == "Common.ConvCfg.Kh" || n == "Common.ConvCfg.Sx" || n == "Common.ConvCfg.Sy" ||
      n == "Common.GroupConvCfg.NumGroups")
    return 1;
  if (n == "Common.Cin.Cin" || n == "Common.Cout.Cout") return 16;
  if (n == "Common.OCGCfg.OCGSize") return 3;  // rule U9
  return field(r, name);
}

ConvFieldReader packed_conv_reader(const RegisterImage& r) {
  return [&r](const char* n) {
    return packed_conv_value(r, std::string_view(n) == "Common.ConvCfg.OCGSize" ? "Common.OCGCfg.OCGSize" : n);
  };
}

std::vector<const Task*> packed_conv_tasks(const Program& p) {
  std::vector<const Task*> out;
  for (const Task& t : p.tasks) {
    const FieldInfo* op = t.regs.database().find("NE.MACCfg.OpMode");
    if (op && t.regs.written(op->address) && (t.regs.word(op->address) & 0xf) == 0) out.push_back(&t);
  }
  return out;
}

ConvSection pack_conv_section(const Program& program, const oracle::ConvRecord& c, const oracle::Constants& k,
                            uint64_t size, const std::string& name) {
  return pack_conv_sections(program, std::vector<TaskWeights>(packed_conv_tasks(program).size(), {c, k}), size, name);
}

ConvSection pack_conv_sections(const Program& program, const std::vector<TaskWeights>& per_task, uint64_t size,
                               const std::string& name, const Bytes* into, const Bytes* table) {
  ConvSection out;
  Bytes section = into ? *into : Bytes(size, 0);
  const std::vector<const Task*> tasks = packed_conv_tasks(program);
  if (tasks.size() != per_task.size()) {
    out.refusal = fmt::format("{} convolution tasks, {} weight sets", tasks.size(), per_task.size());
    return out;
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Task* t = tasks[i];
    const oracle::ConvRecord& c = per_task[i].conv;
    const oracle::Constants& k = per_task[i].constants;
    const RegisterImage& r = t->regs;
    SCOPED_TRACE(name + " task " + std::to_string(t->index));
    // H14's zero-skipping form groups the masks of 16 slots (the stride-2
    // records' hashes; H13's 8 gives none of them).
    auto p = pack_task_weights(k, c, packed_conv_reader(r), 16);
    if (!p) {
      out.refusal = p.error().message;
      return out;
    }
    const auto [kLaneCfg, kLaneOffset, kLaneSize, kKernelBase] = kernel_dma_words(t->generation);
    const uint64_t base = r.word(kKernelBase);
    // A table activation on the convolution: the table opens each lane (U15).
    const Bytes* head = table && packed_conv_value(r, "NE.MACCfg.NonlinearMode") == 2 ? table : nullptr;
    const uint64_t extra = head ? head->size() : 0;
    for (int lane = 0; lane < kKernelLanes; ++lane) {
      const bool en = r.written(kLaneCfg + 4 * lane) && (r.word(kLaneCfg + 4 * lane) & 1);
      EXPECT_EQ(en, p->lane_size[lane] != 0) << name << " task " << t->index << " lane " << lane;
      if (!en || !p->lane_size[lane]) continue;
      const uint64_t at = base + r.word(kLaneOffset + 4 * lane), lane_size = r.word(kLaneSize + 4 * lane);
      // Rule U10: a lane whose size is unwritten holds 64 bytes.
      EXPECT_EQ(r.written(kLaneSize + 4 * lane) ? lane_size : 64u, p->lane_size[lane] + extra)
          << name << " task " << t->index << " lane " << lane;
      if (at + p->lane_size[lane] + extra > section.size()) {
        ADD_FAILURE() << name << " task " << t->index << " lane " << lane << " ends past the section";
        return out;
      }
      if (head) std::copy(head->begin(), head->end(), section.begin() + static_cast<ptrdiff_t>(at));
      std::copy_n(p->bytes.begin() + static_cast<ptrdiff_t>(p->lane_offset[lane]), p->lane_size[lane],
                  section.begin() + static_cast<ptrdiff_t>(at + extra));
    }
  }
  out.section = std::move(section);
  return out;
}

}  // namespace ane::test
