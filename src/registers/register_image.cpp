// RegisterImage: a task's header words plus the hardware registers it
// writes, stored densely by its generation's RegisterDatabase::register_index.

#include <algorithm>

#include <fmt/format.h>

#include "ane/registers.h"

namespace ane {

namespace {

// Header fields live at pseudo address 4 * word; nullptr when out of range.
uint32_t* header_word(std::vector<uint32_t>& header, const FieldInfo& f) {
  const uint32_t i = f.address / 4;
  return (f.address % 4 == 0 && i < header.size()) ? &header[i] : nullptr;
}

const uint32_t* header_word(const std::vector<uint32_t>& header, const FieldInfo& f) {
  const uint32_t i = f.address / 4;
  return (f.address % 4 == 0 && i < header.size()) ? &header[i] : nullptr;
}

Error unknown_field(std::string_view name) {
  return make_error(fmt::format("unknown register field '{}'", name));
}

}  // namespace

RegisterImage::RegisterImage() : RegisterImage(RegisterDatabase::h13()) {}

RegisterImage::RegisterImage(const RegisterDatabase& db)
    : header(db.header_words(), 0),
      db_(&db),
      values_(db.register_count(), 0),
      written_(db.register_count(), 0) {}

void RegisterImage::set_word(uint32_t address, uint32_t value) {
  const int i = db_->register_index(address);
  if (i < 0) {
    unknown_[address] = value;
    return;
  }
  values_[i] = value;
  written_[i] = 1;
}

uint32_t RegisterImage::word(uint32_t address) const {
  const int i = db_->register_index(address);
  if (i >= 0) return values_[i];
  auto it = unknown_.find(address);
  return it == unknown_.end() ? 0 : it->second;
}

bool RegisterImage::written(uint32_t address) const {
  const int i = db_->register_index(address);
  return i >= 0 ? written_[i] != 0 : unknown_.contains(address);
}

std::vector<std::pair<uint32_t, uint32_t>> RegisterImage::written_words() const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (size_t i = 0; i < values_.size(); ++i)
    if (written_[i]) out.emplace_back(db_->register_address(static_cast<int>(i)), values_[i]);
  out.insert(out.end(), unknown_.begin(), unknown_.end());
  std::sort(out.begin(), out.end());
  return out;
}

uint32_t RegisterImage::get(const FieldInfo& f) const {
  if (f.block == Block::Header) {
    const uint32_t* w = header_word(header, f);
    return w ? f.extract(*w) : 0;
  }
  return f.extract(word(f.address));
}

void RegisterImage::set(const FieldInfo& f, uint32_t value) {
  if (f.block == Block::Header) {
    if (uint32_t* w = header_word(header, f)) *w = f.insert(*w, value);
    return;
  }
  set_word(f.address, f.insert(word(f.address), value));
}

bool RegisterImage::field_written(const FieldInfo& f) const {
  // Header words are always present (the extended one only when it is there).
  if (f.block == Block::Header) return header_word(header, f) != nullptr;
  return written(f.address);
}

Expected<uint32_t> RegisterImage::get(std::string_view name) const {
  const FieldInfo* f = db_->find(name);
  if (!f) return unknown_field(name);
  return get(*f);
}

std::optional<uint32_t> RegisterImage::written_value(std::string_view name) const {
  const FieldInfo* f = db_->find(name);
  if (!f || !field_written(*f)) return std::nullopt;
  return get(*f);
}

Status RegisterImage::set(std::string_view name, uint32_t value) {
  const FieldInfo* f = db_->find(name);
  if (!f) return unknown_field(name);
  if (f->width < 32 && (value >> f->width) != 0)
    return make_error(fmt::format("value {:#x} does not fit the {}-bit field '{}'", value,
                                  f->width, name));
  set(*f, value);
  return Ok{};
}

}  // namespace ane
