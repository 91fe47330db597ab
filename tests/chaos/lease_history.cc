// Test-tool SQL over the npuperf schema (migrations/postgres): the events
// the store writes with every claim, result and expiry.
#include "tests/chaos/lease_history.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <tuple>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"

namespace npuperf::chaos {
namespace {

struct Update {
  int attempt = 0;
  int64_t token = 0;
  int64_t applied_ms = 0;
};

// "attempt A token T on HOST device D" (npuperf_claim's job_leased detail).
bool ParseLeased(const std::string& detail, Lease* l) {
  char host[256] = {0};
  long long token = 0;
  if (std::sscanf(detail.c_str(), "attempt %d token %lld on %255s device %d", &l->attempt, &token,
                  host, &l->device) != 4) {
    return false;
  }
  l->token = token;
  l->host = host;
  return true;
}

// Walks one job's events in order, closing each lease at the next event.
void WalkJob(int64_t job, const std::vector<pqxx::row>& events, std::deque<Update> updates,
             int64_t finished_ms, LeaseHistory* out) {
  Lease* open = nullptr;
  for (const auto& e : events) {
    const std::string kind = e[2].as<std::string>();
    const int64_t at = e[1].as<int64_t>();
    const int64_t id = e[5].as<int64_t>();
    if (kind == "job_leased") {
      if (open != nullptr) {
        out->problems.push_back(
            {job, absl::StrCat("attempt ", open->attempt, " leased again before its lease ended")});
      }
      Lease l;
      l.job_id = job;
      l.collection_id = e[3].as<std::string>("");
      l.start_ms = at;
      l.start_event = id;
      if (!ParseLeased(e[4].as<std::string>(""), &l)) {
        out->problems.push_back({job, "unparsable job_leased detail: " + e[4].as<std::string>("")});
      }
      out->leases.push_back(l);
      open = &out->leases.back();
    } else if (kind == "lease_expired") {
      ++out->expired;
      if (open == nullptr) {
        out->problems.push_back({job, "lease_expired with no open lease"});
        continue;
      }
      open->end_ms = at;
      open->end_kind = kind;
      open->end_event = id;
      open = nullptr;
    } else if (kind == "job_result") {
      if (updates.empty()) {
        out->problems.push_back({job, "job_result event without a result_updates row"});
        continue;
      }
      const Update u = updates.front();
      updates.pop_front();
      if (open == nullptr) {
        out->problems.push_back({job, absl::StrCat("result of attempt ", u.attempt, " token ",
                                                   u.token, " stored with no open lease")});
        continue;
      }
      if (u.attempt != open->attempt || u.token != open->token) {
        out->problems.push_back(
            {job, absl::StrCat("result of attempt ", u.attempt, " token ", u.token,
                               " stored under the lease of attempt ", open->attempt, " token ",
                               open->token, " (stale lease)")});
      }
      open->end_ms = at;
      open->end_kind = kind;
      open->end_event = id;
      open = nullptr;
    }
  }
  if (!updates.empty()) {
    out->problems.push_back({job, absl::StrCat(updates.size(),
                                               " result_updates rows without a "
                                               "job_result event")});
  }
  if (open != nullptr && finished_ms > 0) {
    open->end_ms = finished_ms;
    open->end_kind = "finished";
  }
}

}  // namespace

absl::StatusOr<LeaseHistory> ReadLeaseHistory(const std::string& url) {
  try {
    pqxx::connection c(url);
    pqxx::work tx(c);
    std::map<int64_t, std::deque<Update>> updates;
    for (const auto& r : tx.exec("SELECT job_id, attempt, fencing_token, applied_ms FROM "
                                 "result_updates ORDER BY job_id, applied_ms, attempt")) {
      updates[r[0].as<int64_t>()].push_back(
          {r[1].as<int>(), r[2].as<int64_t>(), r[3].as<int64_t>()});
    }
    std::map<int64_t, int64_t> finished;
    for (const auto& r : tx.exec("SELECT id, COALESCE(finished_ms, 0) FROM jobs")) {
      finished[r[0].as<int64_t>()] = r[1].as<int64_t>();
    }
    std::map<int64_t, std::vector<pqxx::row>> by_job;
    const pqxx::result events = tx.exec(
        "SELECT job_id, at_ms, kind, collection_id, detail, id FROM events WHERE job_id IS "
        "NOT NULL AND job_id <> 0 ORDER BY job_id, id");
    for (const auto& e : events) by_job[e[0].as<int64_t>()].push_back(e);
    LeaseHistory out;
    out.leases.reserve(events.size());  // WalkJob keeps pointers into it
    for (const auto& [job, list] : by_job) {
      WalkJob(job, list, updates[job], finished[job], &out);
      updates.erase(job);
    }
    for (const auto& [job, rest] : updates) {
      if (!rest.empty()) out.problems.push_back({job, "result_updates rows but no events"});
    }
    return out;
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("read lease history: ", e.what()));
  }
}

std::vector<std::pair<Lease, Lease>> OverlappingLeases(const std::vector<Lease>& leases,
                                                       int64_t now_ms) {
  std::map<std::pair<std::string, int>, std::vector<const Lease*>> by_device;
  for (const auto& l : leases) by_device[{l.host, l.device}].push_back(&l);
  auto end_of = [now_ms](const Lease* l) { return l->end_ms > 0 ? l->end_ms : now_ms; };
  std::vector<std::pair<Lease, Lease>> out;
  for (auto& [device, list] : by_device) {
    std::sort(list.begin(), list.end(), [](const Lease* a, const Lease* b) {
      return std::tie(a->start_ms, a->start_event) < std::tie(b->start_ms, b->start_event);
    });
    // Every pair: a device has tens of leases in a soak, and the causal
    // exception makes "the lease reaching furthest so far" the wrong one to
    // compare with.
    for (size_t i = 0; i < list.size(); ++i) {
      for (size_t j = i + 1; j < list.size() && list[j]->start_ms < end_of(list[i]); ++j) {
        const Lease* a = list[i];
        const Lease* b = list[j];
        const bool b_after_a = a->end_event > 0 && b->start_event > a->end_event;
        const bool a_after_b = b->end_event > 0 && a->start_event > b->end_event;
        if (!b_after_a && !a_after_b) out.emplace_back(*a, *b);
      }
    }
  }
  return out;
}

}  // namespace npuperf::chaos
