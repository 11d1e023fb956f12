#include "window.h"

#include <algorithm>

namespace ane::sim::detail {

void gather_windows(const float* x, uint32_t channels, uint32_t hin, uint32_t win, const ConvGeometry& g,
                    uint32_t hout, uint32_t wout, float* col) {
  const uint64_t hw = uint64_t{hout} * wout;
  float* row = col;
  for (uint32_t c = 0; c < channels; ++c)
    for (uint32_t ky = 0; ky < g.kh; ++ky)
      for (uint32_t kx = 0; kx < g.kw; ++kx, row += hw) {
        const float* plane = x + uint64_t{c} * hin * win;
        // Output columns whose input column ox * sx - px + kx is inside.
        const int64_t shift = int64_t{kx} - g.px;
        uint32_t ox_begin = 0, ox_end = wout;
        while (ox_begin < wout && int64_t{ox_begin} * g.sx + shift < 0) ++ox_begin;
        while (ox_end > ox_begin && int64_t{ox_end - 1} * g.sx + shift >= int64_t{win}) --ox_end;
        for (uint32_t oy = 0; oy < hout; ++oy) {
          float* out = row + uint64_t{oy} * wout;
          const int64_t iy = int64_t{oy} * g.sy + ky - g.py;
          if (iy < 0 || iy >= int64_t{hin} || ox_begin >= ox_end) {
            std::fill_n(out, wout, 0.0f);
            continue;
          }
          const float* in = plane + uint64_t(iy) * win;
          std::fill(out, out + ox_begin, 0.0f);
          if (g.sx == 1) {
            std::copy_n(in + (int64_t{ox_begin} + shift), ox_end - ox_begin, out + ox_begin);
          } else {
            for (uint32_t ox = ox_begin; ox < ox_end; ++ox) out[ox] = in[int64_t{ox} * g.sx + shift];
          }
          std::fill(out + ox_end, out + wout, 0.0f);
        }
      }
}

}  // namespace ane::sim::detail
