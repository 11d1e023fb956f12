#include "mil_surface.h"

namespace ane {

Expected<Surface> mil_surface(const mil::Type& t) {
  const auto& shape = t.shape;
  if (shape.empty()) return make_error(fmt::format("{} is a scalar: a tensor is needed", mil::type_text(t)));
  const size_t extra = shape.size() > 4 ? shape.size() - 4 : 0;
  for (size_t i = 0; i < extra; ++i)
    if (shape[i] != 1)
      return make_error(fmt::format("{}: axis {} is {}: above rank 4 the leading axes must be 1", mil::type_text(t), i,
                                    shape[i]));
  uint32_t dims[4] = {1, 1, 1, 1};
  const size_t kept = shape.size() - extra;
  for (size_t i = 0; i < kept; ++i) {
    const int64_t d = shape[extra + i];
    if (d < 1 || d > 0x7fffffff)
      return make_error(fmt::format("{}: dimension {} is out of range", mil::type_text(t), d));
    dims[4 - kept + i] = static_cast<uint32_t>(d);
  }
  return Surface{dims[0], dims[1], dims[2], dims[3]};
}

}  // namespace ane
