#include "sim/format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace npuperf::sim {

std::string Shortest3(double x) {
  double r = std::round(x * 1000.0) / 1000.0;
  if (r == 0) r = 0;  // no "-0.0"
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), r);
  std::string out(buf, res.ptr);
  if (out.find('e') != std::string::npos) return Fixed(r, 3);
  if (out.find('.') == std::string::npos) out += ".0";
  return out;
}

std::string Fixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, x);
  return buf;
}

std::string Integer(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f", std::round(x));
  return buf;
}

std::string Short3(double x) {
  std::string s = Shortest3(x);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

}  // namespace npuperf::sim
