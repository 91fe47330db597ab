// A PNG decoder just big enough for the browser test's screenshots: 8-bit
// RGB or RGBA, not interlaced (what headless Chromium writes). zlib inflates
// the IDAT stream; the five row filters are undone here. Enough to count
// colours and find a chart's fill in a screenshot.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace npuperf::report::testing {

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint32_t> pixels;  // 0xRRGGBB, row-major
  std::string error;             // empty when decoded
};

inline uint32_t BigEndian32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) |
         (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) |
         uint32_t{static_cast<uint8_t>(s[at + 3])};
}

inline int Paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

// Undoes the row filters of `raw` in place: rows of 1 + stride bytes.
inline bool Unfilter(std::vector<uint8_t>& raw, size_t stride, size_t bpp, uint32_t height) {
  for (uint32_t y = 0; y < height; ++y) {
    uint8_t* row = raw.data() + y * (stride + 1);
    const uint8_t* prev = y == 0 ? nullptr : row - (stride + 1);
    const uint8_t filter = row[0];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= bpp ? row[1 + x - bpp] : 0;
      const int b = prev != nullptr ? prev[1 + x] : 0;
      const int c = prev != nullptr && x >= bpp ? prev[1 + x - bpp] : 0;
      int add = 0;
      switch (filter) {
        case 0: break;
        case 1: add = a; break;
        case 2: add = b; break;
        case 3: add = (a + b) / 2; break;
        case 4: add = Paeth(a, b, c); break;
        default: return false;
      }
      row[1 + x] = static_cast<uint8_t>(row[1 + x] + add);
    }
  }
  return true;
}

inline Image DecodePng(const std::string& png) {
  Image img;
  if (png.size() < 33 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0)
    return {0, 0, {}, "not a PNG"};
  std::string idat;
  int color_type = -1;
  for (size_t at = 8; at + 12 <= png.size();) {
    const uint32_t len = BigEndian32(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (at + 12 + len > png.size()) return {0, 0, {}, "truncated chunk " + type};
    if (type == "IHDR") {
      img.width = BigEndian32(png, at + 8);
      img.height = BigEndian32(png, at + 12);
      color_type = static_cast<uint8_t>(png[at + 17]);
      if (png[at + 16] != 8 || png[at + 20] != 0) return {0, 0, {}, "not 8-bit, or interlaced"};
    }
    if (type == "IDAT") idat += png.substr(at + 8, len);
    at += 12 + len;
  }
  const size_t bpp = color_type == 6 ? 4 : color_type == 2 ? 3 : 0;
  if (bpp == 0 || img.width == 0 || img.height == 0) return {0, 0, {}, "not RGB or RGBA"};
  const size_t stride = img.width * bpp;
  std::vector<uint8_t> raw((stride + 1) * img.height);
  uLongf size = raw.size();
  if (uncompress(raw.data(), &size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
          Z_OK ||
      size != raw.size() || !Unfilter(raw, stride, bpp, img.height)) {
    return {0, 0, {}, "bad IDAT stream"};
  }
  img.pixels.reserve(size_t{img.width} * img.height);
  for (uint32_t y = 0; y < img.height; ++y) {
    const uint8_t* row = raw.data() + y * (stride + 1) + 1;
    for (uint32_t x = 0; x < img.width; ++x) {
      const uint8_t* p = row + x * bpp;
      img.pixels.push_back((uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2]);
    }
  }
  return img;
}

}  // namespace npuperf::report::testing
