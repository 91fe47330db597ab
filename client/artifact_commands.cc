#include "client/artifact_commands.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/format.h"
#include "common/bundle_tar.h"
#include "common/sha256.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"

namespace npuperf::client {
namespace fs = std::filesystem;
namespace {

// A fetch may take long: each download gets this deadline.
constexpr std::chrono::seconds kFetchTimeout{1800};

// The directory an artifact unpacks into: its name without .tar.gz / .tgz.
std::string StemOf(const std::string& name) {
  for (const char* ext : {".tar.gz", ".tgz"}) {
    if (absl::EndsWith(name, ext) && name.size() > std::strlen(ext)) {
      return name.substr(0, name.size() - std::strlen(ext));
    }
  }
  return name + ".d";
}

// An unlinked file in dir that the download is written to.
absl::StatusOr<int> OpenScratch(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string path = (dir / ".npuperf-fetch-XXXXXX").string();
  fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("create a file in ", dir.string(), ": ", std::strerror(errno)));
  }
  ::unlink(path.c_str());
  return fd;
}

absl::Status WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::InternalError(absl::StrCat("write: ", std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Streams one artifact into fd, hashing as it arrives, and checks it.
absl::Status Download(Session& s, int64_t round_id, const v1::RoundArtifact& a, int fd) {
  grpc::ClientContext ctx;
  s.Prepare(&ctx, kFetchTimeout);
  v1::DownloadArtifactRequest req;
  req.set_round_id(round_id);
  req.set_sha256(a.sha256());
  auto reader = s.queries().DownloadArtifact(&ctx, req);
  Sha256 hash;
  int64_t got = 0;
  v1::DownloadArtifactResponse chunk;
  absl::Status written;
  while (written.ok() && reader->Read(&chunk)) {
    got += static_cast<int64_t>(chunk.chunk().size());
    if (got > a.size_bytes()) {
      written = absl::DataLossError(absl::StrCat("artifact ", a.sha256(), ": more than the ",
                                                 a.size_bytes(), " bytes the round lists"));
      break;
    }
    hash.Update(chunk.chunk());
    written = WriteAll(fd, chunk.chunk());
  }
  if (!written.ok()) ctx.TryCancel();
  auto st = FromGrpcStatus(reader->Finish());
  if (!written.ok()) return written;
  if (!st.ok()) return st;
  if (got != a.size_bytes() || hash.HexDigest() != a.sha256()) {
    return absl::DataLossError(absl::StrCat("artifact ", a.name(), ": the download (", got,
                                            " bytes) does not match its sha256 ", a.sha256()));
  }
  return absl::OkStatus();
}

absl::Status FetchOne(Session& s, const FetchArgs& args, const v1::RoundArtifact& a,
                      const fs::path& dest) {
  auto fd = OpenScratch(args.dir);
  if (!fd.ok()) return fd.status();
  absl::Status st = Download(s, args.round_id, a, *fd);
  if (st.ok()) st = UnpackRawArchiveFd(*fd, dest, args.max_unpacked_mib << 20);
  ::close(*fd);
  return st;
}

absl::Status PrepareDir(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec)) &&
      (!fs::is_directory(fs::symlink_status(dir, ec)) || !fs::is_empty(dir, ec))) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir.string(), " exists and is not an empty directory"));
  }
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("create ", dir.string(), ": ", ec.message()));
  return absl::OkStatus();
}

void PrintArtifacts(const v1::Round& r, std::ostream& out) {
  if (r.artifacts().empty()) {
    out << "round " << r.id() << " has no artifacts (submit with --keep-raw)\n";
    return;
  }
  out << absl::StrFormat("%-24s %-64s %12s  %s\n", "NAME", "SHA256", "BYTES", "CREATED");
  for (const auto& a : r.artifacts()) {
    out << absl::StrFormat("%-24s %-64s %12d  %s\n", a.name(), a.sha256(), a.size_bytes(),
                           google::protobuf::util::TimeUtil::ToString(a.created_at()));
  }
}

}  // namespace

int RunArtifacts(Session& s, int64_t round_id, std::ostream& out, std::ostream& err) {
  auto round = FetchRound(s, round_id);
  if (!round.ok()) return ReportError(round.status(), s.config(), out, err);
  if (s.config().format == OutputFormat::kJson) {
    v1::Round only;
    only.set_id(round->id());
    *only.mutable_artifacts() = round->artifacts();
    out << ToJson(only) << "\n";
  } else {
    PrintArtifacts(*round, out);
  }
  return kExitOk;
}

int RunFetch(Session& s, const FetchArgs& args, std::ostream& out, std::ostream& err) {
  auto round = FetchRound(s, args.round_id);
  if (!round.ok()) return ReportError(round.status(), s.config(), out, err);
  std::vector<v1::RoundArtifact> chosen;
  for (const auto& a : round->artifacts()) {
    if (args.sha256.empty() || a.sha256() == args.sha256) chosen.push_back(a);
  }
  if (chosen.empty()) {
    return ReportError(
        absl::NotFoundError(absl::StrCat("round ", args.round_id, " has no artifact",
                                         args.sha256.empty() ? "s" : " ", args.sha256)),
        s.config(), out, err);
  }
  if (auto st = PrepareDir(args.dir); !st.ok()) return ReportError(st, s.config(), out, err);
  for (const auto& a : chosen) {
    // Two artifacts of one name (an agent's retried pack) go beside each other.
    fs::path dest = args.dir / StemOf(a.name());
    std::error_code ec;
    if (fs::exists(dest, ec))
      dest = args.dir / absl::StrCat(StemOf(a.name()), "-", a.sha256().substr(0, 12));
    if (auto st = FetchOne(s, args, a, dest); !st.ok()) {
      return ReportError(st, s.config(), out, err);
    }
    out << dest.string() << "\n";
  }
  return kExitOk;
}

void AddArtifactCommands(CLI::App& app, ServerCommand& chosen) {
  auto round_id = std::make_shared<int64_t>(0);
  auto* list = app.add_subcommand("artifacts", "list the raw output kept for a round");
  list->add_option("round_id", *round_id)->required();
  list->callback([&chosen, round_id] {
    chosen = [round_id](Session& s, std::ostream& out, std::ostream& err) {
      return RunArtifacts(s, *round_id, out, err);
    };
  });
  auto a = std::make_shared<FetchArgs>();
  auto* fetch = app.add_subcommand(
      "fetch", "download a round's raw output, verify it and unpack it into DIR");
  fetch->add_option("round_id", a->round_id)->required();
  fetch->add_option("dir", a->dir, "created; must not exist or be empty")->required();
  fetch->add_option("--sha256", a->sha256, "only this artifact");
  fetch
      ->add_option("--max-unpacked-mib", a->max_unpacked_mib,
                   "refuse an artifact that unpacks past this")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  fetch->callback([&chosen, a] {
    chosen = [a](Session& s, std::ostream& out, std::ostream& err) {
      return RunFetch(s, *a, out, err);
    };
  });
}

}  // namespace npuperf::client
