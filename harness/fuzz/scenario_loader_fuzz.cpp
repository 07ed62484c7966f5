// libFuzzer target: a scenario file's text through parse_scenario(), as `relab run FILE` reads it
// (comments allowed; the idem, fault and recovery sections; every mutant's patch applied and
// re-read). The loader's one way to refuse a file is ScenarioError, whose message names the file
// and the JSON Pointer or line of the fault; any other exception escaping it is a bug (the CLI
// would print a library's message with no path), so it is left to std::terminate, which
// libFuzzer reports as a crash. So is a sanitizer report, a stack overflow, a leak, or a
// timeout.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace {

const std::string k_file = "fuzz.json";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const relab::Scenario s = relab::parse_scenario(text, k_file);
        (void)s.expect.describe();  // what the reports print of it
    } catch (const relab::ScenarioError& e) {
        // The refusal a user sees: "fuzz.json: at /path: reason" (or "at line L, column C").
        const std::string what = e.what();
        if (what.rfind(k_file, 0) != 0 || e.reason().empty()) {
            std::cerr << "ScenarioError without the file or a reason: " << what << "\n";
            std::abort();
        }
    }
    return 0;
}
