#include "report/text/text_words.h"

namespace relab {

namespace {

constexpr TextWords k_text_en{
    "trial",
    "(empty)",
    "received",
    "got {} (SET NX PX {}) after {} attempt(s)",
    "wrote",
    "(skipped: stale)",
    "released lock:",
    "(lock expired, no longer ours)",
    "FAILED",
    "(simulated network blip)",
    "→ retry in {} ms",
    "→ retry in another {} ms",
    "→ no retry scheduled",
    "final status per trial:",
    "(no row)",
    "→ wrong final state (not {}): {}/{}",
    "documented:",
    "expectation:",
    "held",
    "BROKEN",
    "lock release:",
    "(DELEX needs Redis 8.4)",
    "delivery XADD → receipt: p50 {} ms, max {} ms ({} samples)",
    "skipped:",
    "→ cases with a wrong final row: {}/{}",
    "holds {} {} in its reorder buffer (waiting for v={})",
    "lets {} {} through in order (held {} ms)",
    "lets {} {} through after {} ms: gave up waiting for v={}",
    "got {} {} late (v={} already applied) → {}",
    "dropped (acknowledged, never applied)",
    "applied anyway",
    "puts {} {} on #{}'s FIFO ({} before it)",
    "puts {} {} on the shared FIFO ({} waiting before it)",
    "takes {} {} (waited {} ms)",
    "throughput: {} jobs written by {} ms = {} jobs/s (median of {} trial(s); min {}, max {})",
    "beside it, {} on the same workload in the same run: {} jobs/s (median of {} trial(s)); this lab's is {}x it",
    "acknowledged {} entries with one XACK ({} … {})",
    "acknowledged {} (the read's only entry)",
    "(one transaction of {} writes)",
    "'s transaction for {} {} ({}, try {}, snapshot v={}) refused: 40001 could not serialize, rolled back",
    "→ runs it again",
    "→ gives up: acknowledges it unwritten",
};

constexpr TextWords k_text_vi{
    "lần",
    "(trống)",
    "nhận",
    "lấy được {} (SET NX PX {}) sau {} lần thử",
    "ghi",
    "(bỏ qua: bản cũ)",
    "nhả lock:",
    "(lock đã hết hạn, không còn là của mình)",
    "LỖI",
    "(giả lập network blip)",
    "→ hẹn retry sau {} ms",
    "→ hẹn retry sau {} ms nữa",
    "→ không hẹn retry nữa",
    "status cuối từng lần:",
    "(không có dòng)",
    "→ SAI trạng thái cuối (không phải {}): {}/{} lần",
    "bài viết:",
    "kỳ vọng:",
    "đạt",
    "KHÔNG ĐẠT",
    "nhả lock bằng:",
    "(DELEX cần Redis 8.4)",
    "thời gian giao XADD → nhận: p50 {} ms, max {} ms ({} mẫu)",
    "bỏ qua:",
    "→ số trường hợp có dòng cuối SAI: {}/{}",
    "giữ {} {} trong reorder buffer (chờ v={})",
    "cho {} {} đi tiếp đúng thứ tự (đã giữ {} ms)",
    "cho {} {} đi tiếp sau {} ms: thôi chờ v={}",
    "nhận {} {} muộn (đã áp v={}) → {}",
    "bỏ đi (ACK, không áp)",
    "vẫn áp",
    "đưa {} {} vào hàng FIFO của #{} ({} việc đứng trước)",
    "đưa {} {} vào hàng FIFO chung ({} việc đứng trước)",
    "lấy {} {} (đã chờ {} ms)",
    "throughput: {} job ghi xong lúc {} ms = {} job/giây (trung vị {} lần; min {}, max {})",
    "bên cạnh, {} trên cùng workload trong cùng lần chạy: {} job/giây (trung vị {} lần); lab này gấp {} lần",
    "ACK {} entry bằng một lệnh XACK ({} … {})",
    "ACK {} (entry duy nhất của lần đọc)",
    "(một transaction gồm {} lệnh ghi)",
    ": transaction cho {} {} ({}, lần {}, snapshot v={}) bị từ chối: 40001 could not serialize, đã rollback",
    "→ chạy lại",
    "→ bỏ cuộc: ACK mà không ghi",
};

constexpr IdemWords k_idem_en{"article:", "why:", "× {} ({}) = {}", "trial",
                              "orders {} (duplicates {}) | 201: {} | replays: {} | 409: {} | 422: {} | layer 4 caught: {} | "
                              "5xx: {} | leaks: {} | sends: {}",
                              "all trials", "measured on this machine, beside the article:", "time scale:",
                              "(no answer: the client process was killed)", "… ({} more trials, counted in the total)"};
constexpr IdemWords k_idem_vi{"bài viết:", "vì sao:", "× {} ({}) = {}", "lần",
                              "đơn {} (trùng {}) | 201: {} | replay: {} | 409: {} | 422: {} | tầng 4 chặn: {} | "
                              "5xx: {} | lộ dữ liệu: {} | số request: {}",
                              "mọi lần", "đo trên máy này, bên cạnh số của bài viết:", "tỉ lệ thời gian:",
                              "(không có phản hồi: process client bị kill)", "… (thêm {} lần, đã cộng vào tổng)"};

}  // namespace

const TextWords& text_words(Lang lang) { return lang == Lang::vi ? k_text_vi : k_text_en; }

const IdemWords& idem_words(Lang lang) { return lang == Lang::vi ? k_idem_vi : k_idem_en; }

}  // namespace relab
