#include "process/proxy_way.h"

#include <algorithm>

#include "util/check.h"

namespace relab {

void ProxyWay::take(std::string_view bytes, ProxyClock::time_point due, bool held) {
    ProxyChunk c;
    c.due = queue.empty() ? due : std::max(due, queue.back().due);
    c.held = held;
    c.bytes.assign(bytes);
    c.offset = came;
    came += static_cast<int64_t>(bytes.size());
    queue.push_back(std::move(c));
}

std::string_view ProxyWay::next_bytes() const {
    const ProxyChunk& c = queue.front();
    RELAB_CHECK(c.offset + static_cast<int64_t>(c.sent) == left, "a link proxy's bytes leave in the order they came");
    return std::string_view(c.bytes).substr(c.sent);
}

void ProxyWay::wrote(size_t n) {
    ProxyChunk& c = queue.front();
    c.sent += n;
    left += static_cast<int64_t>(n);
    if (c.sent == c.bytes.size()) queue.pop_front();
}

}  // namespace relab
