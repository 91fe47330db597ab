#include "server/store/finished_job_counts.h"

namespace npuperf::server {

std::vector<std::string> FinishedJobCounts::Uncounted(
    const std::vector<std::string>& finished) const {
  std::vector<std::string> out;
  absl::MutexLock lock(&mu_);
  for (const auto& id : finished) {
    if (!counted_.contains(id)) out.push_back(id);
  }
  return out;
}

void FinishedJobCounts::Add(const std::vector<std::string>& ids,
                            const std::map<std::string, std::map<v1::JobState, int64_t>>& jobs) {
  absl::MutexLock lock(&mu_);
  for (const auto& id : ids) {
    if (!counted_.insert(id).second) continue;
    auto it = jobs.find(id);
    if (it == jobs.end()) continue;
    for (const auto& [state, n] : it->second) jobs_[state] += n;
  }
}

void FinishedJobCounts::AddTo(std::map<v1::JobState, int64_t>* jobs) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [state, n] : jobs_) (*jobs)[state] += n;
}

}  // namespace npuperf::server
