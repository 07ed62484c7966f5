#include "backend_real/idem_keys.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "roles/idem_client.h"

namespace relab {

bool IdemKeys::clients_ready(const std::vector<std::string>& actors) {
    std::vector<std::string> keys;
    for (const auto& a : actors) keys.push_back(kIdemReadyKey + a);
    return present(keys).size() == keys.size();
}

void IdemKeys::go(Nanos origin) {
    m_connections.admin().call({"SET", m_ns.key(kIdemGoKey), std::to_string(origin.count())});
}

// One EXISTS each, in one pipeline. An error reply throws (exists_reply): it never counts as absent.
std::vector<std::string> IdemKeys::present(const std::vector<std::string>& keys) {
    std::vector<std::vector<std::string>> commands;
    for (const auto& k : keys) commands.push_back({"EXISTS", m_ns.key(k)});
    const std::vector<RedisReply> replies = m_connections.admin().pipeline(commands);
    std::vector<std::string> out;
    for (size_t i = 0; i < keys.size(); ++i)
        if (exists_reply(replies[i], commands[i])) out.push_back(keys[i]);
    return out;
}

int64_t IdemKeys::pttl_ms(const std::string& key) {
    return m_connections.admin().call({"PTTL", m_ns.key(key)}).integer;
}

void IdemKeys::prepare_flags() {
    for (const auto& f : m_env.s.faults)
        if (!f.name.empty()) m_connections.admin().call({"SET", m_ns.key(kIdemFaultDoneKey + f.name + ":ready"), "1"});
}

// Under maxmemory-policy noeviction a SET is refused with OOM once a flood has filled the server,
// but RENAME (not a "denyoom" command) is not: the flag written ahead is renamed into place.
void IdemKeys::raise_flag(const std::string& name) {
    const std::string key = m_ns.key(kIdemFaultDoneKey + name);
    const RedisReply r = m_connections.admin().command({"SET", key, "1"});
    if (is_oom_error(r)) {
        const RedisReply renamed = m_connections.admin().command({"RENAME", key + ":ready", key});
        if (renamed.is_error())
            throw HarnessError(fmt::format("the server refused the fault flag {} (OOM) and the flag prepared before "
                                           "the lab was gone: {}",
                                           key, renamed.str));
    } else if (r.is_error()) {
        throw HarnessError(fmt::format("SET {}: {}", key, r.str));
    }
    if (std::find(m_raised_flags.begin(), m_raised_flags.end(), name) == m_raised_flags.end())
        m_raised_flags.push_back(name);
}

void IdemKeys::refresh_flags() {
    if (m_raised_flags.empty()) return;
    const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
    if (now - m_flags_written_ns < 20'000'000) return;
    m_flags_written_ns = now;
    for (const auto& name : m_raised_flags) {
        try {
            (void)m_connections.admin().command({"SET", m_ns.key(kIdemFaultDoneKey + name), "1"});
        } catch (const std::exception&) {
            m_connections.drop_admin();
        }
    }
}

}  // namespace relab
