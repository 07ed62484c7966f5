// Owning handles of hiredis objects, for every file of the real layer that holds one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <hiredis/hiredis.h>

namespace relab {

struct RedisContextFree {
    void operator()(redisContext* c) const noexcept {
        if (c) redisFree(c);
    }
};
using RedisContextPtr = std::unique_ptr<redisContext, RedisContextFree>;

struct RedisReplyFree {
    void operator()(redisReply* r) const noexcept {
        if (r) freeReplyObject(r);
    }
};
using RedisReplyPtr = std::unique_ptr<redisReply, RedisReplyFree>;

// One command on a blocking context, every argument binary-safe: its reply (an error reply too),
// or nullptr when the connection failed (ctx->errstr says why).
inline RedisReplyPtr command_argv(redisContext* ctx, const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
    }
    return RedisReplyPtr(
        static_cast<redisReply*>(redisCommandArgv(ctx, static_cast<int>(argv.size()), argv.data(), lens.data())));
}

}  // namespace relab
