// SHA-256 (FIPS 180-4). Used for the deterministic kernel symbol names that
// hwx-build writes (Apple's own hash is unknown).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace ane {

std::array<uint8_t, 32> sha256(std::span<const uint8_t> data);
// Lowercase or uppercase hex of the digest.
std::string sha256_hex(std::span<const uint8_t> data, bool uppercase = false);

}  // namespace ane
