// Parser for the tensor stabs in HWX symbol tables (hand-written rather than
// a regex: names come from untrusted files and must not cost stack or time).
#include <charconv>

#include "ane/hwx.h"

namespace ane {

namespace {

struct Cursor {
  std::string_view s;
  bool eat(std::string_view lit) {
    if (s.substr(0, lit.size()) != lit) return false;
    s.remove_prefix(lit.size());
    return true;
  }
  template <typename T>
  bool number(T& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || p == s.data()) return false;
    s.remove_prefix(p - s.data());
    return true;
  }
};

}  // namespace

std::optional<TensorStab> parse_tensor_stab(std::string_view text) {
  // The name ends at the last ":t<digits>=ar1;" (names may contain ':').
  size_t colon = std::string_view::npos;
  for (size_t pos = text.find(":t"); pos != std::string_view::npos; pos = text.find(":t", pos + 1)) {
    Cursor c{text.substr(pos + 2)};
    uint32_t t;
    if (c.number(t) && c.eat("=ar1;")) colon = pos;
  }
  if (colon == std::string_view::npos) return std::nullopt;
  TensorStab st;
  st.name = std::string(text.substr(0, colon));
  Cursor c{text.substr(colon + 2)};
  if (!c.number(st.first_type) || !c.eat("=")) return std::nullopt;
  static constexpr char kDims[4] = {'n', 'c', 'h', 'w'};
  for (int d = 0; d < 4; ++d) {
    uint32_t type = 0;
    if (!c.eat("ar1;0;") || !c.number(st.nchw[d]) || !c.eat(";") || !c.number(type) || !c.eat("=s") ||
        !c.number(st.strides[d]) || !c.eat(std::string_view(&kDims[d], 1)) || !c.eat(":"))
      return std::nullopt;
    if (type != st.first_type + 1 + static_cast<uint32_t>(d)) return std::nullopt;
  }
  if (!c.number(st.element_type) || !c.s.empty()) return std::nullopt;
  return st;
}

}  // namespace ane
