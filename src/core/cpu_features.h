// Instruction-set checks for the vector paths, without a CPUID of their own.
#pragma once

namespace ane::detail {

enum class CpuFeature { Avx, Avx2, F16c, Avx512f };

// Whether the CPU has `f` and the OS keeps its registers. With glibc 2.33 or
// later this reads the features the C library found at start-up: each CPUID
// traps to the hypervisor on a virtual machine (about 4 us here), and
// libgcc's own detection (__builtin_cpu_supports) adds a few dozen of them to
// every process start. Elsewhere it asks the compiler's builtins.
bool cpu_has(CpuFeature f);

}  // namespace ane::detail
