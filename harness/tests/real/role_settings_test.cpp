// Role processes run on the settings the parent resolved (RoleSettings in their config), not on a
// scenario file they parse again: a change made to the loaded Scenario reaches them, on the stream
// labs' path and the idempotency labs' alike (one role trial, backend_real/real_backend.cpp).
#include <gtest/gtest.h>

#include <string>

#include "backend_real/real_backend.h"
#include "scenario/loader/loader.h"
#include "servers/servers.h"
#include "scenario/scenario.h"

namespace relab {
namespace role_settings_test {

Scenario lab(const std::string& file) { return load_scenario(std::string(RELAB_SOURCE_DIR) + "/scenarios/" + file); }

class RoleSettingsRealTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { s_servers = new ServerSet(start_servers("", "")); }
    static void TearDownTestSuite() {
        delete s_servers;
        s_servers = nullptr;
    }
    static LabResult run(const Scenario& s) {
        BackendOptions o;
        o.relab_exe = RELAB_BINARY;
        o.run_id = new_run_id();
        return RealBackend(*s_servers, o).run(s);
    }
    static inline ServerSet* s_servers = nullptr;
};

// 08a's file says created's job takes 800 ms and paid's 50 (created overwrites paid in every
// trial); the struct says 0 and 300 ms: the consumer processes write created first, and every
// trial ends paid.
TEST_F(RoleSettingsRealTest, a_change_to_the_loaded_stream_scenario_reaches_the_role_processes) {
    Scenario s = lab("08a-baseline.json");
    s.runs = 2;
    s.flow().job_cost_ms["created"] = 0;
    s.flow().job_cost_ms["paid"] = 300;
    const LabResult r = run(s);
    ASSERT_EQ(r.trials.size(), 2u);
    EXPECT_EQ(r.wrong, 0);
    for (const auto& t : r.trials) EXPECT_FALSE(t.wrong) << "trial " << t.trial;
}

// The double click's file claims for 60 s; the struct's claim lives 1 ms, shorter than the 300 ms
// business logic: the second click is first again and places a second order (as the mutant does).
TEST_F(RoleSettingsRealTest, a_change_to_the_loaded_idempotency_scenario_reaches_the_client_processes) {
    Scenario s = lab("idem-f-mw-double-click.json");
    s.runs = 1;
    s.idem().middleware.claim_ttl_ms = 1;
    const LabResult r = run(s);
    ASSERT_EQ(r.trials.size(), 1u);
    EXPECT_EQ(r.wrong, 1);
}

}  // namespace role_settings_test
}  // namespace relab
