// Invariants stated in the code, checked in every build (NDEBUG or not): a violation is relab's own
// bug, so it throws std::logic_error naming the condition and where, and the run ends with exit 2.
#pragma once

#include <stdexcept>
#include <string>

namespace relab::check_detail {

// Out of line and cold: a check inlined on the simulator's path costs its comparison and a jump,
// and none of the message's building.
[[noreturn, gnu::cold, gnu::noinline]] inline void broken(const char* file, int line, const char* cond,
                                                          const std::string& what) {
    throw std::logic_error(std::string("relab invariant broken at ") + file + ":" + std::to_string(line) + ": " +
                           cond + ": " + what);
}

}  // namespace relab::check_detail

#define RELAB_CHECK(cond, what)                                                     \
    do {                                                                            \
        if (!(cond)) [[unlikely]]                                                   \
            ::relab::check_detail::broken(__FILE__, __LINE__, #cond, (what));       \
    } while (0)
