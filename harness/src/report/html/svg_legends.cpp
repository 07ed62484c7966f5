// The page's small SVGs: the legends under which its timelines are read, and a simulated wrong
// rate's interval.
#include <sstream>

#include <fmt/format.h>

#include "report/html/html_parts.h"

namespace relab::html {

void write_legend(std::ostream& out) {
    out << R"(<p class="legend"><svg width="760" height="20" viewBox="0 0 760 20" role="img" aria-label="legend">)"
        << R"~(<defs><pattern id="hatch-legend" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fdf3dc"/><rect width="2.5" height="6" fill="#e0a526"/></pattern></defs>)~"
        << R"(<rect x="2" y="4" width="26" height="12" rx="2" fill="#3b78c4"/><text x="33" y="14" font-size="11">job</text>)"
        << R"~(<rect x="62" y="4" width="26" height="12" rx="2" fill="url(#hatch-legend)" stroke="#b7791f" stroke-dasharray="4 2"/><text x="93" y="14" font-size="11">waiting for the lock</text>)~"
        << R"(<rect x="212" y="4" width="26" height="12" rx="2" fill="#d62728"/><text x="243" y="14" font-size="11">overwrote a newer state</text>)"
        << R"(<circle cx="392" cy="10" r="4.5" fill="#fff" stroke="#1f4f8f" stroke-width="2"/><text x="401" y="14" font-size="11">receive</text>)"
        << R"(<rect x="455" y="5.5" width="9" height="9" fill="#2e8b3e"/><text x="468" y="14" font-size="11">lock</text>)"
        << R"(<rect x="500" y="5.5" width="9" height="9" fill="#fff" stroke="#2e8b3e" stroke-width="2"/><text x="513" y="14" font-size="11">release</text>)"
        << R"(<polygon points="566,3 573,10 566,17 559,10" fill="#1d2330"/><text x="578" y="14" font-size="11">write</text>)"
        << R"(<polygon points="618,15 629,15 623.5,4" fill="#2e8b3e"/><text x="633" y="14" font-size="11">publish</text>)"
        << R"(<path d="M683,5 L693,15 M683,15 L693,5" stroke="#d62728" stroke-width="2.5"/><text x="697" y="14" font-size="11">failed</text>)"
        << "</svg></p>\n";
}

// The idempotency labs' timelines: a bar per request (send → answer), coloured by the answer.
void write_idem_legend(std::ostream& out) {
    struct Swatch {
        const char* colour;
        const char* text;
        double width;
    };
    const Swatch swatches[] = {{"#3b78c4", "201 created", 80},    {"#2e8b3e", "replay", 58},
                               {"#c98a12", "409", 38},            {"#8e44ad", "422", 38},
                               {"#6e7781", "5xx", 38},            {"#138d90", "layer 4 refused", 104},
                               {"#d62728", "duplicate order / leak", 150}};
    std::ostringstream items;
    double x = 2;
    for (const auto& sw : swatches) {
        items << fmt::format(R"(<rect x="{}" y="4" width="22" height="12" rx="2" fill="{}"/><text x="{}" y="14" font-size="11">{}</text>)",
                           num(x), sw.colour, num(x + 27), sw.text);
        x += 27 + sw.width;
    }
    items << fmt::format(R"(<circle cx="{}" cy="10" r="3.5" fill="#fff" stroke="#1d2330" stroke-width="1.5"/><text x="{}" y="14" font-size="11">send</text>)",
                       num(x + 4), num(x + 12));
    x += 50;
    items << fmt::format(R"(<circle cx="{}" cy="10" r="4" fill="#1d2330"/><text x="{}" y="14" font-size="11">answer</text>)",
                       num(x + 4), num(x + 12));
    x += 62;
    items << fmt::format(R"(<polygon points="{0},3 {1},10 {0},17 {2},10" fill="#1d2330"/><text x="{3}" y="14" font-size="11">order</text>)",
                       num(x + 7), num(x + 14), num(x), num(x + 18));
    x += 58;
    items << fmt::format(R"(<polygon points="{},4 {},4 {},16" fill="#e8590c"/><text x="{}" y="14" font-size="11">fault</text>)",
                       num(x), num(x + 12), num(x + 6), num(x + 16));
    x += 50;
    out << fmt::format(R"(<p class="legend idem">idempotency labs: <svg width="{0}" height="20" viewBox="0 0 {0} 20" role="img" aria-label="legend of the idempotency labs">)",
                       num(x))
        << items.str() << "</svg></p>\n";
}

void write_rate_interval(const LabResult& lab, std::ostream& out) {
    constexpr double w = 320, left = 28, right = 40, y = 10;
    auto px = [&](double rate) { return left + rate * (w - left - right); };
    out << fmt::format(R"(<svg class="ci" width="{0}" height="26" viewBox="0 0 {0} 26" role="img" aria-label="wrong rate {1:.1f}%, 95% CI {2:.1f}–{3:.1f}%">)",
                       num(w), 100 * lab.wrong_rate, 100 * lab.wrong_rate_low, 100 * lab.wrong_rate_high);
    out << fmt::format(R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#9aa3b0"/>)", num(px(0)), num(px(1)), num(y));
    for (const double tick : {0.0, 0.25, 0.5, 0.75, 1.0})
        out << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#9aa3b0"/>)", num(px(tick)), num(y - 3),
                           num(y + 3));
    out << fmt::format(R"(<rect class="interval" x="{}" y="{}" width="{}" height="8" fill="#f3b4ae" stroke="#c62828"/>)",
                       num(px(lab.wrong_rate_low)), num(y - 4),
                       num(std::max(px(lab.wrong_rate_high) - px(lab.wrong_rate_low), 1.5)));
    out << fmt::format(R"(<line class="rate" x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#c62828" stroke-width="2.5"/>)",
                       num(px(lab.wrong_rate)), num(y - 7), num(y + 7));
    out << fmt::format(R"(<text class="tick" x="{}" y="24" text-anchor="middle">0%</text><text class="tick" x="{}" y="24" text-anchor="middle">50%</text><text class="tick" x="{}" y="24" text-anchor="middle">100%</text>)",
                       num(px(0)), num(px(0.5)), num(px(1)));
    out << "</svg>";
}

}  // namespace relab::html
