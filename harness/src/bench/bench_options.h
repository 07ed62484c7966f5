// What `relab bench` measures and how: its command line's options (cli/cmd_bench.cpp reads them
// into this struct; bench/measure/ measures by it).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace relab {

struct BenchOptions {
    std::string backend = "all";    // all | sim | redis | scale: which figures to measure (all: sim and redis)
    std::vector<std::string> labs;  // sim: ids, parts or files; empty = 08a-baseline and 08c-s4a
    std::string scenarios_dir;
    int trials = 50000;             // sim: trials per lab and per --jobs setting (half a second or
                                    // more each, so thread start and warm-up do not move the figure)
    std::optional<int> jobs;        // sim: threads; none = every core (hardware_concurrency)
    int requests = 20000;           // redis: sequential round trips per command and per tool
    int samples = 2000;             // redis: XADD → blocked consumer receipts
    int repetitions = 3;            // redis: alternating relab / redis-benchmark runs; the median is kept
    int pipeline = 1;               // redis: XADDs per write in the load figure (redis-benchmark -P)
    int scale_orders = 2000;        // scale: orders per run (3 events each)
    std::string json_path;          // google/benchmark-style JSON
    std::string out_dir;            // writes bench.json and bench.txt there
    std::string compare_path;       // OLD.json: old against new for each name in both
    std::string against_path;       // NEW.json: compare two files, measure nothing
    bool fail_on_miss = false;      // exit 1 when a figure misses its target
};

}  // namespace relab
