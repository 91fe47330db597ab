#include "evidence/cases.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;
using Json = nlohmann::json;

std::string Strip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::string NoSpace(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) out.push_back(c);
  }
  return out;
}

absl::StatusOr<std::string> ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(Cat("cannot open ", path.string()));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A non-empty stripped string field, or an error naming it.
absl::StatusOr<std::string> NonEmpty(const Json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string() || Strip(it->get<std::string>()).empty()) {
    return absl::InvalidArgumentError(Cat(where, ".", key, " must be a non-empty string"));
  }
  return Strip(it->get<std::string>());
}

absl::StatusOr<PerfCase> ParseCase(const Json& c, size_t i) {
  std::string where = Cat("case manifest cases[", i, "]");
  if (!c.is_object()) return absl::InvalidArgumentError(Cat(where, " must be an object"));
  PerfCase pc;
  for (auto [key, dest] : {std::pair{"id", &pc.id}, {"shape", &pc.shape}, {"dtype", &pc.dtype}}) {
    absl::StatusOr<std::string> v = NonEmpty(c, key, where);
    if (!v.ok()) return v.status();
    *dest = *v;
  }
  auto tf = c.find("test_function");
  if (tf != c.end() && !tf->is_null()) {
    static const std::regex kTestFn("test_[A-Za-z_][A-Za-z0-9_]*");
    std::string fn = tf->is_string() ? Strip(tf->get<std::string>()) : "";
    if (!std::regex_match(fn, kTestFn)) {
      return absl::InvalidArgumentError(
          Cat(where, ".test_function must name a no-argument test_* function"));
    }
    pc.test_function = fn;
  }
  return pc;
}

absl::Status ParseTarget(const Json& j, CaseManifest* m) {
  auto it = j.find("optimization_target");
  if (it == j.end()) return absl::OkStatus();
  const Json& t = *it;
  auto bad = [](const char* why) {
    return absl::InvalidArgumentError(Cat("case manifest optimization_target ", why));
  };
  if (!t.is_object()) return bad("must be an object");
  auto ids = t.find("case_ids");
  if (ids == t.end() || !ids->is_array() || ids->empty())
    return bad("case_ids must be a non-empty list");
  std::set<std::string> known, seen;
  for (const PerfCase& c : m->cases) known.insert(c.id);
  for (const Json& id : *ids) {
    if (!id.is_string()) return bad("case_ids must be strings");
    std::string s = Strip(id.get<std::string>());
    if (!known.count(s)) return bad("case_ids must be manifest case ids");
    if (!seen.insert(s).second) return bad("case_ids must be unique");
    m->target_case_ids.push_back(s);
  }
  auto mode = t.find("selection_mode");
  static const std::set<std::string> kModes = {"user_selected", "single_p0", "all_p0_no_questions"};
  if (mode == t.end() || !mode->is_string() || !kModes.count(mode->get<std::string>())) {
    return bad("selection_mode must be user_selected, single_p0 or all_p0_no_questions");
  }
  m->selection_mode = mode->get<std::string>();
  return absl::OkStatus();
}

}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

absl::StatusOr<CaseManifest> ParseCaseManifest(std::string_view bytes, SourceRecord source) {
  Json j = Json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("case manifest is not valid JSON");
  auto version = j.is_object() ? j.find("schema_version") : j.end();
  if (!j.is_object() || version == j.end() || !version->is_number_integer() || *version != 1) {
    return absl::InvalidArgumentError("case manifest must be an object with schema_version=1");
  }
  auto cases = j.find("cases");
  if (cases == j.end() || !cases->is_array() || cases->empty()) {
    return absl::InvalidArgumentError("case manifest cases must be a non-empty list");
  }
  CaseManifest m;
  m.source = std::move(source);
  std::set<std::string> ids;
  for (size_t i = 0; i < cases->size(); ++i) {
    absl::StatusOr<PerfCase> c = ParseCase((*cases)[i], i);
    if (!c.ok()) return c.status();
    if (!ids.insert(c->id).second) {
      return absl::InvalidArgumentError(
          Cat("case manifest contains duplicate case id '", c->id, "'"));
    }
    m.cases.push_back(std::move(*c));
  }
  absl::Status s = ParseTarget(j, &m);
  if (!s.ok()) return s;
  return m;
}

absl::StatusOr<SourceRecord> RecordOf(const fs::path& path) {
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  if (ec) return absl::NotFoundError(Cat(path.string(), ": ", ec.message()));
  if (!fs::is_regular_file(canonical, ec)) {
    return absl::InvalidArgumentError(Cat(canonical.string(), " is not a regular file"));
  }
  absl::StatusOr<std::string> bytes = ReadAll(canonical);
  if (!bytes.ok()) return bytes.status();
  return SourceRecord{canonical.string(), Sha256Hex(*bytes), static_cast<int64_t>(bytes->size())};
}

absl::StatusOr<CaseManifest> LoadCaseManifest(const fs::path& path) {
  if (path.empty()) return absl::InvalidArgumentError("--case-manifest must name a non-empty path");
  absl::StatusOr<SourceRecord> record = RecordOf(path);
  absl::StatusOr<std::string> bytes = record.ok() ? ReadAll(record->path) : record.status();
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(), Cat("cannot load case manifest '", path.string(),
                                                   "': ", internal::Msg(bytes.status())));
  }
  return ParseCaseManifest(*bytes, *record);
}

absl::Status VerifySourceRecord(std::string_view label, const SourceRecord& r) {
  auto bad = [&](std::string_view what) {
    return absl::FailedPreconditionError(Cat(label, " ", what));
  };
  if (r.path.empty()) return bad("source path is missing");
  bool hex = r.sha256.size() == 64 && std::all_of(r.sha256.begin(), r.sha256.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
             });
  if (!hex) return bad("source sha256 is invalid");
  if (r.size_bytes < 0) return bad("source size_bytes is invalid");
  if (!fs::path(r.path).is_absolute()) return bad("source path is not absolute");
  absl::StatusOr<SourceRecord> now = RecordOf(r.path);
  if (!now.ok()) return bad(Cat("cannot reload source: ", internal::Msg(now.status())));
  if (now->path != r.path) return bad(Cat("source path is not canonical: ", r.path));
  if (now->size_bytes != r.size_bytes) return bad("source size mismatch");
  if (now->sha256 != r.sha256) return bad("source sha256 mismatch");
  return absl::OkStatus();
}

std::optional<CanonicalShape> CanonicalizeShape(std::string_view shape) {
  std::string s = NoSpace(shape);
  if (s == "()" || s == "[]" || s == "scalar") return CanonicalShape{{"", {}}};
  static const std::regex kGroup(
      R"((?:([A-Za-z_][A-Za-z0-9_]*):)?(?:[\[\(]([^\]\)\[\(]*)[\]\)]|(scalar)))");
  CanonicalShape out;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), kGroup); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    std::vector<int64_t> dims;
    std::string body = m[2].str();
    if (!m[3].matched && !body.empty()) {
      static const std::regex kSep("[,xX]");
      for (auto d = std::sregex_token_iterator(body.begin(), body.end(), kSep, -1);
           d != std::sregex_token_iterator(); ++d) {
        std::string digits = d->str();
        if (digits.empty() || digits.size() > 18 ||
            !std::all_of(digits.begin(), digits.end(), ::isdigit) || std::stoll(digits) <= 0) {
          return std::nullopt;
        }
        dims.push_back(std::stoll(digits));
      }
    }
    out.emplace_back(m[1].str(), std::move(dims));
  }
  if (out.empty()) return std::nullopt;
  return out;
}

bool ShapesEqual(std::string_view a, std::string_view b) {
  std::optional<CanonicalShape> x = CanonicalizeShape(a), y = CanonicalizeShape(b);
  return x && y && *x == *y;
}

std::optional<std::vector<std::pair<std::string, std::string>>> CanonicalizeDtype(
    std::string_view dtype) {
  std::string s = NoSpace(dtype);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::regex kToken(
      R"((?:([a-z_][a-z0-9_]*):)?(?:torch\.)?(bfloat16|float16|float32|float64|uint8|uint16|)"
      R"(uint32|uint64|int8|int16|int32|int64|bool|half|float|double|fp16|fp32|fp64|bf16))");
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), kToken); it != std::sregex_iterator();
       ++it) {
    std::string t = (*it)[2].str();
    if (t == "half" || t == "fp16") t = "float16";
    if (t == "float" || t == "fp32") t = "float32";
    if (t == "double" || t == "fp64") t = "float64";
    if (t == "bf16") t = "bfloat16";
    out.emplace_back((*it)[1].str(), t);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

bool DtypesEqual(std::string_view a, std::string_view b) {
  auto x = CanonicalizeDtype(a), y = CanonicalizeDtype(b);
  return x && y && *x == *y;
}

std::string CaseDirName(std::string_view case_id) {
  std::string slug;
  bool in_run = false;
  for (char c : case_id) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    if (keep) {
      slug.push_back(c);
    } else if (!in_run) {
      slug.push_back('_');
    }
    in_run = !keep;
  }
  size_t b = slug.find_first_not_of("._");
  size_t e = slug.find_last_not_of("._");
  slug = b == std::string::npos ? "case" : slug.substr(b, e - b + 1);
  return Cat("case_", slug, "_", Sha256Hex(case_id).substr(0, 8));
}

}  // namespace npuperf::evidence
