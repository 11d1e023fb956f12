// cpu_has (cpu_features.h).
#include "cpu_features.h"

#if defined(__x86_64__) && defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
// A C header: its inline functions return _Bool, which g++ accepts in C++
// and clang++ does not.
#define _Bool bool
#include <sys/platform/x86.h>
#undef _Bool
#define ANE_GLIBC_CPU_FEATURES 1
#elif defined(__GNUC__) || defined(__clang__)
#include <cpuid.h>
#endif
#endif

namespace ane::detail {

#if defined(ANE_GLIBC_CPU_FEATURES)
bool cpu_has(CpuFeature f) {
  switch (f) {
    case CpuFeature::Avx: return CPU_FEATURE_ACTIVE(AVX);
    case CpuFeature::Avx2: return CPU_FEATURE_ACTIVE(AVX2);
    case CpuFeature::F16c: return CPU_FEATURE_ACTIVE(F16C);
    case CpuFeature::Avx512f: return CPU_FEATURE_ACTIVE(AVX512F);
  }
  return false;
}
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
bool cpu_has(CpuFeature f) {
  switch (f) {
    case CpuFeature::Avx: return __builtin_cpu_supports("avx");
    case CpuFeature::Avx2: return __builtin_cpu_supports("avx2");
    case CpuFeature::F16c: {
      // CPUID leaf 1, ECX bit 29 (clang 14 has no "f16c" for __builtin_cpu_supports).
      unsigned a = 0, b = 0, c = 0, d = 0;
      return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
    }
    case CpuFeature::Avx512f: return __builtin_cpu_supports("avx512f");
  }
  return false;
}
#else
bool cpu_has(CpuFeature) { return false; }
#endif

}  // namespace ane::detail
