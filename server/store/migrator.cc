#include "server/store/migrator.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"

namespace npuperf::server {

absl::StatusOr<int> ApplyMigrations(const std::vector<Migration>& migrations,
                                    const MigrationTarget& target) {
  auto applied = target.applied_versions();
  if (!applied.ok()) return applied.status();
  std::set<int> known;
  for (const auto& m : migrations) known.insert(m.version);
  for (int v : *applied) {
    if (!known.contains(v)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "database has schema version ", v, " unknown to this server; upgrade npuperf-server"));
    }
  }
  int count = 0;
  for (const auto& m : migrations) {
    if (std::find(applied->begin(), applied->end(), m.version) != applied->end()) continue;
    absl::Status s = target.apply(m);
    if (!s.ok())
      return absl::Status(s.code(), absl::StrCat("migration ", m.name, ": ", s.message()));
    ++count;
  }
  return count;
}

}  // namespace npuperf::server
