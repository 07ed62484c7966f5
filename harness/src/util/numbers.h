// Number formatting shared by the runners (their timeline lines) and the reporters, and a sum that
// cannot overflow.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace relab {

// "10,000", "-1,234"
inline std::string with_thousands(int64_t n) {
    // The magnitude as unsigned: -n overflows for the most negative n.
    const uint64_t magnitude = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
    const std::string digits = std::to_string(magnitude);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (n < 0 ? "-" : "") + out;
}

// a + b, held at int's end instead of overflowing: counts summed over trials read back from a
// report (a hand-edited one may say 2147483647) must not wrap to a negative total.
inline int add_clamped(int a, int b) {
    int sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? std::numeric_limits<int>::max() : std::numeric_limits<int>::min();
    return sum;
}

}  // namespace relab
