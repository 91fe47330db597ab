#include "server/compare/round_reads.h"

#include <utility>

#include "server/core/constants.h"

namespace npuperf::server {

absl::StatusOr<std::vector<v1::Round>> RoundsOfCollection(Store& store, const std::string& team,
                                                          const std::string& collection_id) {
  RoundFilter f;
  f.team = team;
  f.collection_id = collection_id;
  f.limit = kComparisonPage;
  std::vector<v1::Round> out;
  while (true) {
    auto page = store.ListRounds(f);
    if (!page.ok()) return page.status();
    for (auto& r : page->rounds) out.push_back(std::move(r));
    if (page->last_id == 0) return out;
    f.after_id = page->last_id;
  }
}

absl::StatusOr<NoiseBook> NoiseOfCases(Store& store, const std::string& team,
                                       const std::set<std::string>& case_keys,
                                       const VerdictOptions& options) {
  if (options.duration_threshold_requested && options.ratio_threshold_requested) return NoiseBook();
  auto spreads = store.NoiseOfCases(team, {case_keys.begin(), case_keys.end()});
  if (!spreads.ok()) return spreads.status();
  return NoiseBookOf(*std::move(spreads));
}

}  // namespace npuperf::server
