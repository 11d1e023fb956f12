// The C header eiln's anect writes for an anec image: one or more
// `struct ane_model NAME = { .name = "...", .anec = { .size = 0x..., ... },
// .nchw[4] = { N, C, H, W, plane, row }, ... };` initializers.
#pragma once

#include <string>
#include <string_view>

#include "ane/anec.h"

namespace ane {

// The model named `entry` (or, when empty, the one that matches the
// program's file name, or the only one). `where` prefixes messages.
Expected<AnecDescriptor> anec_from_c_header(std::string_view text, const std::string& entry,
                                            const std::string& program_path, const std::string& where);

}  // namespace ane
