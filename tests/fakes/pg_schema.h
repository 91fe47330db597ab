#pragma once
// A throwaway PostgreSQL schema for one test: created on the database of
// NPUPERF_TEST_PG_URL (deploy/with-postgres.sh) and dropped with everything
// in it at destruction. Stores opened on url() see only this schema (its
// search_path), so tests never see each other's rows.
#include <cstdlib>
#include <string>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#if NPUPERF_WITH_POSTGRES
#include <pqxx/pqxx>
#endif

namespace npuperf::server {

class PgTestSchema {
 public:
  // The database URL tests run against, or "" when PostgreSQL tests are off.
  static std::string BaseUrl() {
#if NPUPERF_WITH_POSTGRES
    const char* url = std::getenv("NPUPERF_TEST_PG_URL");
    return url == nullptr ? "" : url;
#else
    return "";
#endif
  }

  // REQUIRES: !BaseUrl().empty(). prefix names the suite ("t", "q", ...).
  explicit PgTestSchema(const std::string& prefix)
      : base_url_(BaseUrl()),
        name_(absl::StrFormat("%s_%016x", prefix, absl::Uniform<uint64_t>(absl::BitGen()))) {
    Exec("CREATE SCHEMA " + name_);
  }
  ~PgTestSchema() { Exec("DROP SCHEMA " + name_ + " CASCADE"); }
  PgTestSchema(const PgTestSchema&) = delete;
  PgTestSchema& operator=(const PgTestSchema&) = delete;

  const std::string& name() const { return name_; }
  // The base URL with this schema as the search path.
  std::string url() const {
    return absl::StrCat(base_url_, absl::StrContains(base_url_, "?") ? "&" : "?",
                        "options=-csearch_path%3D", name_);
  }

  // Runs sql in its own transaction on url() (inside the schema).
  void Exec([[maybe_unused]] const std::string& sql) const {
#if NPUPERF_WITH_POSTGRES
    pqxx::connection conn(base_url_);
    pqxx::work tx(conn);
    tx.exec("SET LOCAL search_path TO " + name_ + ", public");
    tx.exec(sql);
    tx.commit();
#endif
  }

 private:
  const std::string base_url_;
  const std::string name_;
};

}  // namespace npuperf::server
