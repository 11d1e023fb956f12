// Slicing an HWX file's kernel data by its kernel symbols.
#include <algorithm>

#include "ane/dump.h"

namespace ane {

std::vector<KernelBlob> kernel_blobs(const HwxFile& file) {
  std::vector<KernelBlob> out;
  const unsigned ordinal = file.section_ordinal("__TEXT", "__const");
  const macho::Section64* sec = file.find_section("__TEXT", "__const");
  if (!ordinal || !sec) return out;
  const auto data = file.section_data(*sec);
  for (const auto& sym : file.symbols) {
    if (sym.nlist.type != (macho::N_SECT | macho::N_EXT) || sym.nlist.sect != ordinal) continue;
    if (sym.nlist.value < sec->addr || sym.nlist.value >= sec->addr + sec->size) continue;
    out.push_back({sym.name, sym.nlist.value, sym.nlist.value - sec->addr, {}});
  }
  std::sort(out.begin(), out.end(), [](const KernelBlob& a, const KernelBlob& b) { return a.address < b.address; });
  // Each symbol's data runs to the next symbol or the end of the section.
  for (size_t i = 0; i < out.size(); ++i) {
    const uint64_t end = i + 1 < out.size() ? out[i + 1].const_offset : sec->size;
    const uint64_t begin = std::min<uint64_t>(out[i].const_offset, data.size());
    const uint64_t stop = std::min<uint64_t>(end, data.size());
    if (stop > begin) out[i].data.assign(data.begin() + begin, data.begin() + stop);
  }
  return out;
}

}  // namespace ane
