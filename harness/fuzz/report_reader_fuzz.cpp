// libFuzzer target: one JSON file as `relab report` (report_dir.cpp's read_report_files) and
// `relab diff` (lab_diff.cpp's read_digest) read it: a lab digest goes through digest_from_json;
// a run report ("labs": [...]) through run_from_json (each lab's embedded scenario re-parsed), then
// every lab's verdict is recomputed from its trials (recheck_verdict), its text report written (what
// junit.xml carries for a broken lab), and the run is merged and digested and diffed against itself
// as those commands do. Anything else is skipped, as they skip it.
//
// The readers refuse a file with a std::runtime_error naming the JSON Pointer ("JSON report: at
// /labs/0/trials: expected an array, got a string"; "lab digest: at ..."), and text that is not
// JSON with the parser's parse_error (the CLI adds the file name). Any other exception type
// escaping them (a nlohmann type_error, std::out_of_range, ...) is a bug: the CLI would print a
// library's message without a path. It is left to std::terminate, which libFuzzer reports as a
// crash; so is a sanitizer report, a stack overflow, a leak or a timeout.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <typeinfo>

#include <nlohmann/json.hpp>

#include "report/compare/lab_diff.h"
#include "report/compare/lab_digest.h"
#include "report/lab_summary.h"
#include "report/compare/report_dir.h"
#include "report/reporter.h"
#include "report/compare/verdict_recheck.h"

namespace {

using nlohmann::json;

// The readers' own refusal: exactly std::runtime_error (not a subclass such as std::range_error,
// nor a library's exception), with a message that says where.
bool is_refusal(const std::exception& e) {
    const std::string what = e.what();
    return typeid(e) == typeid(std::runtime_error) &&
           (what.rfind("JSON report: at ", 0) == 0 || what.rfind("lab digest: at ", 0) == 0);
}

void read_run_report(const json& j) {
    relab::RunReport run = relab::run_from_json(j);
    for (auto& lab : run.labs) (void)relab::recheck_verdict(lab);
    for (const auto& lab : run.labs) (void)relab::lab_text_report(lab);
    const relab::RunReport merged = relab::merge_runs({run, run});
    const relab::RunDigest d = relab::digest_run(merged);
    const relab::DigestDiff diff = relab::diff_digests(d, relab::digest_run(run));
    (void)relab::diff_text(diff);
    (void)relab::digest_text(d);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    json j;
    try {
        j = json::parse(reinterpret_cast<const char*>(data), reinterpret_cast<const char*>(data) + size);
    } catch (const json::exception&) {
        return 0;  // parse_error or out_of_range (1e400): both readers say "FILE: not JSON: ..."
    }
    try {
        if (relab::is_digest_json(j)) {
            const relab::RunDigest d = relab::digest_from_json(j);
            (void)relab::diff_text(relab::diff_digests(d, d));
            (void)relab::digest_text(d);
        } else if (j.is_object() && j.contains("labs") && j.at("labs").is_array()) {
            read_run_report(j);
        }
    } catch (const std::exception& e) {
        if (!is_refusal(e)) {
            std::cerr << "escaped the report readers: " << typeid(e).name() << ": " << e.what() << "\n";
            std::abort();
        }
    }
    return 0;
}
