// Invariants stated in the code, checked in every build (NDEBUG or not): a violation is relab's own
// bug, so it throws std::logic_error naming the condition and where, and the run ends with exit 2.
#pragma once

#include <stdexcept>
#include <string>

#define RELAB_CHECK(cond, what)                                                                                 \
    do {                                                                                                        \
        if (!(cond))                                                                                            \
            throw std::logic_error(std::string("relab invariant broken at ") + __FILE__ + ":" +                 \
                                   std::to_string(__LINE__) + ": " #cond ": " + (what));                        \
    } while (0)
