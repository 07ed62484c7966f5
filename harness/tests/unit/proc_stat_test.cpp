// /proc readers: a process that ends while being read is "gone", never an exception.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "process/proc_stat.h"

namespace proc_stat_test {

TEST(ProcStatTest, a_live_process_reads_its_state_and_parent) {
    const auto own = relab::read_proc_file(::getpid(), "stat");
    ASSERT_TRUE(own.has_value());
    EXPECT_EQ(own->rfind(std::to_string(::getpid()) + " (", 0), 0u) << *own;
    const auto s = relab::proc_stat(::getpid());
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->ppid, ::getppid());
    EXPECT_TRUE(relab::process_running(::getpid()));
}

TEST(ProcStatTest, a_process_that_is_gone_reads_as_nullopt_not_an_exception) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    ASSERT_TRUE(relab::read_proc_file(child, "cmdline").has_value());
    // A zombie still has /proc entries; its cmdline is empty, its state Z.
    ::kill(child, SIGKILL);
    for (int i = 0; i < 1000 && relab::proc_stat(child).value_or(relab::ProcStat{}).state != 'Z'; ++i) ::usleep(1000);
    EXPECT_FALSE(relab::process_running(child));
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_FALSE(relab::read_proc_file(child, "cmdline").has_value());
    EXPECT_FALSE(relab::proc_stat(child).has_value());
    EXPECT_FALSE(relab::process_running(child));
}

}  // namespace proc_stat_test
