// Seeds as people read and type them: reports print them, --replay reads them back.
#pragma once

#include <cstdint>
#include <string>

namespace relab {

// "0x1f2e3d4c5b6a7988" (always 16 hex digits).
std::string seed_text(uint64_t seed);
// A seed as printed (0x<hex>) or in decimal. Throws std::invalid_argument naming the text.
uint64_t parse_seed(const std::string& text);

}  // namespace relab
