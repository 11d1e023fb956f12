// The supported envelope (section 11.1): one change at a time to a valid
// task, and the exact one-line refusal each change produces. Fields with no
// known effect (section 11.3 #12) are traced instead.
#include <functional>

#include <gtest/gtest.h>

#include "../src/sim/fields.h"
#include "sim_support.h"

namespace ane {
namespace {

using test::set;

struct Case {
  const char* base;  // "pass", "relu", "sigmoid", "conv", "conv32", "bias", "pe"
  std::function<void(RegisterImage&)> change;
  std::string error;  // "" = runs
};

RegisterImage base(const std::string& name) {
  if (name == "pass") return test::pass_task(1, 1, 1);
  if (name == "relu") return test::pass_task(1, 1, 1, 1);
  if (name == "sigmoid") return test::pass_task(1, 1, 1, 2);
  if (name == "conv") return test::conv_task(1, 1, 1, 1);
  if (name == "conv32") return test::conv_task(1, 32, 1, 1);
  if (name == "bias") return test::conv_task(1, 1, 1, 1, true);
  return test::pe_task(1, 1, 1, 0);
}

std::function<void(RegisterImage&)> field(const std::string& name, uint32_t value) {
  return [=](RegisterImage& r) { set(r, name, value); };
}
std::function<void(RegisterImage&)> field(const std::string& a, uint32_t va, const std::string& b, uint32_t vb) {
  return [=](RegisterImage& r) {
    set(r, a, va);
    set(r, b, vb);
  };
}
std::function<void(RegisterImage&)> bits(uint32_t address, uint32_t or_mask) {
  return [=](RegisterImage& r) { r.set_word(address, r.word(address) | or_mask); };
}

std::string unsupported(const std::string& what) { return "unsupported: " + what + " in task 0"; }

// Runs with roomy slots; kernel slot 1 holds zero weights, or the sigmoid table.
std::string run(const RegisterImage& r, sim::Options o = {}, bool lut = false) {
  sim::Machine m(o);
  for (int k : {4, 5, 6}) m.set_slot(k, 0x4000);
  auto kernel = std::vector<uint8_t>(0x4000);
  if (lut)
    for (int i = 0; i < 64; ++i) test::put16(kernel, 2 * i, sim::sigmoid_lut()[i]);
  m.set_slot(1, kernel);
  return test::error_of(m.run_task(r, 0));
}

TEST(SimEnvelope, EveryFieldTheSimulatorReadsIsInTheDatabase) {
  const auto& f = sim::detail::fields();
  EXPECT_EQ(f.post_scale->name, "NE.PostScale.PostScale");
  EXPECT_EQ(f.src2_base->name, "TileDMASrc.Src2BaseAddr.Addr");
  EXPECT_EQ(f.lane_size[15]->name, "KernelDMASrc.CoeffBfrSize[15].MemBfrSize");
}

TEST(SimEnvelope, BaseTasksRun) {
  for (const std::string b : {"pass", "relu", "sigmoid", "conv", "conv32", "bias", "pe"})
    EXPECT_EQ(run(base(b), {}, b == "sigmoid"), "") << b;
}

TEST(SimEnvelope, EachChangeOutsideTheEnvelopeIsRefusedByName) {
  const std::vector<Case> cases = {
      // Header
      {"pass", field("Header[9].KBE1", 1), unsupported("Header[9].KBE1=1")},
      {"pass", field("Header[9].KBE3", 1), unsupported("Header[9].KBE3=1")},
      {"pass", field("Header[8].RBE0", 0), unsupported("Header[8].RBE0=0 with L2.SourceCfg.SourceType=2")},
      {"pass", field("Header[8].WBE", 0), unsupported("Header[8].WBE=0 with L2.ResultCfg.ResultType=2")},
      // formats and geometry
      {"pass", field("Common.ChCfg.InFmt", 1), unsupported("Common.ChCfg.InFmt=1")},
      {"pass", field("Common.ChCfg.OutFmt", 0), unsupported("Common.ChCfg.OutFmt=0")},
      // Square 1x1 and 3x3 kernels, stride 1 or 2 (with the zero-skipping
      // kernel form), leading padding below the kernel size (records).
      {"conv", field("Common.ConvCfg.Kw", 3), unsupported("Common.ConvCfg.Kw=3 with Common.ConvCfg.Kh=1")},
      {"conv", field("Common.ConvCfg.Kh", 3), unsupported("Common.ConvCfg.Kw=1 with Common.ConvCfg.Kh=3")},
      {"conv", field("Common.ConvCfg.Kw", 5, "Common.ConvCfg.Kh", 5),
       unsupported("a 5x5 (width x height) kernel (records show 1x1 and 3x3, and 1x9 at stride 1)")},
      {"conv", field("Common.ConvCfg.Sx", 2), unsupported("Common.ConvCfg.Sy=1 with Common.ConvCfg.Sx=2")},
      {"conv", field("Common.ConvCfg.Sy", 2), unsupported("Common.ConvCfg.Sy=2 with Common.ConvCfg.Sx=1")},
      {"conv", field("Common.ConvCfg.Sx", 3, "Common.ConvCfg.Sy", 3), unsupported("Common.ConvCfg.Sx=3")},
      {"conv", field("Common.ConvCfg.Sx", 2, "Common.ConvCfg.Sy", 2),
       unsupported("NE.KernelCfg.SparseFmt=0 with Common.ConvCfg.Sx=2")},
      {"conv", field("Common.ConvCfg.Px", 1), unsupported("Common.ConvCfg.Px=1 with Common.ConvCfg.Kw=1")},
      {"conv", field("Common.ConvCfg.Py", 1), unsupported("Common.ConvCfg.Py=1 with Common.ConvCfg.Kh=1")},
      {"conv", field("Common.OutDim.Wout", 2), unsupported("Common.OutDim.Wout=2 with Common.InDim.Win=1")},
      {"conv", field("Common.ConvCfg.Ox", 2), unsupported("Common.ConvCfg.Ox=2")},
      {"conv", field("Common.ConvCfg.Oy", 0), unsupported("Common.ConvCfg.Oy=0")},
      // Grouped convolutions: one 16-plane chunk of output channels per group.
      {"conv", field("Common.GroupConvCfg.NumGroups", 32),
       unsupported("Common.GroupConvCfg.NumGroups=32 with Common.Cout.Cout=1")},
      {"conv",
       [](RegisterImage& r) {
         set(r, "Common.GroupConvCfg.NumGroups", 2);
         set(r, "TileDMASrc.GroupStride.Stride", 64);
         set(r, "TileDMADst.GroupStride.GroupStride", 64);
       },
       unsupported("Common.GroupConvCfg.NumGroups=2 with Common.Cout.Cout=1")},
      {"conv", field("Common.GroupConvCfg.ElemMultMode", 1), unsupported("Common.GroupConvCfg.ElemMultMode=1")},
      // Transposed results only where Apple's records put them.
      // A 1x1 convolution over one row takes ChannelsInner (a matmul); two rows do not.
      {"conv",
       [](RegisterImage& r) {
         set(r, "Common.Cfg.ChannelsInner", 1);
         set(r, "Common.InDim.Hin", 2);
         set(r, "Common.OutDim.Hout", 2);
       },
       unsupported("Common.Cfg.ChannelsInner=1 with Common.Cfg.TaskType=0")},
      {"pe", field("Common.Cfg.ChannelsInner", 1), unsupported("Common.Cfg.ChannelsInner=1 with Common.Cfg.TaskType=3")},
      {"pass", field("Common.InDepth.Din", 2), unsupported("Common.InDepth.Din=2")},
      {"pass", field("Common.OutDepth.Dout", 4), unsupported("Common.OutDepth.Dout=4")},
      {"pass", field("Common.InDim.Win", 0), unsupported("Common.InDim.Win=0")},
      {"pass", field("Common.Cin.Cin", 0), unsupported("Common.Cin.Cin=0")},
      {"pass", field("Common.OutDim.Wout", 2), unsupported("Common.OutDim.Wout=2 with Common.InDim.Win=1")},
      {"pass", field("Common.OutDim.Hout", 3), unsupported("Common.OutDim.Hout=3 with Common.InDim.Hin=1")},
      {"pass", field("Common.Cout.Cout", 2), unsupported("Common.Cout.Cout=2 with Common.Cin.Cin=1")},
      {"pe", field("Common.Cout.Cout", 2), unsupported("Common.Cout.Cout=2 with Common.Cin.Cin=1")},
      // tensor DMAs (section 3 format words; L2 as source or result)
      {"pass", field("TileDMASrc.DMAConfig.En", 0), unsupported("TileDMASrc.DMAConfig.En=0 with L2.SourceCfg.SourceType=2")},
      {"pass", field("TileDMADst.DMAConfig.En", 0), unsupported("TileDMADst.DMAConfig.En=0 with L2.ResultCfg.ResultType=2")},
      {"pass", field("TileDMASrc.Fmt.Interleave", 2), unsupported("TileDMASrc.Fmt.Interleave=2")},
      {"pass", field("TileDMASrc.Fmt.CmpVec", 1), unsupported("TileDMASrc.Fmt.CmpVec=1")},
      {"pass", field("TileDMASrc.Fmt.OffsetCh", 1), unsupported("TileDMASrc.Fmt.OffsetCh=1")},
      {"pass", field("TileDMASrc.Fmt.Shift", 1), unsupported("TileDMASrc.Fmt.Shift=1")},
      {"pass", field("TileDMASrc.Fmt.Truncate", 1), unsupported("TileDMASrc.Fmt.Truncate=1")},
      {"pass", field("TileDMASrc.Fmt.MemFmt", 1), unsupported("TileDMASrc.Fmt.MemFmt=1")},
      {"pass", field("TileDMADst.Fmt.FmtMode", 0), unsupported("TileDMADst.Fmt.FmtMode=0")},
      {"pass", field("TileDMADst.Fmt.CmpVecFill", 1), unsupported("TileDMADst.Fmt.CmpVecFill=1")},
      {"pass", bits(0x13838, 1u << 2), unsupported("TileDMASrc.Fmt=0x1002035")},
      // classification (section 5)
      {"pass", field("Header[8].RBE1", 1), unsupported("Header[8].RBE1=1 with Common.Cfg.TaskType=0")},
      {"pass", field("PE.Cfg.SecSrc", 2), unsupported("PE.Cfg=0x80000 in an NE task")},
      {"pass", field("Header[8].ENE", 0), unsupported("Common.Cfg.TaskType=0 with Header[8].ENE=0")},
      {"pe", field("Header[8].ENE", 1), unsupported("Common.Cfg.TaskType=3 with Header[8].ENE=1")},
      {"pe", field("Common.Cfg.TaskType", 7), unsupported("Common.Cfg.TaskType=7 with Header[8].ENE=0")},
      // TaskType 4 only as (a -+ b) * c with b and c two rows of a second
      // source in L2, or of a tile-DMA source laid channels along W.
      {"pe", field("Common.Cfg.TaskType", 4), unsupported("L2.SourceCfg.Source2Type=2 with Common.Cfg.TaskType=4")},
      {"pe", field("Common.Cfg.TaskType", 6), unsupported("PE.Cfg.OpMode=0")},  // not 0x92010
      // SourceType 1: through tile DMA, the tensor also kept in L2 (records); no
      // record sets it on the second source.
      {"pass", field("L2.SourceCfg.SourceType", 1), ""},
      {"pe", field("L2.SourceCfg.Source2Type", 1), unsupported("L2.SourceCfg.Source2Type=1")},
      {"pass", field("L2.ResultCfg.ResultType", 1), unsupported("L2.ResultCfg.ResultType=1")},
      {"pe", field("L2.SourceCfg.Source2Type", 1), unsupported("L2.SourceCfg.Source2Type=1")},
      {"pass", field("L2.L2Cfg.InputReLU", 1), unsupported("L2.L2Cfg.InputReLU=1")},
      {"pass", bits(0x30, 1u << 10), unsupported("Common.Broadcast.OutChannelsW=1 with Common.Cfg.TaskType=0")},
      // planar engine (section 7)
      {"pe", field("Common.ChCfg.Src2InFmt", 1), unsupported("Common.ChCfg.Src2InFmt=1")},
      {"pe", field("TileDMASrc.Src2Fmt.Interleave", 1), unsupported("TileDMASrc.Src2Fmt.Interleave=1")},
      {"pe", field("PE.Cfg.ReluEn", 1), unsupported("PE.Cfg.ReluEn=1")},
      {"pe", field("PE.Cfg.SecSrc", 1), unsupported("PE.Cfg.SecSrc=1 with Common.Cfg.TaskType=3")},
      {"pe", field("PE.Cfg.SecSrc", 0), unsupported("PE.Cfg.SecSrc=0 with Common.Cfg.TaskType=3")},
      {"pe", field("PE.Cfg.PoolMode", 2), unsupported("PE.Cfg.PoolMode=2")},
      {"pe", field("PE.Cfg.Reciprocal", 1), unsupported("PE.Cfg.Reciprocal=1")},
      {"pe", field("PE.Cfg.FirstSrc", 1), unsupported("PE.Cfg.FirstSrc=1")},
      {"pe", [](RegisterImage& r) { set(r, "PE.Cfg.SecSrc", 3); set(r, "PE.Cfg.OpMode", 1); },
       unsupported("PE.Cfg.OpMode=1 with PE.Cfg.SecSrc=3")},
      {"pe", [](RegisterImage& r) { set(r, "PE.Cfg.Cond", 1); set(r, "PE.BiasScale.Scale", 0x4000); },
       unsupported("PE.Cfg.Cond=1 with PE.BiasScale.Scale=0x4000")},
      {"pe", bits(0x8800, 1u << 7), unsupported("PE.Cfg=0x80080")},
      {"pe", field("PE.Cfg.OpMode", 5), unsupported("PE.Cfg.OpMode=5")},
      {"pe", field("PE.BiasScale.Bias", 0x7c00), unsupported("PE.BiasScale.Bias=0x7c00")},
      {"pe", field("PE.PreScale.PreScale", 0xfc00), unsupported("PE.PreScale.PreScale=0xfc00")},
      {"pe", bits(0x8808, 1u), unsupported("PE.PreScale.Epsilon=1")},  // only reductions with RSqrt add it
      {"pe", field("PE.FinalScale.FinalScale", 0x40000000), unsupported("PE.FinalScale.FinalScale=0x40000000")},
      // neural engine (section 6)
      {"pass", field("NE.MACCfg.OpMode", 6), unsupported("NE.MACCfg.OpMode=6")},
      // OpMode 3: the channel maximum, read through the unicast grouping.
      {"pass", field("NE.MACCfg.OpMode", 3), unsupported("Common.GroupConvCfg.UnicastEn=0 with NE.MACCfg.OpMode=3")},
      {"pass", field("Common.GroupConvCfg.UnicastEn", 1, "Common.GroupConvCfg.UnicastCin", 2),
       unsupported("Common.GroupConvCfg.UnicastCin=2 with Common.GroupConvCfg.UnicastEn=1")},
      // OpMode 2: the product of channel groups, with ElemMultMode set (pow).
      {"pass", field("NE.MACCfg.OpMode", 2), unsupported("Common.GroupConvCfg.ElemMultMode=0")},
      {"pass", field("Common.GroupConvCfg.ElemMultMode", 1), unsupported("Common.GroupConvCfg.ElemMultMode=1")},
      {"pass", [](RegisterImage& r) { set(r, "NE.MACCfg.OpMode", 2); set(r, "Common.GroupConvCfg.ElemMultMode", 1); },
       unsupported("Common.GroupConvCfg.UnicastEn=0 with NE.MACCfg.OpMode=2")},
      {"pass", field("NE.MACCfg.OpMode", 5), unsupported("NE.MACCfg.OpMode=5")},
      {"pass", field("NE.MACCfg.KernelMode", 0), unsupported("NE.MACCfg.KernelMode=0 with NE.MACCfg.OpMode=4")},

      {"pass", field("NE.MACCfg.MatrixBiasEn", 1), unsupported("NE.MACCfg.MatrixBiasEn=1")},
      {"pass", field("NE.MACCfg.PostScaleMode", 1), unsupported("NE.MACCfg.PostScaleMode=1")},
      {"pass", field("NE.MACCfg.NonlinearMode", 3), unsupported("NE.MACCfg.NonlinearMode=3")},
      {"sigmoid", field("NE.MACCfg.UnkBit20", 0), unsupported("NE.MACCfg.UnkBit20=0 with NE.MACCfg.NonlinearMode=2")},
      {"pass", field("NE.MatrixVectorBias.MatrixVectorBias", 0x3c00),
       unsupported("NE.MatrixVectorBias.MatrixVectorBias=0x3c00")},
      {"pass", field("NE.AccBias.AccBias", 1), unsupported("NE.AccBias.AccBias=0x1 with NE.MACCfg.OpMode=4")},
      {"pass", field("NE.AccBias.AccBiasShift", 1), unsupported("NE.AccBias.AccBiasShift=1")},
      {"pass", field("NE.PostScale.PostRightShift", 1), unsupported("NE.PostScale.PostRightShift=1")},
      {"pass", field("NE.PostScale.PostScale", 0x7c00), unsupported("NE.PostScale.PostScale=0x7c00")},
      {"relu", field("NE.PostScale.PostScale", 0xffff), unsupported("NE.PostScale.PostScale=0xffff")},
      {"pass", field("Common.ConvCfg.OCGSize", 1), unsupported("Common.ConvCfg.OCGSize=1")},
      {"pass", field("NE.MACCfg.BiasMode", 1), unsupported("NE.MACCfg.BiasMode=1 with NE.MACCfg.OpMode=4")},
      {"conv", field("NE.KernelCfg.KernelFmt", 0), unsupported("NE.KernelCfg.KernelFmt=0")},
      {"conv", field("NE.KernelCfg.PalettizedEn", 1), unsupported("NE.KernelCfg.PalettizedEn=1")},
      {"conv", field("NE.KernelCfg.SparseFmt", 1), unsupported("NE.KernelCfg.SparseFmt=1 with Common.ConvCfg.Sx=1")},
      {"conv", field("NE.KernelCfg.GroupKernelReuse", 1), unsupported("NE.KernelCfg.GroupKernelReuse=1")},
      {"conv", field("Common.ConvCfg.OCGSize", 2), unsupported("Common.ConvCfg.OCGSize=2 with Common.Cout.Cout=1")},
      {"conv32", field("Common.ConvCfg.OCGSize", 0), unsupported("Common.ConvCfg.OCGSize=0 with Common.Cout.Cout=32")},
      {"conv32", field("Common.Cout.Cout", 40), unsupported("Common.ConvCfg.OCGSize=1 with Common.Cout.Cout=40")},
      {"conv32", field("Common.ConvCfg.OCGSize", 2), unsupported("Common.ConvCfg.OCGSize=2 with Common.Cout.Cout=32")},
      // A bias row per plane (records): the base's 64-byte lanes hold it.
      {"conv32", field("NE.MACCfg.BiasMode", 1), ""},
      // post stage without A3
      {"conv", field("NE.MACCfg.NonlinearMode", 2), unsupported("NE.MACCfg.NonlinearMode=2 with NE.MACCfg.OpMode=0")},
      {"bias", field("NE.PostScale.PostScale", 0x4000),
       unsupported("NE.PostScale.PostScale=0x4000 with NE.MACCfg.BiasMode=1")},
      {"relu", field("NE.PostScale.PostScale", 0xbc00),
       unsupported("NE.PostScale.PostScale=0xbc00 with NE.MACCfg.NonlinearMode=1")},
      // inside the envelope: these run
      {"relu", field("NE.PostScale.PostScale", 0x4000), ""},
      {"relu", field("NE.PostScale.PostScale", 0x8000), ""},
      {"conv", field("NE.PostScale.PostScale", 0xc000), ""},
      {"pe", field("PE.Cfg.OpMode", 1), ""},
      {"pe", field("PE.Cfg.OpMode", 2), ""},
      {"pe", field("PE.Cfg.OpMode", 3), ""},
      {"pe", field("PE.Cfg.SecSrc", 3), ""},
      {"pe", field("TileDMASrc.Src2BaseAddr.Addr", 1), ""},
      {"pe", field("PE.BiasScale.Bias", 0x3c00), ""},
      {"pe", field("PE.BiasScale.Scale", 0x4000), ""},
      {"pe", field("PE.PreScale.PreScale", 0), ""},
      {"conv", field("NE.MACCfg.KernelMode", 1), ""},
      {"pass", [](RegisterImage& r) { set(r, "NE.MACCfg.OpMode", 0); set(r, "NE.AccBias.AccBias", 0x3c00); }, ""},
      {"sigmoid", field("NE.PostScale.PostScale", 0x4000), ""},
      {"pass", field("Common.GroupConvCfg.UnicastEn", 1), ""},
      {"pass", field("NE.KernelCfg.KernelFmt", 0), ""},
      {"pass", field("Header[8].TBase", 3), ""},
      {"conv", field("NE.MACCfg.UnkBit20", 0), ""},
  };
  for (const auto& c : cases) {
    RegisterImage r = base(c.base);
    c.change(r);
    EXPECT_EQ(run(r, {}, std::string(c.base) == "sigmoid"), c.error) << c.base << " -> " << c.error;
  }
}

TEST(SimEnvelope, AssumptionsWidenItOneByOne) {
  RegisterImage bias = base("bias");
  set(bias, "NE.PostScale.PostScale", 0x4000);
  sim::Options o;
  o.assume.post_chain = true;
  EXPECT_EQ(run(bias, o), "");
}

TEST(SimEnvelope, FieldsWithoutKnownEffectAreTracedNotRefused) {
  RegisterImage r = base("conv");
  set(r, "Header[8].ENE", 3);
  set(r, "Common.Cfg.ShPref", 4);
  set(r, "TileDMADst.Fmt.ZeroPadFirst", 1);
  set(r, "NE.MACCfg.BinaryPoint", 28);
  sim::Machine m;
  for (int k : {1, 4, 5}) m.set_slot(k, 0x100);
  std::vector<std::string> traced;
  ASSERT_EQ(test::error_of(m.run_task(r, 0, 0, [&](const sim::TraceRecord& t) { traced = t.traced; })), "");
  EXPECT_EQ(traced, (std::vector<std::string>{"Header[8].ENE=3", "Common.Cfg=0x400",
                                               "TileDMADst.Fmt.ZeroPadFirst=1", "NE.MACCfg.BinaryPoint=28",
                                               "NE.MACCfg.UnkBit20=1"}));
}

}  // namespace
}  // namespace ane
