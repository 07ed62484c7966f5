#include "ports/seed_text.h"

#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

namespace relab {

std::string seed_text(uint64_t seed) { return fmt::format("{:#018x}", seed); }

uint64_t parse_seed(const std::string& text) {
    const auto bad = [&] { return std::invalid_argument("not a seed: '" + text + "' (expected 0x<hex> or a decimal number)"); };
    std::string digits = text;
    int base = 10;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        digits = digits.substr(2);
        base = 16;
    }
    if (digits.empty() || digits.size() > (base == 16 ? 16u : 20u)) throw bad();
    for (char c : digits) {
        const bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0 : (c >= '0' && c <= '9');
        if (!ok) throw bad();
    }
    try {
        return std::stoull(digits, nullptr, base);
    } catch (const std::out_of_range&) {
        throw bad();
    }
}

}  // namespace relab
