// Every phrase the text report prints, once per language: the stream labs' timelines and the
// parts every lab shares (TextWords), the idempotency labs' and the Redis transcripts' (IdemWords).
#pragma once

#include "report/reporter.h"

namespace relab {

// The stream labs' phrases, and those of the parts every lab shares.
struct TextWords {
    const char* trial;
    const char* empty_stream;
    const char* received;
    const char* got_lock;  // key, ttl, attempts
    const char* wrote;
    const char* stale;
    const char* released;
    const char* lock_expired;
    const char* failed;
    const char* blip;
    const char* retry_in;       // ms
    const char* retry_again;    // ms
    const char* no_retry;
    const char* final_status;
    const char* no_row;
    const char* wrong_state;    // expected, wrong, total
    const char* documented;
    const char* expectation;
    const char* held;
    const char* broken;
    const char* lock_release;
    const char* delex_needs;
    const char* delivery;       // p50, max, samples
    const char* skipped;
    const char* wrong_cases;    // wrong, total
    const char* buffer_hold;    // entry, event, waiting_for
    const char* buffer_in_order;  // entry, event, held_ms
    const char* buffer_gap;     // entry, event, held_ms, skipped versions
    const char* late;           // entry, event, last applied, what it did
    const char* late_drop;
    const char* late_apply;
    const char* dispatch_key;     // entry, event, key, ahead
    const char* dispatch_shared;  // entry, event, ahead
    const char* take;             // entry, event, waited ms
    const char* throughput;       // jobs, span ms, jobs/s, min, max, trials
    const char* beside;           // name, its jobs/s, its trials, the lab's over it
    const char* batch_ack;        // entries, first entry, last entry
    const char* batch_ack_one;    // entry: a read of one entry
    const char* batch_commit;     // writes: write.commit "batch", the writes of the one transaction
    const char* serialization;    // entry, event, isolation, attempt, snapshot version
    const char* serialization_retry;
    const char* serialization_gave_up;
};

const TextWords& text_words(Lang lang);

struct IdemWords {
    const char* article;        // "article:"
    const char* why;            // "why:"
    const char* projection;     // "× {keys} ({label}) = {bytes}"
    const char* trial;
    const char* counts;         // per trial / total
    const char* total;
    const char* measured_title;
    const char* scaling;
    const char* no_answer;
    const char* more_trials;
};

const IdemWords& idem_words(Lang lang);

}  // namespace relab
