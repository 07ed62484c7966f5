// ctest asan_catches_fiber_use_after_free: one fiber keeps a pointer across a switch, another frees
// what it points to, and the first reads it when resumed. ASan must stop the program at the read,
// and its report must show the free's frames on the second fiber's stack (drop_order), which ASan
// unwinds only when the fiber switches are annotated (sim/fiber_sanitizer.h).
#include <cstdio>

#include "sim/fiber.h"

namespace {

[[gnu::noinline]] int read_order(const int* order) { return *order; }
[[gnu::noinline]] void drop_order(int*& order) {
    delete order;
    order = nullptr;
}

}  // namespace

int main() {
    relab::sim::Fiber reader(64 * 1024);
    relab::sim::Fiber owner(64 * 1024);
    int* order = new int(42);
    int seen = 0;
    reader.start("reader", [&] {
        const int* kept = order;
        reader.yield();
        seen = read_order(kept);
    });
    owner.start("owner", [&] { drop_order(order); });
    reader.resume();
    owner.resume();
    reader.resume();
    std::printf("read %d after it was freed: ASan did not stop it\n", seen);
    return 0;
}
