// Number formatting shared by the runners (their timeline lines) and the reporters.
#pragma once

#include <cstdint>
#include <string>

namespace relab {

// "10,000", "-1,234"
inline std::string with_thousands(int64_t n) {
    const std::string digits = std::to_string(n < 0 ? -n : n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (n < 0 ? "-" : "") + out;
}

}  // namespace relab
