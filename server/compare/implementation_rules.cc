#include "server/compare/implementation_rules.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status_util.h"
#include "evidence/op_summary.h"
#include "server/compare/verdict_stats.h"
#include "server/core/limits.h"

namespace npuperf::server {
namespace {

// Violations reported at most (a garbage pair map names its first lines).
constexpr size_t kMaxViolations = 20;

std::string Num(double v) { return absl::StrFormat("%.4g", v); }
std::string Pct(double ratio) { return absl::StrFormat("%+.2f%%", (ratio - 1) * 100); }

// An operator directory name, as SubmitCollection accepts it.
std::string NameProblem(absl::string_view name) {
  if (name.empty() || name.size() > kMaxOperatorNameBytes) {
    return absl::StrCat("an operator name of 1..", kMaxOperatorNameBytes, " bytes");
  }
  if (name == "." || name == "..") return "an operator name, not '.' or '..'";
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return "an operator name of [A-Za-z0-9_.-]";
    }
  }
  return "";
}

// The explicit pairs being collected, with what is wrong with them.
struct PairSink {
  std::vector<v1::OperatorPair> pairs;
  std::set<std::string> candidates;
  std::vector<FieldViolation> bad;

  void Bad(std::string field, std::string what) {
    if (bad.size() < kMaxViolations) bad.push_back({std::move(field), std::move(what)});
  }
  // `where` names the pair in messages ("line 3: " or ""); the fields are
  // those of its two names.
  void Add(v1::OperatorPair p, const std::string& cand_field, const std::string& base_field,
           const std::string& where) {
    const std::string cp = NameProblem(p.candidate_operator());
    const std::string bp = NameProblem(p.base_operator());
    if (!cp.empty()) Bad(cand_field, absl::StrCat(where, "candidate operator: want ", cp));
    if (!bp.empty()) Bad(base_field, absl::StrCat(where, "base operator: want ", bp));
    if (!cp.empty() || !bp.empty()) return;
    if (!candidates.insert(p.candidate_operator()).second) {
      Bad(cand_field,
          absl::StrCat(where, "candidate operator '", p.candidate_operator(), "' is paired twice"));
      return;
    }
    pairs.push_back(std::move(p));
  }
};

void ParsePairMap(absl::string_view text, PairSink& sink) {
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = absl::StrCat("line ", line_no, ": ");
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      sink.Bad("pair_map", absl::StrCat(where, "want CAND_OP=BASE_OP"));
      continue;
    }
    v1::OperatorPair p;
    p.set_candidate_operator(std::string(absl::StripAsciiWhitespace(line.substr(0, eq))));
    p.set_base_operator(std::string(absl::StripAsciiWhitespace(line.substr(eq + 1))));
    sink.Add(std::move(p), "pair_map", "pair_map", where);
  }
}

// Operators with rounds on one side.
std::set<std::string> OperatorsOf(const std::vector<v1::Round>& rounds) {
  std::set<std::string> out;
  for (const v1::Round& r : rounds) out.insert(r.operator_name());
  return out;
}

void AddUnpaired(const char* side, const std::string& op, std::string reason,
                 google::protobuf::RepeatedPtrField<v1::UnpairedOperator>* out) {
  v1::UnpairedOperator* u = out->Add();
  u->set_side(side);
  u->set_operator_name(op);
  u->set_reason(std::move(reason));
}

// An explicit pair is compared when both operators have rounds; each
// missing one is listed.
bool AddExplicitPair(const v1::OperatorPair& p, const std::set<std::string>& base_ops,
                     const std::set<std::string>& cand_ops,
                     google::protobuf::RepeatedPtrField<v1::UnpairedOperator>* unpaired) {
  const bool has_c = cand_ops.count(p.candidate_operator()) > 0;
  const bool has_b = base_ops.count(p.base_operator()) > 0;
  const std::string pair = absl::StrCat(p.candidate_operator(), "=", p.base_operator());
  if (!has_c) {
    AddUnpaired("candidate", p.candidate_operator(),
                absl::StrCat("pair ", pair, ": no rounds in the candidate collection"), unpaired);
  }
  if (!has_b) {
    AddUnpaired("base", p.base_operator(),
                absl::StrCat("pair ", pair, ": no rounds in the base collection"), unpaired);
  }
  return has_c && has_b;
}

// ---- one case ---------------------------------------------------------------

struct CoreTime {
  double us = 0;
  const char* kind = "";
};

// The primary core (evidence: the larger core time, ties AIC) and its time.
CoreTime PrimaryCore(const v1::Evidence& e) {
  const double aic = e.aicore_time_us(), aiv = e.aiv_time_us();
  if (!(std::max(aic, aiv) > 0) || !std::isfinite(std::max(aic, aiv))) return {};
  return aic >= aiv ? CoreTime{aic, "AIC"} : CoreTime{aiv, "AIV"};
}

// With core samples on both sides, the scope is judged on them (their
// medians, Mann-Whitney and the Hodges-Lehmann interval); else on the one
// merged figure of each round, a ratio without a test.
v1::ScopeComparison CoreScope(const v1::Round& b, const v1::Round& c, const VerdictOptions& o) {
  const CoreTime cb = PrimaryCore(b.evidence()), cc = PrimaryCore(c.evidence());
  v1::ScopeComparison s;
  if (cb.us > 0 && cc.us > 0) {
    // Evidence.duration.core_samples_us, one per repeat; unusable unless each
    // is positive and finite.
    auto samples = [](const v1::Evidence& e) {
      const auto& core = e.duration().core_samples_us();
      return evidence::CompleteCoreTimes({core.begin(), core.end()});
    };
    const std::vector<double> sb = samples(b.evidence()), sc = samples(c.evidence());
    if (!sb.empty() && !sc.empty()) {
      const double mb = evidence::Median(sb), mc = evidence::Median(sc);
      s = JudgeScope("core", sb, sc, mb, mc, o, "the core samples are one per repeat");
    } else {
      s = JudgeScope("core", {cb.us}, {cc.us}, cb.us, cc.us, o,
                     absl::StrCat("the ", sb.empty() ? "base" : "candidate",
                                  " round has no core time per repeat, only the merged "
                                  "op_summary row"));
    }
  } else {
    s.set_scope("core");
    s.set_p_value(1);
    s.set_rule(absl::StrCat("no core time on the ", cb.us > 0 ? "candidate" : "base",
                            " side (quick-mode rounds carry none)"));
  }
  s.set_base_core(cb.kind);
  s.set_candidate_core(cc.kind);
  return s;
}

v1::ScopeComparison TaskDurationScope(const v1::RoundComparison& cmp) {
  const v1::DurationComparison& d = cmp.duration();
  v1::ScopeComparison s;
  s.set_scope("task_duration");
  s.set_base_us(d.baseline_us());
  s.set_candidate_us(d.candidate_us());
  s.set_ratio(d.ratio());
  s.set_ratio_ci_low(d.ratio_ci_low());
  s.set_ratio_ci_high(d.ratio_ci_high());
  s.set_p_value(d.p_value());
  s.set_base_samples(d.baseline_samples_us_size());
  s.set_candidate_samples(d.candidate_samples_us_size());
  s.set_verdict(cmp.verdict());
  s.set_rule(cmp.rule());
  return s;
}

bool IsShapeField(const std::string& field) {
  return field == "case_shape" || field == "case_dtype" || field == "input_shapes" ||
         field == "input_data_types";
}

std::string ShapeMismatch(const v1::RoundComparison& cmp) {
  std::string out;
  for (const auto& d : cmp.fingerprint_differences()) {
    if (!d.blocking() || !IsShapeField(d.field())) continue;
    absl::StrAppend(&out, out.empty() ? "" : ", ", d.field(), " (", d.baseline(), " vs ",
                    d.candidate(), ")");
  }
  return out;
}

// ---- operators and means ----------------------------------------------------

using Newest = std::map<std::string, std::map<std::string, const v1::Round*>>;

// operator -> case -> the newest round.
Newest NewestByOperator(const std::vector<v1::Round>& rounds) {
  Newest out;
  for (const v1::Round& r : rounds) {
    const v1::Round*& slot = out[r.operator_name()][r.case_id()];
    if (slot == nullptr || slot->id() < r.id()) slot = &r;
  }
  return out;
}

v1::ImplementationCase MissingCase(const v1::OperatorPair& p, const std::string& case_id,
                                   const v1::Round* b, const v1::Round* c) {
  v1::ImplementationCase out;
  out.set_candidate_operator(p.candidate_operator());
  out.set_base_operator(p.base_operator());
  out.set_case_id(case_id);
  if (b == nullptr) {
    out.set_status(v1::IMPLEMENTATION_CASE_MISSING_BASE);
    out.set_candidate_round_id(c->id());
    out.set_reason(
        absl::StrCat("base operator ", p.base_operator(), " has no round of case '", case_id, "'"));
  } else {
    out.set_status(v1::IMPLEMENTATION_CASE_MISSING_CANDIDATE);
    out.set_base_round_id(b->id());
    out.set_reason(absl::StrCat("candidate operator ", p.candidate_operator(),
                                " has no round of case '", case_id, "'"));
  }
  return out;
}

// Adds one case to its operator and to the bot counts.
void Tally(const v1::ImplementationCase& c, std::vector<double>* core, std::vector<double>* task,
           v1::ImplementationOperator* op, v1::ComparisonCounts* counts) {
  switch (c.status()) {
    case v1::IMPLEMENTATION_CASE_COMPARED: break;
    case v1::IMPLEMENTATION_CASE_MISSING_BASE:
    case v1::IMPLEMENTATION_CASE_MISSING_CANDIDATE:
      counts->set_unmatched(counts->unmatched() + 1);
      op->set_not_compared(op->not_compared() + 1);
      return;
    case v1::IMPLEMENTATION_CASE_ERRORED:
      CountVerdict(v1::VERDICT_ERRORED, counts);
      op->set_not_compared(op->not_compared() + 1);
      return;
    default:
      CountVerdict(v1::VERDICT_NOT_COMPARABLE, counts);
      op->set_not_compared(op->not_compared() + 1);
      return;
  }
  op->set_scenarios(op->scenarios() + 1);
  CountVerdict(c.task_duration().verdict(), counts);
  CountVerdict(c.task_duration().verdict(), op->mutable_task_duration_counts());
  task->push_back(c.task_duration().ratio());
  if (c.core().ratio() > 0) {
    CountVerdict(c.core().verdict(), op->mutable_core_counts());
    core->push_back(c.core().ratio());
  }
}

v1::ImplementationOperator ComparePair(const v1::OperatorPair& p, const Newest& base,
                                       const Newest& cand, const VerdictOptions& o,
                                       v1::CompareImplementationsResponse* out) {
  static const std::map<std::string, const v1::Round*> kNone;
  auto side = [](const Newest& n, const std::string& op) -> const auto& {
    auto it = n.find(op);
    return it == n.end() ? kNone : it->second;
  };
  const auto& b = side(base, p.base_operator());
  const auto& c = side(cand, p.candidate_operator());
  std::set<std::string> case_ids;
  for (const auto& [id, r] : b) case_ids.insert(id);
  for (const auto& [id, r] : c) case_ids.insert(id);
  v1::ImplementationOperator op;
  op.set_candidate_operator(p.candidate_operator());
  op.set_base_operator(p.base_operator());
  std::vector<double> core, task;
  for (const std::string& id : case_ids) {
    const auto bi = b.find(id);
    const auto ci = c.find(id);
    v1::ImplementationCase one = bi != b.end() && ci != c.end()
                                     ? CompareImplementationCase(*bi->second, *ci->second, o)
                                     : MissingCase(p, id, bi == b.end() ? nullptr : bi->second,
                                                   ci == c.end() ? nullptr : ci->second);
    Tally(one, &core, &task, &op, out->mutable_counts());
    *out->add_cases() = std::move(one);
  }
  op.set_core_ratio(GeometricMean(core));
  op.set_core_cases(static_cast<int32_t>(core.size()));
  op.set_task_duration_ratio(GeometricMean(task));
  op.set_task_duration_cases(static_cast<int32_t>(task.size()));
  return op;
}

void AddMeans(v1::CompareImplementationsResponse* out) {
  std::vector<double> core, task;
  for (const auto& op : out->operators()) {
    if (op.core_cases() > 0) core.push_back(op.core_ratio());
    if (op.task_duration_cases() > 0) task.push_back(op.task_duration_ratio());
  }
  for (auto [mean, label, f] :
       {std::tuple{out->mutable_arithmetic_mean(), kArithmeticMeanLabel, &ArithmeticMean},
        {out->mutable_geometric_mean(), kGeometricMeanLabel, &GeometricMean}}) {
    mean->set_label(label);
    mean->set_core_ratio(f(core));
    mean->set_task_duration_ratio(f(task));
    mean->set_core_operators(static_cast<int32_t>(core.size()));
    mean->set_task_duration_operators(static_cast<int32_t>(task.size()));
  }
}

}  // namespace

absl::StatusOr<std::vector<v1::OperatorPair>> RequestedPairs(
    const v1::CompareImplementationsRequest& req) {
  PairSink sink;
  for (int i = 0; i < req.pairs_size(); ++i) {
    const std::string f = absl::StrCat("pairs[", i, "]");
    sink.Add(req.pairs(i), f + ".candidate_operator", f + ".base_operator", "");
  }
  if (req.pair_map().size() > kMaxPairMapBytes) {
    sink.Bad("pair_map", absl::StrCat(req.pair_map().size(), " bytes; at most ", kMaxPairMapBytes));
  } else {
    ParsePairMap(req.pair_map(), sink);
  }
  const size_t total = sink.pairs.size();
  if (total > static_cast<size_t>(kMaxImplementationPairs)) {
    sink.bad.insert(sink.bad.begin(), FieldViolation{req.pair_map().empty() ? "pairs" : "pair_map",
                                                     absl::StrCat(total, " pairs in all; at most ",
                                                                  kMaxImplementationPairs,
                                                                  " (a collection holds at most ",
                                                                  kMaxOperators, " operators)")});
  }
  if (!sink.bad.empty()) return InvalidArgumentWithFields(sink.bad);
  return std::move(sink.pairs);
}

std::vector<v1::OperatorPair> ResolvePairs(
    const std::vector<v1::OperatorPair>& explicit_pairs, const std::vector<v1::Round>& base,
    const std::vector<v1::Round>& candidate, bool same_collection,
    google::protobuf::RepeatedPtrField<v1::UnpairedOperator>* unpaired) {
  const std::set<std::string> base_ops = OperatorsOf(base), cand_ops = OperatorsOf(candidate);
  std::map<std::string, v1::OperatorPair> out;
  std::set<std::string> used_base;
  for (const v1::OperatorPair& p : explicit_pairs) {
    if (!AddExplicitPair(p, base_ops, cand_ops, unpaired)) continue;
    out[p.candidate_operator()] = p;
    used_base.insert(p.base_operator());
  }
  if (explicit_pairs.empty()) {
    for (const std::string& op : cand_ops) {
      if (base_ops.count(op) == 0) continue;
      out[op].set_candidate_operator(op);
      out[op].set_base_operator(op);
      used_base.insert(op);
    }
  }
  if (!same_collection) {
    for (const std::string& op : cand_ops) {
      if (out.count(op) > 0) continue;
      AddUnpaired("candidate", op,
                  explicit_pairs.empty() ? "no base operator of that name (give CAND_OP=BASE_OP)"
                                         : "named by no pair",
                  unpaired);
    }
    for (const std::string& op : base_ops) {
      if (used_base.count(op) == 0) {
        AddUnpaired("base", op, "no candidate operator is paired with it", unpaired);
      }
    }
  }
  std::vector<v1::OperatorPair> pairs;
  for (auto& [op, p] : out) pairs.push_back(std::move(p));
  return pairs;
}

v1::ImplementationCase CompareImplementationCase(const v1::Round& base, const v1::Round& candidate,
                                                 const VerdictOptions& options) {
  const v1::RoundComparison cmp = CompareRounds(base, candidate, options);
  v1::ImplementationCase out;
  out.set_candidate_operator(candidate.operator_name());
  out.set_base_operator(base.operator_name());
  out.set_case_id(candidate.case_id());
  out.set_base_round_id(base.id());
  out.set_candidate_round_id(candidate.id());
  *out.mutable_fingerprint_differences() = cmp.fingerprint_differences();
  *out.mutable_flags() = cmp.flags();
  const std::string mismatch = ShapeMismatch(cmp);
  if (cmp.verdict() == v1::VERDICT_ERRORED) {
    out.set_status(v1::IMPLEMENTATION_CASE_ERRORED);
    out.set_reason(cmp.rule());
  } else if (!mismatch.empty()) {
    out.set_status(v1::IMPLEMENTATION_CASE_SHAPE_MISMATCH);
    out.set_reason(absl::StrCat("shape or dtype differs: ", mismatch));
  } else if (cmp.verdict() == v1::VERDICT_NOT_COMPARABLE) {
    out.set_status(v1::IMPLEMENTATION_CASE_NOT_COMPARABLE);
    out.set_reason(cmp.rule());
  } else {
    out.set_status(v1::IMPLEMENTATION_CASE_COMPARED);
    *out.mutable_task_duration() = TaskDurationScope(cmp);
    *out.mutable_core() = CoreScope(base, candidate, options);
    const auto& core = out.core();
    if (!core.base_core().empty() && !core.candidate_core().empty() &&
        core.base_core() != core.candidate_core()) {
      out.add_flags(absl::StrCat("primary_core:", core.base_core(), "->", core.candidate_core()));
    }
  }
  return out;
}

v1::CompareImplementationsResponse CompareImplementationSets(
    const std::vector<v1::Round>& base, const std::vector<v1::Round>& candidate,
    const std::vector<v1::OperatorPair>& explicit_pairs, bool same_collection,
    const VerdictOptions& options) {
  v1::CompareImplementationsResponse out;
  const std::vector<v1::OperatorPair> pairs =
      ResolvePairs(explicit_pairs, base, candidate, same_collection, out.mutable_unpaired());
  const Newest b = NewestByOperator(base), c = NewestByOperator(candidate);
  for (const v1::OperatorPair& p : pairs) {
    *out.add_pairs() = p;
    *out.add_operators() = ComparePair(p, b, c, options, &out);
  }
  AddMeans(&out);
  return out;
}

v1::ScopeComparison JudgeScope(const std::string& scope, const std::vector<double>& base_samples,
                               const std::vector<double>& candidate_samples, double base_us,
                               double candidate_us, const VerdictOptions& options,
                               absl::string_view why_few) {
  v1::ScopeComparison s;
  s.set_scope(scope);
  s.set_base_us(base_us);
  s.set_candidate_us(candidate_us);
  s.set_base_samples(static_cast<int32_t>(base_samples.size()));
  s.set_candidate_samples(static_cast<int32_t>(candidate_samples.size()));
  s.set_p_value(1);
  s.set_ratio(candidate_us / base_us);
  const RatioEstimate hl = HodgesLehmannRatio(base_samples, candidate_samples, options.alpha);
  if (hl.low && hl.high) {
    s.set_ratio_ci_low(*hl.low);
    s.set_ratio_ci_high(*hl.high);
  }
  const int nb = s.base_samples(), nc = s.candidate_samples();
  const double min_p = MinAchievablePValue(nb, nc);
  if (min_p > options.alpha) {
    s.set_verdict(v1::VERDICT_INSUFFICIENT);
    s.set_rule(absl::StrCat("too few samples: ", nb, " vs ", nc, " cannot reach alpha=",
                            Num(options.alpha), " (smallest p ", Num(min_p), "); ", why_few));
    return s;
  }
  s.set_p_value(MannWhitneyU(base_samples, candidate_samples).p_value);
  const std::string p = absl::StrCat("p=", Num(s.p_value()));
  if (s.p_value() >= options.alpha) {
    s.set_verdict(v1::VERDICT_STABLE);
    s.set_rule(
        absl::StrCat(p, ">=", Num(options.alpha), " (", Pct(s.ratio()), " not significant)"));
  } else if (std::abs(s.ratio() - 1) * 100 < options.duration_threshold_pct) {
    s.set_verdict(v1::VERDICT_STABLE);
    s.set_rule(absl::StrCat(p, "<", Num(options.alpha), " but |", Pct(s.ratio()), "|<",
                            Num(options.duration_threshold_pct), "%"));
  } else {
    const bool faster = s.ratio() < 1;
    s.set_verdict(faster ? v1::VERDICT_IMPROVED : v1::VERDICT_REGRESSED);
    s.set_rule(absl::StrCat(p, "<", Num(options.alpha), " and ", Pct(s.ratio()),
                            faster ? " faster" : " slower", " beyond ",
                            Num(options.duration_threshold_pct), "%"));
  }
  return s;
}

double ArithmeticMean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

absl::Status CheckImplementationResponseSize(const v1::CompareImplementationsResponse& resp,
                                             size_t max_bytes) {
  const size_t size = resp.ByteSizeLong();
  if (size <= max_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("the comparison weighs ", size, " bytes, over the ", max_bytes,
                   " a response may; compare fewer operators per call (pairs)"));
}

}  // namespace npuperf::server
