// Strict .npy reading (versions 1-3, '<f2' / '<f4', C order) and '<f2'
// writing, byte-compatible with what numpy.save produces.
#include "ane/npy.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "../core/huge_pages.h"
#include "../core/output_file.h"
#include "ane/fp16.h"

namespace ane::npy {

namespace {

constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr uint64_t kAlign = 16;  // every NumPy version aligns the data to 16 (64 since 1.14)

// A cursor over the header text; errors carry file offsets.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, uint64_t base) : s_(text), base_(base) {}

  Error fail(const std::string& what) const { return make_error(base_ + pos_, "header dict: " + what); }
  void ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  bool eat(char c) {
    ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  char peek() {
    ws();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  uint64_t pos() const { return pos_; }

  Expected<std::string> string() {
    ws();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return fail("expected a quoted string");
    const char q = s_[pos_++];
    const size_t end = s_.find(q, pos_);
    if (end == std::string_view::npos) return fail("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    if (out.find('\\') != std::string::npos) return fail("escapes in strings are not supported");
    pos_ = end + 1;
    return out;
  }
  Expected<bool> boolean() {
    ws();
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return fail("expected True or False");
  }
  Expected<uint64_t> integer() {
    ws();
    const size_t start = pos_;
    uint64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      if (v > (UINT64_MAX - 9) / 10) return fail("shape dimension too large");
      v = v * 10 + static_cast<uint64_t>(s_[pos_++] - '0');
    }
    if (pos_ == start) return fail("expected a non-negative integer");
    return v;
  }
  // (), (n,), (n, m), (n, m,) -- a Python tuple of integers.
  Expected<std::vector<uint64_t>> tuple() {
    if (!eat('(')) return fail("shape must be a tuple");
    std::vector<uint64_t> dims;
    if (eat(')')) return dims;
    while (true) {
      auto d = integer();
      if (!d) return d.error();
      dims.push_back(*d);
      const bool comma = eat(',');
      if (eat(')')) {
        if (dims.size() == 1 && !comma) return fail("shape (n) is not a tuple: write (n,)");
        return dims;
      }
      if (!comma) return fail("expected ',' or ')' in the shape");
    }
  }

 private:
  std::string_view s_;
  uint64_t base_;
  size_t pos_ = 0;
};

}  // namespace

uint64_t Array::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

std::vector<uint16_t> Array::to_fp16() const {
  const uint64_t n = elements();
  std::vector<uint16_t> out;
  detail::reserve_huge(out, n);
  out.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (dtype == Dtype::F16) {
      out[i] = static_cast<uint16_t>(data[2 * i] | (data[2 * i + 1] << 8));
    } else {
      const uint32_t bits = uint32_t{data[4 * i]} | (uint32_t{data[4 * i + 1]} << 8) |
                            (uint32_t{data[4 * i + 2]} << 16) | (uint32_t{data[4 * i + 3]} << 24);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      out[i] = float_to_fp16(f);
    }
  }
  return out;
}

namespace {

struct Header {
  Dtype dtype = Dtype::F16;
  std::vector<uint64_t> shape;
  uint64_t data_start = 0;
};

Expected<Header> parse_header(std::span<const uint8_t> bytes) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return make_error(0, "not a .npy file (no \\x93NUMPY magic)");
  const uint8_t major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return make_error(6, fmt::format(".npy version {}.{} is not supported (1.0, 2.0 or 3.0)", major, minor));
  const uint64_t len_size = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_size) return make_error(8, "file ends inside the header length");
  uint64_t header_len = bytes[8] | (uint64_t{bytes[9]} << 8);
  if (len_size == 4) header_len |= (uint64_t{bytes[10]} << 16) | (uint64_t{bytes[11]} << 24);
  const uint64_t start = 8 + len_size, data_start = start + header_len;
  if (header_len > bytes.size() - start)
    return make_error(8, fmt::format("header length {:#x} runs past the end of the file ({:#x} bytes)", header_len,
                                     bytes.size()));
  if (data_start % kAlign != 0)
    return make_error(8, fmt::format("header ends at {:#x}, not at a multiple of {} (.npy pads it)", data_start,
                                     kAlign));
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + start), header_len);
  if (text.empty() || text.back() != '\n') return make_error(data_start - 1, "header does not end with '\\n'");
  for (size_t i = 0; i < text.size(); ++i)
    if (static_cast<uint8_t>(text[i]) >= 0x80 || (text[i] < 0x20 && text[i] != '\n' && text[i] != '\t'))
      return make_error(start + i, "header holds a non-ASCII or control character");

  HeaderParser p(text, start);
  if (!p.eat('{')) return p.fail("expected '{'");
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<uint64_t>> shape;
  while (p.peek() != '}') {
    const uint64_t key_at = start + p.pos();
    auto key = p.string();
    if (!key) return key.error();
    if (!p.eat(':')) return p.fail(fmt::format("expected ':' after '{}'", *key));
    if (*key == "descr" && !descr) {
      auto v = p.string();
      if (!v) return v.error();
      descr = *v;
    } else if (*key == "fortran_order" && !fortran) {
      auto v = p.boolean();
      if (!v) return v.error();
      fortran = *v;
    } else if (*key == "shape" && !shape) {
      auto v = p.tuple();
      if (!v) return v.error();
      shape = *v;
    } else {
      return make_error(key_at, fmt::format("header dict: {} key '{}'",
                                            (*key == "descr" || *key == "fortran_order" || *key == "shape")
                                                ? "repeated"
                                                : "unknown",
                                            *key));
    }
    if (!p.eat(',')) break;
  }
  if (!p.eat('}')) return p.fail("expected ',' or '}'");
  for (uint64_t i = p.pos(); i + 1 < text.size(); ++i)
    if (text[i] != ' ') return make_error(start + i, "header dict: only spaces may follow the dict");
  if (!descr || !fortran || !shape)
    return make_error(start, fmt::format("header dict lacks '{}'", !descr ? "descr" : !fortran ? "fortran_order" : "shape"));

  Header a;
  uint64_t item;
  if (*descr == "<f2") {
    a.dtype = Dtype::F16;
    item = 2;
  } else if (*descr == "<f4") {
    a.dtype = Dtype::F32;
    item = 4;
  } else {
    return make_error(start, fmt::format("descr '{}' is not supported (little-endian '<f2' float16 or '<f4' float32)",
                                         *descr));
  }
  if (*fortran) return make_error(start, "fortran_order True is not supported (C order only)");
  uint64_t n = 1;
  for (uint64_t d : *shape)
    if (__builtin_mul_overflow(n, d, &n)) return make_error(start, "shape has too many elements");
  const uint64_t have = bytes.size() - data_start;
  if (n > have / item || n * item != have)
    return make_error(data_start, fmt::format("data is {:#x} bytes; {} elements of {} need {:#x}", have, n, *descr,
                                              n > UINT64_MAX / item ? UINT64_MAX : n * item));
  a.shape = std::move(*shape);
  a.data_start = data_start;
  return a;
}

}  // namespace

Expected<Array> parse(std::span<const uint8_t> bytes) {
  auto h = parse_header(bytes);
  if (!h) return h.error();
  Array a;
  a.dtype = h->dtype;
  a.shape = std::move(h->shape);
  a.data.assign(bytes.begin() + static_cast<ptrdiff_t>(h->data_start), bytes.end());
  return a;
}

Expected<Array> load(const std::string& path) {
  auto bytes = read_file(path);
  if (!bytes) return bytes.error();
  return parse(*bytes);
}

uint64_t Mapped::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

Expected<Mapped> map(const std::string& path) {
  auto file = map_file(path);
  if (!file) return file.error();
  Mapped m;
  m.file_ = std::move(*file);
  auto h = parse_header(m.file_.span());
  if (!h) return h.error();
  m.dtype = h->dtype;
  m.shape = std::move(h->shape);
  m.data = m.file_.span().subspan(h->data_start);
  m.data_offset_ = h->data_start;
  return m;
}

// The .npy header of a '<f2' array: magic, version, length, dict, padding.
Bytes f16_header(std::span<const uint64_t> shape) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += fmt::format("{}{}", i ? ", " : "", shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header = fmt::format("{{'descr': '<f2', 'fortran_order': False, 'shape': ({}), }}", dims);
  uint64_t prelude = 10;
  if (prelude + header.size() + 1 > 65535) prelude = 12;
  const uint64_t total = (prelude + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prelude - header.size() - 1, ' ');
  header += '\n';
  Bytes out(kMagic, kMagic + sizeof kMagic);
  out.push_back(prelude == 10 ? 1 : 2);
  out.push_back(0);
  const uint64_t hl = header.size();
  out.push_back(static_cast<uint8_t>(hl));
  out.push_back(static_cast<uint8_t>(hl >> 8));
  if (prelude == 12) {
    out.push_back(static_cast<uint8_t>(hl >> 16));
    out.push_back(static_cast<uint8_t>(hl >> 24));
  }
  out.insert(out.end(), header.begin(), header.end());
  return out;
}

namespace {

// The values as little-endian bytes.
void put_f16(uint8_t* dst, std::span<const uint16_t> values) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, values.data(), values.size_bytes());
  } else {
    for (size_t i = 0; i < values.size(); ++i) {
      dst[2 * i] = static_cast<uint8_t>(values[i]);
      dst[2 * i + 1] = static_cast<uint8_t>(values[i] >> 8);
    }
  }
}

}  // namespace

Bytes encode_f16(std::span<const uint16_t> values, std::span<const uint64_t> shape) {
  Bytes out = f16_header(shape);
  const size_t head = out.size();
  detail::reserve_huge(out, head + values.size_bytes());
  out.resize(head + values.size_bytes());
  put_f16(out.data() + head, values);
  return out;
}

Status save_f16(const std::string& path, std::span<const uint16_t> values, std::span<const uint64_t> shape) {
  if constexpr (std::endian::native != std::endian::little) return write_file(path, encode_f16(values, shape));
  // The header, then the values straight from memory: no copy of the data.
  auto f = detail::OutputFile::open(path);
  if (!f) return f.error();
  if (Status st = f->write(f16_header(shape)); !st) return st;
  if (Status st = f->write({reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes()}); !st) return st;
  return f->finish();
}

}  // namespace ane::npy
