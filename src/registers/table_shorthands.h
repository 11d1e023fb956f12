// Short names the rows of the register tables use (h13_table.cpp and
// packed_rows.inc), so that a row reads like the published tables it copies.
#pragma once

#include "ane/registers.h"

namespace ane::table_shorthands {

inline constexpr const char* kUnnamed = "";

inline constexpr Confidence Pub = Confidence::Published;
inline constexpr Confidence Claimed = Confidence::Claimed;
inline constexpr Confidence Inferred = Confidence::Inferred;
inline constexpr Confidence Unknown = Confidence::Unknown;

}  // namespace ane::table_shorthands
