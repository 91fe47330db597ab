#include "server/backends/postgres/pool.h"

#include <algorithm>
#include <chrono>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "server/backends/postgres/statements.h"

namespace npuperf::server {

PgPool::PgPool(std::string url, int size, Clock& clock)
    : url_(std::move(url)), clock_(clock), slots_(size < 1 ? 1 : size) {}

PgPool::~PgPool() = default;

bool PgPool::HasFreeSlot() const {
  for (const Slot& s : slots_) {
    if (!s.busy) return true;
  }
  return false;
}

absl::StatusOr<PgPool::Slot*> PgPool::Acquire(int64_t timeout_s) {
  Slot* slot = nullptr;
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &PgPool::HasFreeSlot));
    for (Slot& s : slots_) {
      if (s.busy) continue;
      if (slot == nullptr) slot = &s;  // the first free one, unless one fits
      if (s.conn != nullptr && s.statement_timeout_s == timeout_s) {
        slot = &s;
        break;
      }
    }
    slot->busy = true;
  }
  if (slot->conn != nullptr && slot->conn->is_open()) return slot;
  try {
    slot->conn = std::make_unique<pqxx::connection>(url_);
    slot->statement_timeout_s = 0;
    // No JIT: every statement here runs for milliseconds, and PostgreSQL
    // compiles one whose estimated cost passes jit_above_cost. Without
    // statistics yet, the state gauges' count of 100,000 jobs took 170-210 ms,
    // nearly all of it compiling (issue 36; 0.35 ms without).
    slot->conn->set_variable("jit", "off");
    PrepareStatements(*slot->conn);
    return slot;
  } catch (const std::exception& e) {
    Release(slot, true);
    return absl::UnavailableError(absl::StrCat("connect to PostgreSQL: ", e.what()));
  }
}

absl::StatusOr<int64_t> PgPool::WantedTimeout(absl::string_view what) const {
  const absl::Time deadline = DbDeadlineScope::Current();
  if (deadline == absl::InfiniteFuture()) return 0;  // none
  const absl::Duration left = deadline - absl::FromChrono(clock_.SystemNow());
  if (left <= absl::ZeroDuration()) {
    return absl::DeadlineExceededError(absl::StrCat(what, ": the call's deadline has passed"));
  }
  const int64_t seconds = absl::ToInt64Seconds(absl::Ceil(left, absl::Seconds(1)));
  if (seconds <= kExactTimeoutS) return seconds;
  // gRPC sends a deadline as a timeout it rounds up, so an agent's 15 s call
  // arrives with a little more than 15 s left: without the tolerance its
  // timeout was 20 s while heartbeats and long polls wanted 15 (a SET each
  // way, about 1.2 a job in fleet_bench).
  const int64_t tolerated = absl::ToInt64Seconds(
      absl::Ceil(left - absl::Milliseconds(kTimeoutToleranceMs), absl::Seconds(1)));
  return (tolerated + kTimeoutStepS - 1) / kTimeoutStepS * kTimeoutStepS;
}

void PgPool::ApplyTimeout(Slot& slot, int64_t timeout_s) {
  if (timeout_s == slot.statement_timeout_s) return;
  // Session level, outside any transaction: it stays until the next change.
  slot.conn->set_variable("statement_timeout", absl::StrCat(timeout_s * 1000));
  slot.statement_timeout_s = timeout_s;
}

void PgPool::Release(Slot* slot, bool discard) {
  if (discard) slot->conn.reset();
  absl::MutexLock lock(&mu_);
  slot->busy = false;
}

PgPool::Failure PgPool::Classify(absl::string_view what, bool retry_unique, int attempt,
                                 absl::Status* status) {
  try {
    throw;
  } catch (const pqxx::in_doubt_error& e) {
    *status = absl::UnknownError(absl::StrCat(what, ": commit outcome unknown: ", e.what()));
    LogError("postgres", status->ToString());  // never rerun blindly (R3)
    return {false, true};
  } catch (const pqxx::statement_completion_unknown& e) {
    *status = absl::UnknownError(absl::StrCat(what, ": statement outcome unknown: ", e.what()));
    LogError("postgres", status->ToString());
    return {false, true};
  } catch (const pqxx::transaction_rollback& e) {  // serialization failure, deadlock
    *status = absl::AbortedError(
        absl::StrCat(what, ": gave up after ", attempt, " attempts: ", e.what()));
    return {true, false};
  } catch (const pqxx::broken_connection& e) {
    *status = absl::UnavailableError(absl::StrCat(what, ": database unreachable: ", e.what()));
    return {true, true};
  } catch (const pqxx::unique_violation& e) {
    if (retry_unique) {
      *status =
          absl::AbortedError(absl::StrCat(what, ": lost a race ", attempt, " times: ", e.what()));
      return {true, false};
    }
    *status = absl::AlreadyExistsError(absl::StrCat(what, ": ", e.what()));
    return {false, false};
  } catch (const pqxx::not_null_violation& e) {  // a value the schema refuses: bad data
    *status = absl::InvalidArgumentError(absl::StrCat(what, ": ", e.what()));
    return {false, false};
  } catch (const pqxx::check_violation& e) {
    *status = absl::InvalidArgumentError(absl::StrCat(what, ": ", e.what()));
    return {false, false};
  } catch (const pqxx::integrity_constraint_violation& e) {  // foreign key, restrict
    *status = absl::FailedPreconditionError(absl::StrCat(what, ": ", e.what()));
    return {false, false};
  } catch (const pqxx::data_exception& e) {  // class 22: NUL in text, out-of-range numbers
    *status = absl::InvalidArgumentError(absl::StrCat(what, ": ", e.what()));
    return {false, false};
  } catch (const pqxx::sql_error& e) {
    if (e.sqlstate() == "57014") {  // query_canceled: the statement timeout of ApplyDeadline
      *status = absl::DeadlineExceededError(absl::StrCat(what, ": ", e.what()));
      return {false, false};
    }
    *status = absl::InternalError(absl::StrCat(what, ": ", e.what(), " (query: ", e.query(), ")"));
    LogError("postgres", status->ToString());
    return {false, false};
  } catch (const std::exception& e) {
    *status = absl::InternalError(absl::StrCat(what, ": ", e.what()));
    LogError("postgres", status->ToString());
    return {false, false};
  }
}

void PgPool::Backoff(int attempt) {
  // Spreads reruns of colliding transactions apart: up to 2, 4, 8, 16, then 32 ms.
  const int cap_ms = 1 << std::min(attempt, 5);
  clock_.SleepFor(std::chrono::microseconds(absl::Uniform(absl::BitGen(), 0, cap_ms * 1000)));
}

}  // namespace npuperf::server
