// ctest tsan_catches_proxy_race: two threads of a proxy-like pair, one taking bytes in and one
// sending them on, count the bytes queued between them in a plain integer with no lock. TSan must
// stop the program at the race (the link proxy's own count is under its mutex).
#include <cstdint>
#include <cstdio>
#include <thread>

namespace {

struct Link {
    int64_t queued_bytes = 0;  // the race: written by both threads, ordered by nothing
};

}  // namespace

int main() {
    Link link;
    std::thread reader([&] {
        for (int i = 0; i < 1000; ++i) link.queued_bytes += 16;
    });
    std::thread writer([&] {
        for (int i = 0; i < 1000; ++i) link.queued_bytes -= 16;
    });
    reader.join();
    writer.join();
    std::printf("%lld bytes left queued: TSan did not stop the race\n", static_cast<long long>(link.queued_bytes));
    return 0;
}
