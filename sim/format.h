#pragma once

#include <string>

namespace npuperf::sim {

// Cell formats msprof uses (msprof-output.md §3.2).

// ROUND(x, 3) printed in shortest form with at least one decimal:
// 0.0, 0.21, 12.716, 79569.043.
std::string Shortest3(double x);

// Fixed number of decimals: Fixed(96.16, 3) == "96.160".
std::string Fixed(double x, int decimals);

// Nearest integer: 1193021.
std::string Integer(double x);

// api_statistic style: rounded to 3 decimals, no trailing zeros, "0" for zero: 1.92, 7.807, 0.
std::string Short3(double x);

}  // namespace npuperf::sim
