#include "server/compare/device_suspects.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"

namespace npuperf::server {
namespace {

// The ids of the rounds whose device has a canary quarantine covering their
// creation; each device's quarantines are read once.
absl::StatusOr<std::set<int64_t>> SuspectIds(Store& store,
                                             const std::vector<const v1::Round*>& rounds) {
  std::map<std::pair<std::string, int32_t>, std::vector<QuarantineRecord>> quarantines;
  std::set<int64_t> out;
  for (const v1::Round* r : rounds) {
    const v1::Fingerprint& fp = r->evidence().fingerprint();
    if (fp.host().empty()) continue;
    const auto key = std::make_pair(fp.host(), fp.device_id());
    auto it = quarantines.find(key);
    if (it == quarantines.end()) {
      auto got = store.CanaryQuarantinesOf(fp.host(), fp.device_id());
      if (!got.ok()) return got.status();
      it = quarantines.emplace(key, *std::move(got)).first;
    }
    const int64_t created =
        google::protobuf::util::TimeUtil::TimestampToMilliseconds(r->created_at());
    for (const QuarantineRecord& q : it->second) {
      if (created >= q.suspect_since_ms && (q.released_ms == 0 || created < q.released_ms)) {
        out.insert(r->id());
        break;
      }
    }
  }
  return out;
}

void AddFlags(const std::set<int64_t>& suspect, v1::RoundComparison* c) {
  if (suspect.contains(c->baseline_round_id())) {
    c->add_flags(absl::StrCat(kDeviceSuspectFlag, ":baseline"));
  }
  if (suspect.contains(c->candidate_round_id())) {
    c->add_flags(absl::StrCat(kDeviceSuspectFlag, ":candidate"));
  }
}

}  // namespace

absl::Status FlagSuspectRounds(
    Store& store, const std::vector<const std::vector<v1::Round>*>& sides,
    google::protobuf::RepeatedPtrField<v1::RoundComparison>* comparisons) {
  std::vector<const v1::Round*> rounds;
  for (const auto* side : sides) {
    for (const v1::Round& r : *side) rounds.push_back(&r);
  }
  auto suspect = SuspectIds(store, rounds);
  if (!suspect.ok()) return suspect.status();
  if (suspect->empty()) return absl::OkStatus();
  for (v1::RoundComparison& c : *comparisons) AddFlags(*suspect, &c);
  return absl::OkStatus();
}

absl::Status FlagSuspectRounds(Store& store, const v1::Round& baseline, const v1::Round& candidate,
                               v1::RoundComparison* comparison) {
  auto suspect = SuspectIds(store, {&baseline, &candidate});
  if (!suspect.ok()) return suspect.status();
  AddFlags(*suspect, comparison);
  return absl::OkStatus();
}

}  // namespace npuperf::server
