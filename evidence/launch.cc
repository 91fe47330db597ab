#include "evidence/launch.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "absl/strings/numbers.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;

constexpr char kForms[] = "--launch unique|all|N|-N|task:STREAM/TASK";

std::string Id(const std::optional<int64_t>& v) { return v ? Cat(*v) : std::string("N/A"); }

std::string Us(double v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  return buf;
}

std::string Start(const LaunchInfo& l) {
  if (l.start_ns) return FormatNsAsMicros(*l.start_ns) + " us";
  return l.start_us ? Us(*l.start_us) + " us" : std::string("N/A");
}

std::string OneLine(const LaunchInfo& l) {
  return Cat("  #", l.index, " stream ", Id(l.stream_id), " task ", Id(l.task_id), " start ",
             Start(l), " duration ", Us(l.duration_us), " us (", l.where, ")");
}

// The bounded listing of a long launch list: first and last kListEnds, the
// fastest and the slowest, the total.
std::string BoundedList(const std::vector<LaunchInfo>& l) {
  std::string out = Cat("  ", l.size(), " launches; the first and last ", kListEnds, ":");
  for (size_t i = 0; i < kListEnds; ++i) out += Cat("\n", OneLine(l[i]));
  out += Cat("\n  ... ", l.size() - 2 * kListEnds, " more ...");
  for (size_t i = l.size() - kListEnds; i < l.size(); ++i) out += Cat("\n", OneLine(l[i]));
  auto [lo, hi] = std::minmax_element(l.begin(), l.end(), [](const auto& a, const auto& b) {
    return a.duration_us < b.duration_us;
  });
  out += Cat("\n  fastest:\n", OneLine(*lo), "\n  slowest:\n", OneLine(*hi));
  out += "\n  (every launch: npuperf list-op-names <dir> --launches-of <op name>)";
  return out;
}

bool ParseInt(std::string_view s, int64_t* out) {
  return !s.empty() && absl::SimpleAtoi(internal::ToAbsl(s), out);
}

}  // namespace

absl::StatusOr<LaunchSelector> ParseLaunchSelector(std::string_view text) {
  LaunchSelector s;
  if (text.empty() || text == "unique") return s;
  if (text == "all") {
    s.kind = LaunchSelector::Kind::kAll;
    return s;
  }
  std::string_view rest = text;
  if (internal::ConsumePrefix(&rest, "task:")) {
    size_t slash = rest.find('/');
    if (slash != std::string_view::npos && ParseInt(rest.substr(0, slash), &s.stream_id) &&
        ParseInt(rest.substr(slash + 1), &s.task_id) && s.stream_id >= 0 && s.task_id >= 0) {
      s.kind = LaunchSelector::Kind::kTask;
      return s;
    }
  } else {
    int64_t n = 0;
    if (ParseInt(text, &n) && n != 0 && n >= -1000000000 && n <= 1000000000) {
      s.kind = LaunchSelector::Kind::kIndex;
      s.index = static_cast<int>(n);
      return s;
    }
  }
  return absl::InvalidArgumentError(
      Cat("launch selector '", text, "': want unique, all, N or -N (N >= 1), or task:STREAM/TASK"));
}

std::string LaunchSelectorText(const LaunchSelector& s) {
  switch (s.kind) {
    case LaunchSelector::Kind::kUnique: return "unique";
    case LaunchSelector::Kind::kAll: return "all";
    case LaunchSelector::Kind::kIndex: return Cat(s.index);
    case LaunchSelector::Kind::kTask: return Cat("task:", s.stream_id, "/", s.task_id);
  }
  return "unique";
}

std::vector<size_t> OrderLaunches(std::vector<LaunchInfo>* launches) {
  std::vector<size_t> perm(launches->size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  const std::vector<LaunchInfo>& l = *launches;
  bool exact =
      std::all_of(l.begin(), l.end(), [](const LaunchInfo& x) { return x.start_ns.has_value(); });
  bool timed =
      std::all_of(l.begin(), l.end(), [](const LaunchInfo& x) { return x.start_us.has_value(); });
  if (exact) {
    std::stable_sort(perm.begin(), perm.end(),
                     [&l](size_t a, size_t b) { return *l[a].start_ns < *l[b].start_ns; });
  } else if (timed) {
    std::stable_sort(perm.begin(), perm.end(),
                     [&l](size_t a, size_t b) { return *l[a].start_us < *l[b].start_us; });
  }
  std::vector<LaunchInfo> sorted;
  sorted.reserve(l.size());
  for (size_t i : perm) sorted.push_back(l[i]);
  for (size_t i = 0; i < sorted.size(); ++i) sorted[i].index = static_cast<int>(i + 1);
  *launches = std::move(sorted);
  return perm;
}

std::string FormatLaunchList(const std::vector<LaunchInfo>& launches) {
  if (launches.size() > kListAllBelow) return BoundedList(launches);
  std::string out;
  for (size_t i = 0; i < launches.size(); ++i) out += Cat(i ? "\n" : "", OneLine(launches[i]));
  return out;
}

std::optional<int64_t> ParseMicrosAsNs(std::string_view text) {
  while (!text.empty() && (text.back() == '\t' || text.back() == ' ' || text.back() == '\r'))
    text.remove_suffix(1);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (whole.empty() || whole.size() > 16) return std::nullopt;
  int64_t us = 0;
  for (char c : whole) {
    if (c < '0' || c > '9') return std::nullopt;
    us = us * 10 + (c - '0');
  }
  if (us > std::numeric_limits<int64_t>::max() / 1000 - 1) return std::nullopt;
  int64_t ns = 0;
  for (size_t i = 0; i < frac.size(); ++i) {
    char c = frac[i];
    if (c < '0' || c > '9') return std::nullopt;
    if (i < 3) ns = ns * 10 + (c - '0');
    if (i >= 3 && c != '0') return std::nullopt;  // below 1 ns: not a time msprof writes
  }
  for (size_t i = frac.size(); i < 3; ++i) ns *= 10;
  return us * 1000 + ns;
}

std::string FormatNsAsMicros(int64_t ns) {
  bool neg = ns < 0;
  uint64_t v = neg ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%llu.%03llu", neg ? "-" : "",
                static_cast<unsigned long long>(v / 1000),
                static_cast<unsigned long long>(v % 1000));
  return buf;
}

absl::StatusOr<std::vector<size_t>> SelectLaunches(const std::vector<LaunchInfo>& launches,
                                                   const LaunchSelector& selector,
                                                   std::string_view op_name,
                                                   std::string_view source) {
  const size_t n = launches.size();
  std::vector<size_t> out;
  switch (selector.kind) {
    case LaunchSelector::Kind::kUnique:
      if (n == 1) return std::vector<size_t>{0};
      if (n == 0) return absl::NotFoundError(Cat("no launch of '", op_name, "' in ", source));
      return absl::FailedPreconditionError(
          Cat("expected exactly one launch of op_name=", op_name, " in ", source, "; found ", n,
              ":\n", FormatLaunchList(launches), "\nchoose one or all of them with ", kForms,
              " (or use a runner that emits one measured target launch per profiling process)"));
    case LaunchSelector::Kind::kAll:
      for (size_t i = 0; i < n; ++i) out.push_back(i);
      if (out.empty()) return absl::NotFoundError(Cat("no launch of '", op_name, "' in ", source));
      return out;
    case LaunchSelector::Kind::kIndex: {
      int64_t k =
          selector.index > 0 ? selector.index - 1 : static_cast<int64_t>(n) + selector.index;
      if (k >= 0 && k < static_cast<int64_t>(n)) return std::vector<size_t>{static_cast<size_t>(k)};
      break;
    }
    case LaunchSelector::Kind::kTask:
      for (size_t i = 0; i < n; ++i) {
        if (launches[i].stream_id == selector.stream_id && launches[i].task_id == selector.task_id)
          out.push_back(i);
      }
      if (out.size() == 1) return out;
      if (out.size() > 1) {
        return absl::FailedPreconditionError(
            Cat("--launch ", LaunchSelectorText(selector), " matches ", out.size(), " launches of ",
                op_name, " in ", source, " (stream/task ids were reused); pick by index with ",
                kForms, ":\n", FormatLaunchList(launches)));
      }
      break;
  }
  return absl::NotFoundError(Cat("--launch ", LaunchSelectorText(selector), ": no such launch of ",
                                 op_name, " in ", source, "; it has ", n, " launch",
                                 n == 1 ? "" : "es", ":\n", FormatLaunchList(launches)));
}

}  // namespace npuperf::evidence
