// Just enough PNG decoding to look at a browser screenshot: 8-bit RGB or RGBA, not interlaced
// (what Chromium writes). Throws std::runtime_error on anything else, so a test fails loudly
// rather than passing on an image it could not read.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace relab::test {

struct Rgb {
    uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
};

struct PngImage {
    uint32_t width = 0;
    uint32_t height = 0;
    std::vector<Rgb> pixels;  // row by row, alpha dropped
    const Rgb& at(uint32_t x, uint32_t y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

inline uint32_t png_be32(const unsigned char* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

inline PngImage decode_png(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open");
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    if (bytes.size() < 8 || !std::equal(signature, signature + 8, p)) throw std::runtime_error(path + ": not a PNG");

    PngImage img;
    int channels = 0;
    std::string idat;
    for (size_t at = 8; at + 12 <= bytes.size();) {
        const uint32_t len = png_be32(p + at);
        const std::string type = bytes.substr(at + 4, 4);
        if (at + 12 + len > bytes.size()) throw std::runtime_error(path + ": truncated chunk " + type);
        const unsigned char* data = p + at + 8;
        if (type == "IHDR") {
            img.width = png_be32(data);
            img.height = png_be32(data + 4);
            const int depth = data[8], colour = data[9], interlace = data[12];
            if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
                throw std::runtime_error(path + ": unsupported PNG (depth " + std::to_string(depth) + ", colour type " +
                                         std::to_string(colour) + ", interlace " + std::to_string(interlace) + ")");
            channels = colour == 6 ? 4 : 3;
        } else if (type == "IDAT") {
            idat.append(reinterpret_cast<const char*>(data), len);
        } else if (type == "IEND") {
            break;
        }
        at += 12 + len;
    }
    if (channels == 0 || img.width == 0 || img.height == 0) throw std::runtime_error(path + ": no IHDR");

    const size_t stride = static_cast<size_t>(img.width) * channels;
    std::vector<unsigned char> raw((stride + 1) * img.height);
    uLongf raw_len = raw.size();
    if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
        raw_len != raw.size())
        throw std::runtime_error(path + ": cannot inflate the image data");

    // Undo the per-row filters (PNG spec, section 9).
    std::vector<unsigned char> prev(stride, 0), row(stride);
    img.pixels.reserve(static_cast<size_t>(img.width) * img.height);
    for (uint32_t y = 0; y < img.height; ++y) {
        const unsigned char* src = raw.data() + y * (stride + 1);
        const int filter = src[0];
        for (size_t i = 0; i < stride; ++i) {
            const int a = i >= static_cast<size_t>(channels) ? row[i - channels] : 0;
            const int b = prev[i];
            const int c = i >= static_cast<size_t>(channels) ? prev[i - channels] : 0;
            int predictor = 0;
            switch (filter) {
                case 0: predictor = 0; break;
                case 1: predictor = a; break;
                case 2: predictor = b; break;
                case 3: predictor = (a + b) / 2; break;
                case 4: {
                    const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
                    predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
                    break;
                }
                default: throw std::runtime_error(path + ": bad filter type " + std::to_string(filter));
            }
            row[i] = static_cast<unsigned char>(src[1 + i] + predictor);
        }
        for (uint32_t x = 0; x < img.width; ++x) {
            const unsigned char* px = row.data() + static_cast<size_t>(x) * channels;
            img.pixels.push_back(Rgb{px[0], px[1], px[2]});
        }
        std::swap(prev, row);
    }
    return img;
}

}  // namespace relab::test
