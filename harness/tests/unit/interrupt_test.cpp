#include <gtest/gtest.h>

#include <csignal>

#include "util/interrupt.h"

namespace relab {
namespace interrupt_test {

// Restores the previous SIGINT/SIGTERM dispositions and forgets the signal, so other tests in the
// binary are unaffected.
class InterruptTest : public ::testing::Test {
protected:
    void SetUp() override {
        sigaction(SIGINT, nullptr, &m_old_int);
        sigaction(SIGTERM, nullptr, &m_old_term);
        clear_interrupt();
    }
    void TearDown() override {
        sigaction(SIGINT, &m_old_int, nullptr);
        sigaction(SIGTERM, &m_old_term, nullptr);
        clear_interrupt();
    }
    struct sigaction m_old_int {};
    struct sigaction m_old_term {};
};

TEST_F(InterruptTest, NothingPendingWithoutASignal) {
    install_interrupt_handlers();
    EXPECT_FALSE(interrupted());
    EXPECT_EQ(interrupt_signal(), 0);
    EXPECT_NO_THROW(throw_if_interrupted());
}

TEST_F(InterruptTest, SigintSetsTheFlagAndThrowIfInterruptedThrows) {
    install_interrupt_handlers();
    install_interrupt_handlers();  // idempotent
    ASSERT_EQ(raise(SIGINT), 0);
    EXPECT_TRUE(interrupted());
    EXPECT_EQ(interrupt_signal(), SIGINT);
    try {
        throw_if_interrupted();
        FAIL() << "throw_if_interrupted did not throw";
    } catch (const Interrupted& e) {
        EXPECT_EQ(e.signal_number(), SIGINT);
        EXPECT_STREQ(e.what(), "interrupted by signal 2");
    }
}

TEST_F(InterruptTest, FirstSignalIsKeptAndClearForgetsIt) {
    install_interrupt_handlers();
    ASSERT_EQ(raise(SIGTERM), 0);
    ASSERT_EQ(raise(SIGINT), 0);
    EXPECT_EQ(interrupt_signal(), SIGTERM);
    clear_interrupt();
    EXPECT_FALSE(interrupted());
    EXPECT_NO_THROW(throw_if_interrupted());
}

}  // namespace interrupt_test
}  // namespace relab
