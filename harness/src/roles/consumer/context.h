// What every part of a consumer shares: its lab's settings, its actor and the name the group
// knows it by, its ports, the stream it reads, how it records a step and how it rides out a
// server error. Each part of a consumer holds a reference to one; roles/consumer.cpp composes the
// parts into the consumer and the reaper.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ports/ports.h"
#include "roles/role_settings.h"

namespace relab {

// A consumer's whole job for an entry ([lock], the job and its write, [dead-lettering], XACK), as
// the consumer composes it for the parts that hand entries on (the reorder buffer, S3's workers).
class JobRunner {
public:
    virtual ~JobRunner() = default;
    // False when the job failed and the entry stays pending.
    virtual bool run_job(const StreamEntry& entry, const Event& ev) = 0;
};

class ConsumerContext {
public:
    ConsumerContext(const RoleSettings& s, const std::string& actor, RolePorts& p);

    const RoleSettings& settings() const { return m_s; }
    RolePorts& ports() const { return m_p; }
    const std::string& actor() const { return m_actor; }
    // Its consumer name in the group: the actor, or per process (name_per_process).
    const std::string& name() const { return m_name; }
    // The stream it reads: S2's consumer Ck reads shard k-1's stream alone; any other, the lab's stream.
    const std::string& key() const { return m_key; }

    // recovery.consumer_name "per_process": the name it reads under in the group is its actor and
    // an ID drawn when the process starts, as a pod-named consumer's is: a restart is a new name.
    void name_per_process();

    // The entry and the event a record names go in the record's names (HistoryRecord::names):
    // no JSON object built per record for them.
    void record(Op op, nlohmann::json data, const std::string& entry = {}, const Event* ev = nullptr) const;

    // Called in the handler of `e`. A Redis error in a lab that schedules a Redis fault: recorded,
    // and the consumer goes on as a real one does (a new connection on its next call); with
    // recovery.recreate_group a vanished group (NOGROUP) is created again from the stream's start.
    // Anywhere else it is rethrown and ends the role.
    void ride_out(const KvError& e) const;

    // Runs f, a store call. In a lab that faults its PostgreSQL, a call that finds no database is
    // recorded and tried again on a new connection until it gets through, as a worker's retry loop
    // does (the entry stays unacknowledged meanwhile); anywhere else it ends the role.
    template <class F>
    auto with_store_retry(F f) const -> decltype(f()) {
        for (;;) {
            try {
                return f();
            } catch (const StoreUnavailable& e) {
                if (!m_s.postgres_faults_scheduled) throw;
                store_unavailable(e);
            }
        }
    }

private:
    void store_unavailable(const StoreUnavailable& e) const;

    const RoleSettings& m_s;
    RolePorts& m_p;
    std::string m_actor;
    std::string m_name;
    std::string m_key;
};

}  // namespace relab
