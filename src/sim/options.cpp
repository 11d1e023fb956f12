// The numerics options (section 9) and assumptions (section 11.2) by name:
// one table, used by apply_option, describe_options and the CLI help.
#include <algorithm>
#include <cctype>
#include <string_view>

#include <fmt/format.h>

#include "ane/sim.h"
#include "numerics.h"

namespace ane::sim {

namespace {

struct Choice {
  const char* value;
  void (*apply)(Numerics&);
};

struct Setting {
  const char* name;
  std::vector<Choice> choices;  // first = default
  std::string (*current)(const Numerics&);
};

const std::vector<Setting>& settings() {
  using N = Numerics;
  static const std::vector<Setting> table = {
      // fp32 on H13 - H15, q15.16 on H16 - H18 unless set (Numerics::Accumulator).
      {"acc",
       {{"fp32", [](N& n) { n.accumulator = N::Accumulator::Fp32; }},
        {"fp64", [](N& n) { n.accumulator = N::Accumulator::Fp64; }},
        {"fp32-ordered", [](N& n) { n.accumulator = N::Accumulator::Fp32Ordered; }},
        {"q15.16", [](N& n) { n.accumulator = N::Accumulator::FixedQ16; }}},
       [](const N& n) {
         switch (n.accumulator) {
           case N::Accumulator::Fp64: return std::string("fp64");
           case N::Accumulator::Fp32Ordered: return std::string("fp32-ordered");
           case N::Accumulator::FixedQ16: return std::string("q15.16");
           default: return std::string("fp32");
         }
       }},
      {"products",
       {{"exact", [](N& n) { n.products = N::Products::Exact; }},
        {"fp16", [](N& n) { n.products = N::Products::Fp16; }}},
       [](const N& n) { return std::string(n.products == N::Products::Exact ? "exact" : "fp16"); }},
      {"bias",
       {{"in-acc", [](N& n) { n.bias = N::BiasPoint::InAccumulator; }},
        {"after-round", [](N& n) { n.bias = N::BiasPoint::AfterRound; }}},
       [](const N& n) { return std::string(n.bias == N::BiasPoint::InAccumulator ? "in-acc" : "after-round"); }},
      {"overflow",
       {{"inf", [](N& n) { n.overflow = N::Overflow::Inf; }},
        {"saturate", [](N& n) { n.overflow = N::Overflow::Saturate; }}},
       [](const N& n) { return std::string(n.overflow == N::Overflow::Inf ? "inf" : "saturate"); }},
      {"subnormal",
       {{"keep", [](N& n) { n.subnormals = N::Subnormals::Keep; }},
        {"ftz", [](N& n) { n.subnormals = N::Subnormals::FlushToZero; }}},
       [](const N& n) { return std::string(n.subnormals == N::Subnormals::Keep ? "keep" : "ftz"); }},
      {"lut",
       {{"linear", [](N& n) { n.lut = N::Lut::Linear; }}, {"ideal", [](N& n) { n.lut = N::Lut::Ideal; }}},
       [](const N& n) { return std::string(n.lut == N::Lut::Linear ? "linear" : "ideal"); }},
      // rne on H13 - H15, half-away on H16 - H18 unless set (Numerics::Round).
      {"round",
       {{"rne", [](N& n) { n.round = N::Round::NearestEven; }},
        {"half-away", [](N& n) { n.round = N::Round::HalfAway; }}},
       [](const N& n) { return std::string(n.round == N::Round::HalfAway ? "half-away" : "rne"); }},
      // Single-valued: section 9 names no alternative the simulator could model.
      {"nan", {{"propagate", [](N&) {}}}, [](const N&) { return std::string("propagate"); }},
  };
  return table;
}

struct AssumptionName {
  const char* id;
  const char* name;
  bool Assumptions::*flag;
};

constexpr AssumptionName kAssumptions[] = {
    {"A3", "post-chain", &Assumptions::post_chain},
};

// Former assumptions the evidence settled (docs/simulator.md): still accepted,
// so that existing command lines keep working, but they change nothing.
constexpr const char* kRetired[][2] = {{"A1", "pe-minmax"}, {"A2", "ocg-layout"}, {"A4", "lut-any"}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Status apply_option(Options& opts, const std::string& setting) {
  const std::string s = lower(setting);
  if (s == "all" || s == "all-assumptions") {
    for (const auto& a : kAssumptions) opts.assume.*(a.flag) = true;
    return Ok{};
  }
  if (s == "none" || s == "strict") {
    for (const auto& a : kAssumptions) opts.assume.*(a.flag) = false;
    return Ok{};
  }
  for (const auto& a : kAssumptions) {
    if (s == lower(a.id) || s == a.name) {
      opts.assume.*(a.flag) = true;
      return Ok{};
    }
  }
  for (const auto& r : kRetired)
    if (s == lower(r[0]) || s == r[1]) return Ok{};
  const size_t eq = s.find('=');
  if (eq != std::string::npos) {
    std::string name = s.substr(0, eq);
    if (name == "subnormals") name = "subnormal";
    if (name == "accumulator") name = "acc";
    const std::string value = s.substr(eq + 1);
    for (const Setting& st : settings()) {
      if (name != st.name) continue;
      std::vector<std::string> allowed;
      for (const Choice& c : st.choices) {
        if (value == c.value) {
          c.apply(opts.numerics);
          return Ok{};
        }
        allowed.push_back(c.value);
      }
      return make_error(fmt::format("unknown value '{}' for option {} (choose {})", setting.substr(eq + 1), st.name,
                                    fmt::join(allowed, ", ")));
    }
  }
  std::vector<std::string> names;
  for (const Setting& st : settings()) names.push_back(std::string(st.name) + "=");
  for (const auto& a : kAssumptions) names.push_back(fmt::format("{} ({})", a.id, a.name));
  return make_error(fmt::format("unknown option '{}' (known: {}, all-assumptions, strict)", setting,
                                fmt::join(names, ", ")));
}

std::vector<std::string> describe_options(const Options& opts) {
  std::vector<std::string> out;
  for (const Setting& st : settings()) out.push_back(fmt::format("{}={}", st.name, st.current(opts.numerics)));
  for (const auto& a : kAssumptions)
    if (opts.assume.*(a.flag)) out.push_back(fmt::format("{} {}", a.id, a.name));
  return out;
}

}  // namespace ane::sim

namespace ane::sim::detail {

std::string setting_note(const Numerics& n, std::string_view name) {
  for (const auto& st : settings())
    if (name == st.name) return fmt::format("{}={}", st.name, st.current(n));
  return std::string(name);
}

}  // namespace ane::sim::detail

namespace ane::sim {

Options Options::for_generation(Generation g) const {
  Options o = *this;
  o.generation = g;
  const bool m4_on = g == Generation::H16 || g == Generation::H17 || g == Generation::H18;
  if (o.numerics.accumulator == Numerics::Accumulator::ByGeneration)
    o.numerics.accumulator = m4_on ? Numerics::Accumulator::FixedQ16 : Numerics::Accumulator::Fp32;
  if (o.numerics.round == Numerics::Round::ByGeneration)
    o.numerics.round = m4_on ? Numerics::Round::HalfAway : Numerics::Round::NearestEven;
  return o;
}

}  // namespace ane::sim
