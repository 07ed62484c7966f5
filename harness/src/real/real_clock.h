#pragma once

#include <chrono>
#include <thread>

#include "ports/ports.h"

namespace relab {

// CLOCK_MONOTONIC is one clock for every process on the machine, so records of different role
// processes can be merged by time.
class RealClock : public Clock {
public:
    Nanos now() override {
        return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now().time_since_epoch());
    }
    void sleep_for(Nanos d) override {
        if (d.count() > 0) std::this_thread::sleep_for(d);
    }
};

}  // namespace relab
