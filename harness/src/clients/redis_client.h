// RAII hiredis connection and the Stream/Kv ports over it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ports/ports.h"
#include "clients/endpoint.h"

namespace relab {

// A command failed: carries the command (arguments abbreviated), the key and the server's message.
// Its kind (KvError::Kind) says why: an error reply of the server (the default), no answer
// (RedisConnectionError), or a reply relab cannot read.
class RedisError : public KvError {
public:
    RedisError(std::string command, std::string key, std::string message, Kind kind = Kind::reply);
    const std::string& command() const { return m_command; }
    const std::string& key() const { return m_key; }
    const std::string& server_message() const { return m_message; }

private:
    std::string m_command, m_key, m_message;
};

// The connection is gone (refused, closed, timed out). After it the client refuses further calls.
class RedisConnectionError : public RedisError {
public:
    RedisConnectionError(std::string command, std::string key, std::string message)
        : RedisError(std::move(command), std::move(key), std::move(message), Kind::unavailable) {}
};

// The command as errors show it: few arguments, each cut short, secrets (AUTH, requirepass) masked.
std::string abbreviate_command(const std::vector<std::string>& argv);

// An owned copy of a hiredis reply.
struct RedisReply {
    enum class Type { nil, status, error, integer, string, array };
    Type type = Type::nil;
    std::string str;       // status, error, string
    long long integer = 0;
    std::vector<RedisReply> elements;
    bool is_nil() const { return type == Type::nil; }
    bool is_error() const { return type == Type::error; }
    std::string to_string() const;  // redis-cli style: (nil), (integer) 1, "abc", 1) ...
};

class RedisClient {
public:
    // Connects with the given timeout for connect and for every reply. AUTH and SELECT as the
    // endpoint says. Throws RedisConnectionError with the endpoint (password masked).
    RedisClient(const RedisEndpoint& ep, std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
    ~RedisClient();
    RedisClient(const RedisClient&) = delete;
    RedisClient& operator=(const RedisClient&) = delete;

    // The reply as it is, error replies included (scripted sessions expect some errors).
    RedisReply command(const std::vector<std::string>& argv);
    // As command(), but an error reply throws RedisError.
    RedisReply call(const std::vector<std::string>& argv);
    // Sends all commands in one write, then reads every reply. Error replies are returned.
    std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string>>& commands);
    void set_timeout(std::chrono::milliseconds timeout);  // zero: wait forever
    std::chrono::milliseconds timeout() const;
    const RedisEndpoint& endpoint() const;

    // Connects now (AUTH, SELECT) and keeps the connection for this process's next RedisClient of
    // the same endpoint, which takes it rather than connecting: what a role process the spawner
    // forks ahead of its trial does while the previous trial runs (process/role_spawner.h). A kept
    // connection the server has since written to (it closed it) is not taken. Throws as the
    // constructor does.
    static void open_ahead(const RedisEndpoint& ep);

private:
    struct Impl;
    static std::unique_ptr<Impl> take_ahead(const RedisEndpoint& ep);
    std::unique_ptr<Impl> m_impl;
};

// EXISTS's reply: true when the key exists. Any other reply, an error reply above all, throws
// RedisError (kind unexpected) naming the command: an error is never read as "absent".
bool exists_reply(const RedisReply& r, const std::vector<std::string>& argv);
// An error reply refusing a write under maxmemory (noeviction): "OOM command not allowed when
// used memory > 'maxmemory'." Any other reply, error or not, is not one.
bool is_oom_error(const RedisReply& r);

struct RedisFeatures {
    std::string version;     // "7.0.15"
    bool delex = false;      // DELEX key IFEQ value (8.4)
    bool xadd_idmp = false;  // XADD ... IDMP (8.6)
};
RedisFeatures detect_redis_features(RedisClient& c);

// The "name:value" lines of an INFO (or CLUSTER INFO) reply as a map; "# Section" headers skipped.
std::map<std::string, std::string> parse_info(const std::string& text);
// INFO <section>, parsed: one round trip for every field of the section.
std::map<std::string, std::string> info_section(RedisClient& c, const std::string& section);

// Logical key -> real key. Every key a run touches starts with prefix ("relab:<run>:t<trial>:").
struct RedisNamespace {
    std::string prefix;
    std::string key(const std::string& logical) const { return prefix + logical; }
};

// Deletes every key under a prefix (SCAN MATCH prefix* + UNLINK), never anything else.
void delete_keys_with_prefix(RedisClient& c, const std::string& prefix);

class RealStream : public Stream {
public:
    // client_name is set with CLIENT SETNAME so the start barrier can find blocked readers: every
    // reader of a trial is named "<barrier_prefix><actor>".
    RealStream(RedisClient& c, RedisNamespace ns, std::string barrier_prefix);
    std::vector<std::string> xadd(const std::string& stream, const std::vector<Fields>& batch) override;
    std::string xadd_idmp(const std::string& stream, const Fields& fields, const std::string& producer_id,
                          const std::string& iid) override;
    std::vector<StreamEntry> xreadgroup(const std::string& group, const std::string& consumer,
                                        const std::string& stream, int count, Millis block) override;
    std::vector<StreamEntry> xreadgroup_pending(const std::string& group, const std::string& consumer,
                                                const std::string& stream, int count, const std::string& after) override;
    AutoClaimed xautoclaim(const std::string& stream, const std::string& group, const std::string& consumer,
                           Millis min_idle, const std::string& start, int count) override;
    bool create_group(const std::string& stream, const std::string& group, const std::string& start) override;
    void xack(const std::string& stream, const std::string& group, const std::string& id) override;
    void xack_all(const std::string& stream, const std::string& group, const std::vector<std::string>& ids) override;
    std::vector<StreamEntry> xrange(const std::string& stream) override;
    bool group_drained(const std::string& stream, const std::string& group) override;
    void wait_readers_blocked(int readers, Millis timeout) override;
    // Blocked XREADGROUPs on this server by connections named "<barrier_prefix>...": the barrier's count.
    int blocked_readers();

private:
    // The group's delivery count of each entry (XPENDING over their ID range).
    void fill_deliveries(const std::string& key, const std::string& group, std::vector<StreamEntry>& entries);
    RedisClient& m_client;
    RedisNamespace m_ns;
    std::string m_barrier_prefix;
    std::string m_client_name;  // set by the first xreadgroup
};

class RealKv : public Kv {
public:
    RealKv(RedisClient& c, RedisNamespace ns, bool use_delex);
    bool set_nx_px(const std::string& key, const std::string& value, Millis ttl) override;
    int64_t delete_if_equals(const std::string& key, const std::string& token) override;
    std::string delete_if_equals_method() const override;
    bool exists(const std::string& key) override;
    KvSetResult set(const std::string& key, const std::string& value, const KvSetOptions& o) override;
    std::optional<std::string> get(const std::string& key) override;
    int64_t del(const std::string& key) override;
    int64_t wait_replicas(int64_t replicas, Millis timeout) override;

private:
    RedisClient& m_client;
    RedisNamespace m_ns;
    bool m_use_delex;
};

// SET's arguments after the value, as sent: "NX", "GET", "EX", "60" ... (EX when the ttl is whole
// seconds, PX otherwise).
std::vector<std::string> set_option_args(const KvSetOptions& o);

// The standard compare-and-delete script used where DELEX is missing.
extern const char* const kCompareAndDeleteScript;

}  // namespace relab
