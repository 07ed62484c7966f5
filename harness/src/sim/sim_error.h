// A simulated server's error that has no Redis or SQL reply of its own (a barrier timeout...).
#pragma once

#include <stdexcept>

namespace relab::sim {

class SimError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace relab::sim
