#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report_fixture.h"

namespace relab {
namespace text_reporter_test {

using test::sample_run;

std::string render(const RunReport& run, Lang lang = Lang::en,
                   TimelineSelection sel = TimelineSelection::first_and_wrong) {
    std::ostringstream out;
    make_text_reporter(TextOptions{lang, sel})->report(run, out);
    return out.str();
}

RunReport run_of(LabResult lab) {
    RunReport run;
    run.labs = {std::move(lab)};
    return run;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

bool has_line(const std::string& text, const std::string& line) {
    const auto lines = lines_of(text);
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// The trial numbers whose timelines were printed, in order.
std::vector<int> timeline_trials(const std::string& text, const std::string& word = "trial") {
    std::vector<int> trials;
    for (const auto& line : lines_of(text))
        if (line.rfind(word + " ", 0) == 0 && line.find(" — stream:") != std::string::npos)
            trials.push_back(std::stoi(line.substr(word.size() + 1)));
    return trials;
}

TEST(TextReporterTest, EnglishReportOfEveryKindOfLabMatchesTheArticleLayout) {
    const std::string expected = R"(### BUG: 2 parallel consumers; plain UPDATE   (08a-baseline.txt)
trial 1 — stream: 1792591449272-0 created (v=1), 1792591449272-1 paid (v=2)
  t=   2 ms  C1 received 1792591449272-0 created (v=1)
  t=   2 ms  C2 received 1792591449272-1 paid (v=2)
  t= 111 ms  C2 wrote status=paid → UPDATE 1
  t= 816 ms  C1 wrote status=created → UPDATE 1
  final status per trial: created✕ created✕
  → wrong final state (not paid): 2/2
  accounting: 4 published · 4 processed once · 0 duplicated · 0 lost · 0 redelivered after ack · 0 unexpected · 2 stale overwrites
    trial 1: stale overwrite 1: created overwrote paid (#42)
    trial 2: stale overwrite 1: created overwrote paid (#42)
  documented: 10/10
    the article (“Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off”, §2): “10/10 lần đơn #42 kết thúc ở created.”
    relab's summary: wrong 10/10; created overwrites at 816 ms
  expectation: wrong = all → held
  delivery XADD → receipt: p50 0.21 ms, max 0.48 ms (4 samples)
### S4a: 2 consumers + lock per key   (08c-lock.txt)
trial 1 — stream: 1792591473321-0 created (v=1), 1792591473321-1 paid (v=2)
  t=   1 ms  C1 received 1792591473321-0 created (v=1)
  t=   1 ms  C2 received 1792591473321-1 paid (v=2)
  t=   1 ms  C1 got lock:order:42 (SET NX PX 500) after 1 attempt(s)
  t= 814 ms  C1 wrote status=created → UPDATE 1
  t= 820 ms  C1 released lock: compare-and-delete Lua script → 1
  t= 827 ms  C2 got lock:order:42 (SET NX PX 500) after 41 attempt(s)
  t= 897 ms  C2 wrote status=paid → UPDATE 1
  t= 898 ms  C2 released lock: compare-and-delete Lua script → 1
trial 2 — stream: 1792591525929-0 created (v=1), 1792591525929-1 paid (v=2)
  t=   1 ms  C2 received 1792591525929-1 paid (v=2)
  t=   1 ms  C1 received 1792591525929-0 created (v=1)
  t=   3 ms  C1 got lock:order:42 (SET NX PX 500) after 1 attempt(s)
  t= 510 ms  C2 got lock:order:42 (SET NX PX 500) after 21 attempt(s)
  t= 567 ms  C2 wrote status=paid → UPDATE 1
  t= 568 ms  C2 released lock: compare-and-delete Lua script → 1
  t= 810 ms  C1 wrote status=created → UPDATE 1
  t= 810 ms  C1 released lock: compare-and-delete Lua script → 0 (lock expired, no longer ours)
  final status per trial: paid created✕ created✕
  → wrong final state (not paid): 2/3
  accounting: 0 published · 0 processed once · 0 duplicated · 0 lost · 0 redelivered after ack · 0 unexpected · 0 stale overwrites
  documented:
    the article (“Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off”, §3, S4c): “DELEX … IFEQ trả 0”
    relab's summary: the late release returns 0
    the article also (§3, S4): “lock là mutual exclusion (loại trừ lẫn nhau), không phải ordering (sắp thứ tự).”
      relab's note: lock-fifo puts a per-key FIFO behind the lock
  expectation: wrong >= 1 → held
  lock release: compare-and-delete Lua script (DELEX needs Redis 8.4)
### P2 right: CAS with the BUSINESS version   (08f-p2.txt)
trial 1 — stream: 1792591566859-0 paid (v=2), 1792591567558-0 created (v=1)
  t=   0 ms  producer: publish created (v=1) FAILED (simulated network blip) → retry in 500 ms
  t= 301 ms  producer: publish paid (v=2) OK → 1792591566859-0
  t= 301 ms  C1 received 1792591566859-0 paid (v=2)
  t= 360 ms  C1 wrote status=paid version=2 → UPDATE 1
  t= 501 ms  producer: retry #1 created FAILED → retry in another 500 ms (backoff x2)
  t=1000 ms  producer: retry #2 created OK → 1792591567558-0
  t=1000 ms  C1 received 1792591567558-0 created (v=1)
  t=1802 ms  C1 wrote status=created version=1 → UPDATE 0 (skipped: stale)
  final status per trial: paid
  → wrong final state (not paid): 0/1
  accounting: 2 published · 2 processed once · 0 duplicated · 0 lost · 0 redelivered after ack · 0 unexpected · 0 stale overwrites
    trial 1: unapplied (every write refused) 1: 1792591567558-0
  documented: 0/5
    relab's summary: wrong 0/5
  expectation: wrong = none → held
### P1 wrong: naive dispatcher   (08g-outbox.txt)
trial 1 — stream: 1792591588799-0 #43 created (v=1), 1792591588804-0 #42 paid (v=2)
  t=  30 ms  C1 received 1792591588799-0 #43 created (v=1)
  t=  35 ms  C1 wrote #43 status=created → UPDATE 1
  final status per trial: #42=created✕ #43=paid | #42=paid #43=paid
  → wrong final state (not paid): 1/2
  accounting: 0 published · 0 processed once · 0 duplicated · 0 lost · 0 redelivered after ack · 0 unexpected · 0 stale overwrites
  expectation: wrong >= 1 → held
### CAS when 2 UPDATEs OVERLAP   (08d-cas.txt)
--- A = paid v=2, B = created v=1 in REPEATABLE READ
----- A -----
BEGIN;
BEGIN
UPDATE tmp_orders SET status = 'paid', version = 2 WHERE id = 42 AND version < 2;
UPDATE 1
COMMIT;
COMMIT
----- B -----
BEGIN ISOLATION LEVEL REPEATABLE READ;
BEGIN
UPDATE tmp_orders SET status = 'created', version = 1 WHERE id = 42 AND version < 1;
ERROR:  could not serialize access due to concurrent update
Time: 703.011 ms
ROLLBACK;
ROLLBACK
 id | status | version
----+--------+---------
 42 | paid   |       2
--- CAS by hand: paid (v=2) first, created (v=1) late
UPDATE tmp_orders SET status = 'paid', version = 2 WHERE id = 42 AND version < 2;
UPDATE 1
UPDATE tmp_orders SET status = 'created', version = 1 WHERE id = 42 AND version < 1;
UPDATE 1
  ✕ expected UPDATE 0, got UPDATE 1
SELECT id, status, version FROM tmp_orders;
 id | status  | version
----+---------+---------
 42 | created |       1
 id | status  | version
----+---------+---------
 42 | created |       1
  ✕ final rows [42, created, 1], expected [42, paid, 2]
  → cases with a wrong final row: 1/2
  documented:
    relab's summary: B fails 'could not serialize access due to concurrent update'
  expectation: wrong = none → BROKEN
    ✕ 1 of 2 cases ended with wrong rows (expected none)
### XADD IDMP producer idempotency   (08h-idmp.txt)
skipped: XADD IDMP needs Redis 8.6; this server is 7.0.15
)";
    EXPECT_EQ(render(sample_run()), expected);
}

// The article's figure stands right under the measured throughput, cited, with relab's note apart.
TEST(TextReporterTest, TheArticlesThroughputFigureStandsUnderTheMeasuredOne) {
    const auto under_throughput = [](const std::string& text) {
        const auto lines = lines_of(text);
        auto at = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find("  throughput: ") == 0; });
        EXPECT_NE(at, lines.end()) << text;
        return at == lines.end() || lines.end() - at < 3 ? std::vector<std::string>{}
                                                         : std::vector<std::string>(at, at + 3);
    };
    EXPECT_EQ(under_throughput(render(run_of(test::s1_throughput_lab()))),
              (std::vector<std::string>{
                  "  throughput: 2 jobs written by 851.5 ms = 2.35 jobs/s (median of 2 trial(s); min 2.30, max 2.40)",
                  "    the article's figure, 1.25 events/s (“Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off”, §2): “một consumer đơn chỉ đạt tối đa ~1,25 event/giây”",
                  "      relab's note: 800 ms jobs"}));
    EXPECT_EQ(under_throughput(render(run_of(test::s1_throughput_lab()), Lang::vi)),
              (std::vector<std::string>{
                  "  throughput: 2 job ghi xong lúc 851.5 ms = 2.35 job/giây (trung vị 2 lần; min 2.30, max 2.40)",
                  "    con số của bài viết, 1,25 event/giây (“Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off”, §2): “một consumer đơn chỉ đạt tối đa ~1,25 event/giây”",
                  "      ghi chú của relab: job 800 ms"}));
    // Nothing measured beside it: the figure is still printed, under the documented result.
    LabResult unmeasured = test::s1_throughput_lab();
    unmeasured.throughput = ThroughputStats{};
    const std::string text = render(run_of(unmeasured));
    EXPECT_TRUE(has_line(text, "    the article's figure, 1.25 events/s (“Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off”, §2): “một consumer đơn chỉ đạt tối đa ~1,25 event/giây”"))
        << text;
    EXPECT_EQ(text.find("  throughput: "), std::string::npos) << text;
}

TEST(TextReporterTest, VietnameseBaselineReadsLikeTheArticleSection2) {
    const std::string expected = R"(### BUG: 2 consumer song song; UPDATE thường   (08a-baseline.txt)
lần 1 — stream: 1792591449272-0 created (v=1), 1792591449272-1 paid (v=2)
  t=   2 ms  C1 nhận 1792591449272-0 created (v=1)
  t=   2 ms  C2 nhận 1792591449272-1 paid (v=2)
  t= 111 ms  C2 ghi status=paid → UPDATE 1
  t= 816 ms  C1 ghi status=created → UPDATE 1
  status cuối từng lần: created✕ created✕
  → SAI trạng thái cuối (không phải paid): 2/2 lần
  đối soát: 4 published · 4 processed once · 0 duplicated · 0 lost · 0 redelivered after ack · 0 unexpected · 2 stale overwrites
    lần 1: stale overwrite 1: created overwrote paid (#42)
    lần 2: stale overwrite 1: created overwrote paid (#42)
  bài viết: 10/10
    nguyên văn bài viết (“Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off”, §2): “10/10 lần đơn #42 kết thúc ở created.”
    relab tóm tắt: sai 10/10; created ghi đè ở 816 ms
  kỳ vọng: wrong = all → đạt
  thời gian giao XADD → nhận: p50 0.21 ms, max 0.48 ms (4 mẫu)
)";
    EXPECT_EQ(render(run_of(test::baseline_lab()), Lang::vi), expected);
}

TEST(TextReporterTest, VietnameseProducerRetriesReadLikeTheArticleSection6) {
    const std::string text = render(run_of(test::cas_lab()), Lang::vi);
    const std::vector<std::string> expected = {
        "### P2 đúng: CAS với version NGHIỆP VỤ   (08f-p2.txt)",
        "lần 1 — stream: 1792591566859-0 paid (v=2), 1792591567558-0 created (v=1)",
        "  t=   0 ms  producer: publish created (v=1) LỖI (giả lập network blip) → hẹn retry sau 500 ms",
        "  t= 301 ms  producer: publish paid (v=2) OK → 1792591566859-0",
        "  t= 301 ms  C1 nhận 1792591566859-0 paid (v=2)",
        "  t= 360 ms  C1 ghi status=paid version=2 → UPDATE 1",
        "  t= 501 ms  producer: retry #1 created LỖI → hẹn retry sau 500 ms nữa (backoff x2)",
        "  t=1000 ms  producer: retry #2 created OK → 1792591567558-0",
        "  t=1000 ms  C1 nhận 1792591567558-0 created (v=1)",
        "  t=1802 ms  C1 ghi status=created version=1 → UPDATE 0 (bỏ qua: bản cũ)",
        "  status cuối từng lần: paid",
        "  → SAI trạng thái cuối (không phải paid): 0/1 lần",
        "  đối soát: 2 published · 2 processed once · 0 duplicated · 0 lost · 0 redelivered after ack · 0 unexpected · 0 stale overwrites",
        "    lần 1: unapplied (every write refused) 1: 1792591567558-0",
        "  bài viết: 0/5",
        "    relab tóm tắt: sai 0/5",
        "  kỳ vọng: wrong = none → đạt",
    };
    EXPECT_EQ(lines_of(text), expected);
}

TEST(TextReporterTest, VietnameseLockSessionAndSkippedLines) {
    const std::string text = render(sample_run(), Lang::vi);
    EXPECT_TRUE(has_line(text, "  t=   1 ms  C1 lấy được lock:order:42 (SET NX PX 500) sau 1 lần thử")) << text;
    EXPECT_TRUE(has_line(text, "  t= 827 ms  C2 lấy được lock:order:42 (SET NX PX 500) sau 41 lần thử")) << text;
    EXPECT_TRUE(has_line(text, "  t= 820 ms  C1 nhả lock: compare-and-delete Lua script → 1")) << text;
    EXPECT_TRUE(has_line(
        text, "  t= 810 ms  C1 nhả lock: compare-and-delete Lua script → 0 (lock đã hết hạn, không còn là của mình)"))
        << text;
    EXPECT_TRUE(has_line(text, "  nhả lock bằng: compare-and-delete Lua script (DELEX cần Redis 8.4)")) << text;
    // The article's words stay as it wrote them; relab's own words carry relab's label.
    EXPECT_TRUE(has_line(text, "    nguyên văn bài viết (“Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off”, §3, S4c): “DELEX … IFEQ trả 0”")) << text;
    EXPECT_TRUE(has_line(text, "    relab tóm tắt: lần nhả lock muộn trả 0")) << text;
    EXPECT_TRUE(has_line(text, "      ghi chú của relab: lock-fifo đặt FIFO theo khoá sau lock")) << text;
    EXPECT_TRUE(has_line(text, "  status cuối từng lần: #42=created✕ #43=paid | #42=paid #43=paid")) << text;
    EXPECT_TRUE(has_line(text, "--- A = paid v=2, B = created v=1 ở REPEATABLE READ")) << text;
    EXPECT_TRUE(has_line(text, "ERROR:  could not serialize access due to concurrent update")) << text;
    EXPECT_TRUE(has_line(text, "  → số trường hợp có dòng cuối SAI: 1/2")) << text;
    EXPECT_TRUE(has_line(text, "  kỳ vọng: wrong = none → KHÔNG ĐẠT")) << text;
    EXPECT_TRUE(has_line(text, "### IDMP chống producer ghi trùng   (08h-idmp.txt)")) << text;
    EXPECT_TRUE(has_line(text, "bỏ qua: XADD IDMP needs Redis 8.6; this server is 7.0.15")) << text;
    EXPECT_EQ(text.find("received"), std::string::npos);
    EXPECT_EQ(text.find("trial "), std::string::npos);
}

TEST(TextReporterTest, FirstAndWrongShowsTrialOneAndTheFirstWrongTrial) {
    const RunReport lock = run_of(test::lock_lab());  // trial 1 right, trials 2 and 3 wrong
    EXPECT_EQ(timeline_trials(render(lock)), (std::vector<int>{1, 2}));
    const RunReport baseline = run_of(test::baseline_lab());  // trial 1 already wrong
    EXPECT_EQ(timeline_trials(render(baseline)), (std::vector<int>{1}));
    const RunReport cas = run_of(test::cas_lab());  // nothing wrong
    EXPECT_EQ(timeline_trials(render(cas)), (std::vector<int>{1}));
    EXPECT_EQ(timeline_trials(render(lock, Lang::vi), "lần"), (std::vector<int>{1, 2}));
}

TEST(TextReporterTest, EachTimelineSelectionPrintsItsTrials) {
    const RunReport lock = run_of(test::lock_lab());
    EXPECT_EQ(timeline_trials(render(lock, Lang::en, TimelineSelection::first)), (std::vector<int>{1}));
    EXPECT_EQ(timeline_trials(render(lock, Lang::en, TimelineSelection::wrong)), (std::vector<int>{2, 3}));
    EXPECT_EQ(timeline_trials(render(lock, Lang::en, TimelineSelection::all)), (std::vector<int>{1, 2, 3}));
    const std::string none = render(lock, Lang::en, TimelineSelection::none);
    EXPECT_TRUE(timeline_trials(none).empty());
    EXPECT_EQ(none.find("  t="), std::string::npos);
    // The summary lines do not depend on the selection.
    EXPECT_TRUE(has_line(none, "  final status per trial: paid created✕ created✕")) << none;
    EXPECT_TRUE(has_line(none, "  → wrong final state (not paid): 2/3")) << none;

    const std::string all = render(lock, Lang::en, TimelineSelection::all);
    EXPECT_TRUE(has_line(all, "trial 3 — stream: 1792591530001-0 created (v=1), 1792591530001-1 paid (v=2)")) << all;
    EXPECT_TRUE(has_line(all, "  t=   2 ms  C1 received 1792591530001-1 paid (v=2)")) << all;
}

TEST(TextReporterTest, PublishLinesOnlyInTrialsWhereAPublishFailed) {
    // The baseline's publishes all succeeded: its timeline starts with the receipts.
    const std::string baseline = render(run_of(test::baseline_lab()));
    EXPECT_EQ(baseline.find("producer:"), std::string::npos) << baseline;
    const std::string cas = render(run_of(test::cas_lab()));
    EXPECT_TRUE(has_line(cas, "  t= 301 ms  producer: publish paid (v=2) OK → 1792591566859-0")) << cas;
}

TEST(TextReporterTest, TimesAreMillisecondsRoundedDownRightAlignedInFourCharacters) {
    LabResult lab = test::baseline_lab();
    lab.trials.resize(1);
    lab.trials[0].history = {
        test::receive(1, 0.999, "C1", "1-0", test::event(42, "created", 1)),
        test::receive(1, 99.9, "C1", "1-0", test::event(42, "created", 1)),
        test::receive(1, 1005.2, "C1", "1-0", test::event(42, "created", 1)),
        test::receive(1, 12345.0, "C1", "1-0", test::event(42, "created", 1)),
    };
    const std::string text = render(run_of(lab));
    EXPECT_TRUE(has_line(text, "  t=   0 ms  C1 received 1-0 created (v=1)")) << text;
    EXPECT_TRUE(has_line(text, "  t=  99 ms  C1 received 1-0 created (v=1)")) << text;
    EXPECT_TRUE(has_line(text, "  t=1005 ms  C1 received 1-0 created (v=1)")) << text;
    EXPECT_TRUE(has_line(text, "  t=12345 ms  C1 received 1-0 created (v=1)")) << text;
}

TEST(TextReporterTest, DelexReleaseHasNoVersionNoteAndAPublishWithoutRetryGivesUp) {
    LabResult lab = test::cas_lab();
    lab.lock_release_method = "DELEX IFEQ";
    lab.trials[0].history = {test::rec(1, 5, "producer", Op::publish,
                                       {{"event", test::event(42, "created", 1)}, {"attempt", 1}, {"result", "fail"}})};
    const std::string text = render(run_of(lab));
    EXPECT_TRUE(has_line(text, "  lock release: DELEX IFEQ")) << text;
    EXPECT_TRUE(
        has_line(text, "  t=   5 ms  producer: publish created (v=1) FAILED (simulated network blip) → no retry scheduled"))
        << text;
}

TEST(TextReporterTest, TranscriptSessionsLimitsWhichSessionsArePrinted) {
    LabResult lab = test::session_lab();
    lab.scenario.sessions().cases[0].transcript_sessions = {"B"};
    const std::string text = render(run_of(lab));
    EXPECT_FALSE(has_line(text, "----- A -----")) << text;
    EXPECT_TRUE(has_line(text, "----- B -----")) << text;
    EXPECT_FALSE(has_line(text, "COMMIT")) << text;
    EXPECT_TRUE(has_line(text, "Time: 703.011 ms")) << text;
}

TEST(TextReporterTest, PsqlTableRightAlignsNumbersAndCentresHeaders) {
    LabResult lab = test::session_lab();
    lab.cases.resize(1);
    lab.cases[0].columns = {"status", "outbox_rows"};
    lab.cases[0].final_rows = {{"paid", "0"}, {"đã giao", "12"}};
    const std::string text = render(run_of(lab));
    const std::vector<std::string> table = {
        " status  | outbox_rows",
        "---------+-------------",
        " paid    |           0",
        " đã giao |          12",
    };
    const auto lines = lines_of(text);
    const auto at = std::find(lines.begin(), lines.end(), table[0]);
    ASSERT_NE(at, lines.end()) << text;
    ASSERT_GE(lines.end() - at, 4) << text;
    EXPECT_EQ(std::vector<std::string>(at, at + 4), table) << text;
}

TEST(TextReporterTest, a_simulated_idempotency_lab_prints_seeds_its_rate_and_the_counts_of_the_first_trials) {
    LabResult lab = test::idem_lab();
    lab.backend = "sim";
    const TrialOutcome wrong = lab.trials[0], right = lab.trials[1];
    lab.trials.clear();
    for (int i = 1; i <= 25; ++i) {
        TrialOutcome t = i == 3 ? wrong : right;
        t.trial = i;
        t.seed = 0xabc0 + static_cast<uint64_t>(i);
        lab.trials.push_back(t);
    }
    lab.wrong = 1;
    lab.total = 25;
    lab.wrong_rate = 0.04;
    lab.wrong_rate_low = 0.0071;
    lab.wrong_rate_high = 0.1954;
    lab.failing_seeds = {0xabc3};
    const std::string text = render(run_of(lab));
    // Trial 1 and the first wrong trial, each with its seed.
    EXPECT_NE(text.find("\ntrial 1 (seed 0x000000000000abc1)\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\ntrial 3 (seed 0x000000000000abc3)\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("\ntrial 2 (seed"), std::string::npos);
    // The counts of the first 20 trials one by one, the rest only in the total.
    EXPECT_NE(text.find("  trial 20: orders 1 (duplicates 0)"), std::string::npos);
    EXPECT_EQ(text.find("  trial 21: "), std::string::npos);
    EXPECT_NE(text.find("  … (5 more trials, counted in the total)\n  all trials: orders 26 (duplicates 1) | 201: 26 | "
                        "replays: 1 | 409: 24 | 422: 0 | layer 4 caught: 0 | 5xx: 0 | leaks: 1 | sends: 75\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  wrong rate 4.0% (95% CI 0.7–19.5%) over 25 trials; failing seeds: 0x000000000000abc3\n"),
              std::string::npos)
        << text;
    // On the real backend: no seeds, no rate, and every trial's counts.
    lab.backend = "real";
    const std::string real = render(run_of(lab));
    EXPECT_EQ(real.find("(seed "), std::string::npos);
    EXPECT_EQ(real.find("wrong rate"), std::string::npos);
    EXPECT_NE(real.find("  trial 25: orders 1"), std::string::npos);
}

TEST(TextReporterTest, the_accounting_lists_the_first_flagged_trials_with_their_examples) {
    LabResult lab = test::sim_lab();  // 150 trials, every fifth one wrong
    for (auto& t : lab.trials)
        if (t.wrong) {
            t.accounting.published = 2;
            t.accounting.lost = 1;
            t.accounting.lost_examples = {fmt::format("{}-1", t.trial)};
            t.accounting.processed_once = 1;
        } else {
            t.accounting.published = t.accounting.processed_once = 2;
        }
    const std::string text = render(run_of(lab));
    EXPECT_TRUE(has_line(text, "  accounting: 300 published · 270 processed once · 0 duplicated · 30 lost · 0 redelivered "
                               "after ack · 0 unexpected · 0 stale overwrites"))
        << text;
    EXPECT_TRUE(has_line(text, "    trial 5: lost 1: 5-1")) << text;
    EXPECT_TRUE(has_line(text, "    trial 25: lost 1: 25-1")) << text;
    EXPECT_FALSE(has_line(text, "    trial 30: lost 1: 30-1")) << text;
    EXPECT_TRUE(has_line(text, "    … 25 more trials like these")) << text;
}

TEST(TextReporterTest, faults_claims_and_redeliveries_are_printed_in_the_timeline) {
    const std::string text = render(run_of(test::crash_lab()));
    EXPECT_TRUE(has_line(text, "  t=  60 ms  nemesis: fault 1 kill C1 — SIGKILL C1 after its write, before its ack …")) << text;
    EXPECT_TRUE(has_line(text, "  t=  62 ms  nemesis: fault 1 kill C1 → ok (2.5 ms)")) << text;
    EXPECT_TRUE(has_line(text, "  t= 400 ms  reaper XAUTOCLAIM (min idle 300 ms) claimed 1: 1790000000000-0")) << text;
    EXPECT_TRUE(has_line(text, "  t= 400 ms  C2 received 1790000000000-0 paid (v=2) (delivery 2, claimed)")) << text;
    EXPECT_TRUE(has_line(text, "  t=   1 ms  C1 received 1790000000000-0 paid (v=2)")) << text;
    EXPECT_TRUE(has_line(text, "  t= 501 ms  nemesis: fault 2 restart C1 → FAILED (1.0 ms): exec failed")) << text;
    EXPECT_TRUE(has_line(text, "  accounting: 1 published · 0 processed once · 1 duplicated · 0 lost · 0 redelivered after "
                               "ack · 0 unexpected · 0 stale overwrites"))
        << text;
    EXPECT_TRUE(has_line(text, "    trial 1: duplicated 1: 1790000000000-0")) << text;
}

}  // namespace text_reporter_test
}  // namespace relab

