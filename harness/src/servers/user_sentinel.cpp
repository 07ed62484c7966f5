#include "servers/user_sentinel.h"

#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "clients/redis_client.h"
#include "util/interrupt.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

bool same_server(const RedisEndpoint& a, const RedisEndpoint& b) { return a.host == b.host && a.port == b.port; }

std::string value_of(const std::map<std::string, std::string>& info, const std::string& name) {
    const auto it = info.find(name);
    return it == info.end() ? "" : it->second;
}

// "ip=127.0.0.1,port=6380,state=online,…" (INFO replication's slaveN) as the replica's endpoint,
// with the primary's password and database; nullopt unless it is online.
std::optional<RedisEndpoint> online_replica(const std::string& line, const RedisEndpoint& primary) {
    std::map<std::string, std::string> f;
    size_t from = 0;
    while (from < line.size()) {
        const size_t comma = line.find(',', from);
        const std::string part = line.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        if (const size_t eq = part.find('='); eq != std::string::npos) f[part.substr(0, eq)] = part.substr(eq + 1);
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    if (f["state"] != "online" || f["ip"].empty() || f["port"].empty()) return std::nullopt;
    RedisEndpoint out = primary;
    out.host = f["ip"];
    out.port = std::stoi(f["port"]);
    return out;
}

// One look at the topology: the pair if it is whole, else nullopt and `why` says what is missing.
std::optional<UserPair> look(const SentinelSet& sentinels, std::string& why) {
    try {
        const RedisEndpoint primary = sentinels.master_addr();
        RedisClient p(primary, milliseconds(1000));
        const auto info = info_section(p, "replication");
        if (value_of(info, "role") != "master") {
            why = fmt::format("the sentinels name {}, which answers role {}", primary.display(), value_of(info, "role"));
            return std::nullopt;
        }
        for (int i = 0; i < 16; ++i) {
            const auto replica = online_replica(value_of(info, fmt::format("slave{}", i)), primary);
            if (!replica) continue;
            RedisClient r(*replica, milliseconds(1000));
            if (value_of(info_section(r, "replication"), "master_link_status") != "up") continue;
            return UserPair{primary, *replica};
        }
        why = fmt::format("the primary {} has no online replica", primary.display());
    } catch (const std::runtime_error& e) {
        why = e.what();
    }
    return std::nullopt;
}

}  // namespace

UserPair wait_for_user_pair(const SentinelSet& sentinels, milliseconds timeout) {
    const auto deadline = SteadyClock::now() + timeout;
    std::string why;
    for (;;) {
        throw_if_interrupted();
        if (auto pair = look(sentinels, why)) {
            sentinels.wait_until_all_name(pair->primary, std::max(milliseconds(1000), timeout / 4));
            return *pair;
        }
        if (SteadyClock::now() >= deadline)
            throw EnvironmentError(fmt::format(
                "the failover lab needs a primary and a linked replica behind your Sentinel ('{}'), and after {} ms "
                "there are none ({}); after the lab's failover the demoted primary must resync from the promoted "
                "replica and report its link up",
                sentinels.master_name(), timeout.count(), why));
        std::this_thread::sleep_for(milliseconds(50));
    }
}

DetachedReplica::DetachedReplica(const RedisEndpoint& replica, const RedisEndpoint& primary)
    : m_replica(replica), m_primary(primary) {
    RedisClient c(replica, milliseconds(2000));
    c.call({"REPLICAOF", "127.0.0.1", "1"});
}

DetachedReplica::~DetachedReplica() { resume(); }

void DetachedReplica::resume() noexcept {
    if (m_attached) return;
    m_attached = true;
    try {
        RedisClient c(m_replica, milliseconds(2000));
        // Promoted meanwhile (a failover): it is a primary now, and stays one.
        if (c.call({"ROLE"}).elements.at(0).str != "slave") return;
        c.call({"REPLICAOF", m_primary.host, std::to_string(m_primary.port)});
    } catch (const std::exception&) {
        // Sentinel puts a replica with a wrong master back itself (+fix-slave-config).
    }
}

// SENTINEL FAILOVER on the first sentinel, asked again while it refuses: a sentinel refuses while
// its view of the replica is stale (NOGOODSLAVE) or a failover runs (INPROG).
void ask_failover(const SentinelSet& sentinels, SteadyClock::time_point deadline, const std::string& why) {
    for (std::string last;;) {
        try {
            RedisClient c(sentinels.endpoints().at(0), milliseconds(2000));
            c.call({"SENTINEL", "FAILOVER", sentinels.master_name()});
            return;
        } catch (const RedisError& e) {
            last = e.what();
        }
        if (SteadyClock::now() >= deadline)
            throw EnvironmentError(fmt::format("SENTINEL FAILOVER {} {} was refused: {}", sentinels.master_name(), why, last));
        std::this_thread::sleep_for(milliseconds(100));
    }
}

void force_failover(SentinelSet& sentinels, const RedisEndpoint& replica, milliseconds timeout) {
    const auto deadline = SteadyClock::now() + timeout;
    ask_failover(sentinels, deadline, "to promote the detached replica " + replica.display());
    for (std::string role;;) {
        try {
            RedisClient c(replica, milliseconds(1000));
            role = c.call({"ROLE"}).elements.at(0).str;
            if (role == "master") return;
        } catch (const RedisError& e) {
            role = e.what();
        }
        if (SteadyClock::now() >= deadline)
            throw EnvironmentError(fmt::format("the sentinels did not promote {} within {} ms of SENTINEL FAILOVER "
                                               "(it answers ROLE {})",
                                               replica.display(), timeout.count(), role));
        std::this_thread::sleep_for(milliseconds(10));
    }
}

void fail_back(SentinelSet& sentinels, const RedisEndpoint& original, milliseconds timeout) {
    const auto deadline = SteadyClock::now() + timeout;
    auto left = [&] { return std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now())); };
    const UserPair now = wait_for_user_pair(sentinels, left());
    if (same_server(now.primary, original)) return;
    if (!same_server(now.replica, original))
        throw EnvironmentError(fmt::format("cannot move the primary back to {}: the sentinels' replica is {}",
                                           original.display(), now.replica.display()));
    const auto asked = SteadyClock::now();
    ask_failover(sentinels, deadline, "to move the primary back to " + original.display());
    sentinels.wait_for_switch_master(now.primary, left(), asked);
    sentinels.wait_until_all_name(original, left());
    const UserPair back = wait_for_user_pair(sentinels, left());
    if (!same_server(back.primary, original))
        throw EnvironmentError(fmt::format("the sentinels name {} after moving the primary back to {}",
                                           back.primary.display(), original.display()));
}

}  // namespace relab
