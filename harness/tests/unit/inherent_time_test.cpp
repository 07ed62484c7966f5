#include <gtest/gtest.h>

#include "check/inherent_time.h"

namespace relab {
namespace inherent_time_test {

HistoryRecord at_ms(int64_t ms) {
    HistoryRecord r;
    r.t_ns = ms * 1'000'000;
    return r;
}

TEST(InherentTimeTest, a_trial_spans_from_its_first_to_its_last_record_in_any_order) {
    TrialOutcome t;
    t.history = {at_ms(5), at_ms(-2), at_ms(816), at_ms(111)};
    EXPECT_EQ(trial_inherent_us(t), 818'000);
    t.history = {at_ms(7)};
    EXPECT_EQ(trial_inherent_us(t), 0);
}

TEST(InherentTimeTest, a_trial_without_its_history_keeps_its_load_span_or_counts_nothing) {
    TrialOutcome t;
    EXPECT_EQ(trial_inherent_us(t), 0);
    t.load.span_us = 12'500'000;
    EXPECT_EQ(trial_inherent_us(t), 12'500'000);
    t.history = {at_ms(0), at_ms(3)};  // a kept history wins over the load figure
    EXPECT_EQ(trial_inherent_us(t), 3'000);
}

TEST(InherentTimeTest, a_case_runs_from_its_origin_to_the_end_of_its_last_step) {
    CaseOutcome c;
    EXPECT_EQ(case_inherent_us(c), 0);
    StepOutcome a;
    a.start_us = 100;
    a.duration_us = 1'000'000;  // holds the row lock 1 s
    StepOutcome b;
    b.start_us = 300'000;  // at_ms 300: waits behind A
    b.duration_us = 700'500;
    c.steps = {a, b};
    EXPECT_EQ(case_inherent_us(c), 1'000'500);
}

TEST(InherentTimeTest, labs_and_runs_add_their_trials_and_cases_and_skipped_labs_count_nothing) {
    LabResult stream;
    TrialOutcome t1, t2;
    t1.history = {at_ms(0), at_ms(816)};
    t2.history = {at_ms(1), at_ms(815)};
    stream.trials = {t1, t2};
    LabResult sessions;
    CaseOutcome c;
    StepOutcome s;
    s.start_us = 0;
    s.duration_us = 250'000;
    c.steps = {s};
    sessions.cases = {c, c};
    LabResult skipped = stream;
    skipped.skipped = true;
    EXPECT_EQ(lab_inherent_us(stream), 816'000 + 814'000);
    EXPECT_EQ(lab_inherent_us(sessions), 500'000);
    EXPECT_EQ(lab_inherent_us(skipped), 0);
    EXPECT_EQ(run_inherent_us({stream, sessions, skipped}), 2'130'000);
    EXPECT_EQ(run_inherent_us({}), 0);
}

}  // namespace inherent_time_test
}  // namespace relab
