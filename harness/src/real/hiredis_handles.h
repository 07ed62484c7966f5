// Owning handles of hiredis objects, for every file of the real layer that holds one.
#pragma once

#include <memory>

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

}  // namespace relab
