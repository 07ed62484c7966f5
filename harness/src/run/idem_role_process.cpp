#include "run/idem_role_process.h"

#include <stdexcept>

#include "history/file_history.h"
#include "ports/seeded_rng.h"
#include "real/failover_kv.h"
#include "real/order_table.h"
#include "real/pg_client.h"
#include "real/real_clock.h"
#include "roles/roles.h"

namespace relab {

namespace {

// The idempotency clients read no stream; a call here is a bug in the role.
class NoStream : public Stream {
public:
    [[noreturn]] static void refuse() { throw std::logic_error("an idempotency client has no stream"); }
    std::vector<std::string> xadd(const std::string&, const std::vector<Fields>&) override { refuse(); }
    std::vector<StreamEntry> xreadgroup(const std::string&, const std::string&, const std::string&, int, Millis) override {
        refuse();
    }
    void xack(const std::string&, const std::string&, const std::string&) override { refuse(); }
    std::vector<StreamEntry> xrange(const std::string&) override { refuse(); }
    void wait_readers_blocked(int, Millis) override { refuse(); }
};

}  // namespace

int run_idem_role_process(const RoleConfig& c, const Scenario& s) {
    std::vector<RedisEndpoint> endpoints{c.redis};
    endpoints.insert(endpoints.end(), c.redis_replicas.begin(), c.redis_replicas.end());
    FailoverKv kv(endpoints, RedisNamespace{c.key_prefix});
    PgSession pg(c.pg, c.schema);
    RealOrderTable table(pg);
    RealOrderStore orders(pg);
    RealOutbox outbox(pg);
    NoStream stream;
    RealClock clock;
    SeededRng rng(c.seed);
    FileHistory file(c.history_path);
    TrialHistory history(file, c.trial);
    RolePorts ports{clock, rng, stream, kv, orders, outbox, history, &table};
    run_role(c.role, c.actor, s, ports, Millis{c.barrier_timeout_ms});
    return 0;
}

}  // namespace relab
