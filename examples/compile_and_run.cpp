// compile-and-run: a libane client that compiles a network plist in memory,
// runs it on the simulator with every input set to a ramp, and prints the
// first values of each output. No files are written.
//
//   usage: compile-and-run NET.plist
//   exit status: 0 success, 1 a plist, compile or simulation error, 2 usage error
#include <cstdio>
#include <string>

#include <ane/compiler.h>
#include <ane/dump.h>
#include <ane/fp16.h>
#include <ane/sim.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: compile-and-run NET.plist\n");
    return 2;
  }
  auto fail = [](const ane::Error& e) {
    std::fprintf(stderr, "compile-and-run: %s\n", e.str().c_str());
    return 1;
  };
  auto net = ane::load_network(argv[1]);
  if (!net) return fail(net.error());
  auto compiled = ane::compile_network(*net);
  if (!compiled) return fail(compiled.error());
  auto program = ane::parse_program(compiled->bytes, "in-memory.hwx");
  if (!program) return fail(program.error());
  auto sim = ane::sim::Simulator::create(*program);
  if (!sim) return fail(sim.error());

  for (const auto& in : sim->inputs()) {
    const auto shape = in.shape();
    ane::sim::Tensor t;
    for (int k = 0; k < 4; ++k) t.nchw[k] = static_cast<uint32_t>(shape->nchw[k]);
    for (size_t i = 0; i < t.elements(); ++i) t.data.push_back(ane::float_to_fp16(0.125f * (i % 16) - 1.0f));
    if (auto s = sim->set_input(in.name, t); !s) return fail(s.error());
  }
  if (auto s = sim->run(); !s) return fail(s.error());
  std::printf("%s: %zu tasks, %zu bytes of .hwx\n", argv[1], compiled->tasks.size(), compiled->bytes.size());
  for (const auto& out : sim->outputs()) {
    auto t = sim->read_buffer(out.name);
    if (!t) return fail(t.error());
    std::printf("%s [%u,%u,%u,%u]:", out.name.c_str(), t->nchw[0], t->nchw[1], t->nchw[2], t->nchw[3]);
    for (size_t i = 0; i < t->data.size() && i < 8; ++i) std::printf(" %g", ane::fp16_to_float(t->data[i]));
    std::printf("%s\n", t->data.size() > 8 ? " ..." : "");
  }
  return 0;
}
