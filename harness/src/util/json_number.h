// A JSON number read as a C++ arithmetic type only when the type holds it. nlohmann's get<T>()
// casts: a double outside T's range (1e300 as an int64_t, -1.5 as a uint64_t) is undefined
// behaviour, and an integer outside it wraps. Readers of files use this instead.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace relab {

// `v` as T: a floating T takes any number; an integral T an integer in its range, or a finite
// double whose integer part is in its range (truncated, as get<T>() does). nullopt otherwise, and
// for anything that is not a number.
template <class T>
std::optional<T> json_number_as(const nlohmann::json& v) {
    static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
    if (!v.is_number()) return std::nullopt;
    if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(v.get<double>());
    } else {
        using L = std::numeric_limits<T>;
        if (v.is_number_unsigned()) {
            const uint64_t u = v.get<uint64_t>();
            if (u > static_cast<uint64_t>(L::max())) return std::nullopt;
            return static_cast<T>(u);
        }
        if (v.is_number_integer()) {
            const int64_t i = v.get<int64_t>();
            if constexpr (std::is_signed_v<T>) {
                if (i < static_cast<int64_t>(L::min()) || i > static_cast<int64_t>(L::max())) return std::nullopt;
            } else {
                if (i < 0 || static_cast<uint64_t>(i) > static_cast<uint64_t>(L::max())) return std::nullopt;
            }
            return static_cast<T>(i);
        }
        const double d = std::trunc(v.get<double>());
        // T's range as doubles: its minimum (0 or -2^digits) exactly, and 2^digits just past its maximum.
        if (!std::isfinite(d) || d < static_cast<double>(L::min()) || d >= std::ldexp(1.0, L::digits))
            return std::nullopt;
        return static_cast<T>(d);
    }
}

}  // namespace relab
