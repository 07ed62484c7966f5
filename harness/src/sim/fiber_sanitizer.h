// The sanitizers' view of a fiber switch. AddressSanitizer must be told which stack is live
// (__sanitizer_start_switch_fiber before a jump, __sanitizer_finish_switch_fiber after it), or its
// reports stop at the first frame on a fiber's stack and an exception thrown there leaves that
// stack poisoned; ThreadSanitizer must be told which fiber's history the code that follows belongs
// to (__tsan_switch_to_fiber), or its shadow call stacks mix. In a build without them every
// function here is empty and inlined away.
#pragma once

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RELAB_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define RELAB_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(RELAB_ASAN)
#define RELAB_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(RELAB_TSAN)
#define RELAB_TSAN 1
#endif

#if defined(RELAB_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(RELAB_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace relab::sim::sanitizer {

// ASan: the stack about to run is [bottom, bottom + size). `fake_stack` keeps the leaving stack's
// fake frames (detect_stack_use_after_return) for its return; null when that stack is done for good.
inline void leaving_stack(void** fake_stack, const void* bottom, size_t size) {
#if defined(RELAB_ASAN)
    __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#else
    (void)fake_stack, (void)bottom, (void)size;
#endif
}

// ASan, on the stack just arrived on: `fake_stack` is what leaving_stack saved for it (null on a
// fresh stack); the stack left behind is written to *from_bottom and *from_size when asked.
inline void arrived_on_stack(void* fake_stack, const void** from_bottom, size_t* from_size) {
#if defined(RELAB_ASAN)
    __sanitizer_finish_switch_fiber(fake_stack, from_bottom, from_size);
#else
    (void)fake_stack, (void)from_bottom, (void)from_size;
#endif
}

// TSan: the fiber this thread runs now (the thread itself outside any fiber), a new one, the end of one.
inline void* current_fiber() {
#if defined(RELAB_TSAN)
    return __tsan_get_current_fiber();
#else
    return nullptr;
#endif
}
inline void* create_fiber() {
#if defined(RELAB_TSAN)
    return __tsan_create_fiber(0);
#else
    return nullptr;
#endif
}
inline void destroy_fiber(void* fiber) {
#if defined(RELAB_TSAN)
    if (fiber) __tsan_destroy_fiber(fiber);
#else
    (void)fiber;
#endif
}
// TSan: what runs from here on is `fiber`'s; the switch orders everything before it before everything after.
inline void switch_to(void* fiber) {
#if defined(RELAB_TSAN)
    __tsan_switch_to_fiber(fiber, 0);
#else
    (void)fiber;
#endif
}

}  // namespace relab::sim::sanitizer
