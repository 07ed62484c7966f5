// One direction of a link proxy's connection (process/link_proxy.h): the bytes one side sent that
// the other has not received yet, in chunks as they were read. Its invariant, checked where bytes
// leave (next_bytes): they leave in the order they came, each byte once.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace relab {

using ProxyClock = std::chrono::steady_clock;

// Bytes read from one side, waiting for their time (or a heal) to go to the other.
struct ProxyChunk {
    ProxyClock::time_point due;
    bool held = false;  // taken by a blackhole: goes nowhere until the link is healed
    std::string bytes;
    size_t sent = 0;
    int64_t offset = 0;  // where its first byte stands in everything `from` sent
};

// What `from` sent that `to` has not received yet. Public so a test can hand-make a broken one.
struct ProxyWay {
    int from = -1;
    int to = -1;
    std::deque<ProxyChunk> queue;
    bool eof = false;   // `from` closed its side
    int64_t came = 0;   // bytes read from `from`
    int64_t left = 0;   // bytes written to `to`

    // The front chunk may be written now.
    bool ready(ProxyClock::time_point now) const {
        return !queue.empty() && !queue.front().held && queue.front().due <= now;
    }
    // Queues what was read, due no earlier than the chunk before it (bytes keep their order).
    void take(std::string_view bytes, ProxyClock::time_point due, bool held);
    // The front chunk's unsent bytes. Throws std::logic_error when they are not the bytes that
    // came right after the last ones written: bytes leave in the order they came.
    std::string_view next_bytes() const;
    // `n` bytes of next_bytes() were written; the chunk leaves the queue once all of it is.
    void wrote(size_t n);
};

}  // namespace relab
