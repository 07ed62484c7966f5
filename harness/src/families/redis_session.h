// One Redis session of a scripted case: redis-cli commands with their expected replies (article
// 002's transcripts). Keys are found with COMMAND GETKEYS on the server itself and moved under the
// case's prefix, so a session touches nothing else even on a server relab did not start; the
// transcript shows them without it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "check/outcome.h"
#include "clients/redis_client.h"
#include "scenario/scenario.h"

namespace relab {

struct RedisSessionTarget {
    RedisEndpoint endpoint;
    std::string prefix;       // every key of the case starts with it; "" only on a server relab started
    bool own_server = false;  // relab started the server: commands of the @dangerous category allowed
};

class RedisSession {
public:
    explicit RedisSession(const RedisSessionTarget& t);
    ~RedisSession();
    RedisSession(const RedisSession&) = delete;
    RedisSession& operator=(const RedisSession&) = delete;

    // Runs the step and checks its expectations; never throws for a server's error reply.
    StepOutcome run(const std::string& session, const RedisStep& step);
    // DEL of every key the session's commands named (their real names). Never throws.
    void remove_touched_keys() noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// "{pad:N}" inside an argument becomes N 'x' (a 200 KB body without 200 KB of scenario file).
std::string expand_pads(const std::string& arg);
// An argument as a shell would take it for redis-cli: bare when plain, else in single quotes;
// a pad is shown as <N bytes of x>.
std::string display_arg(const std::string& arg);
std::string display_command(const std::vector<std::string>& argv);
// Where `keys` (COMMAND GETKEYS's answer, in argument order) sit in argv: matched left to right
// from argv[1]. Throws std::runtime_error if a key is not found.
std::vector<size_t> key_positions(const std::vector<std::string>& argv, const std::vector<std::string>& keys);
// The reply with every occurrence of prefix removed from its strings.
RedisReply without_prefix(RedisReply r, const std::string& prefix);
// Why the reply does not meet the step's expectations; empty when it does.
std::string check_redis_reply(const RedisStep& step, const RedisReply& reply);

}  // namespace relab
