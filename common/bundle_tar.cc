#include "common/bundle_tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <clocale>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace npuperf {
namespace fs = std::filesystem;
namespace {

struct ArchiveWriteDeleter {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct ArchiveReadDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

// Switches the calling thread to a locale (uselocale) for its lifetime; a
// no-op when the locale does not exist.
class ThreadLocale {
 public:
  explicit ThreadLocale(const char* name) : locale_(newlocale(LC_ALL_MASK, name, nullptr)) {
    if (locale_ != nullptr) previous_ = uselocale(locale_);
  }
  ~ThreadLocale() {
    if (locale_ == nullptr) return;
    uselocale(previous_);
    freelocale(locale_);
  }
  ThreadLocale(const ThreadLocale&) = delete;
  ThreadLocale& operator=(const ThreadLocale&) = delete;

 private:
  locale_t locale_;
  locale_t previous_ = nullptr;
};

bool Skipped(const fs::path& rel) {
  for (const auto& part : rel) {
    if (part == ".git" || part == "__pycache__" || part == ".msprof") return true;
  }
  const std::string s = rel.generic_string();
  return s == "docs/perf" || s.rfind("docs/perf/", 0) == 0;
}

absl::Status CheckEntryPath(const std::string& path, const char* what) {
  if (path.empty() || path.front() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " entry '", path, "' is absolute or empty"));
  }
  for (const auto& part : fs::path(path)) {
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " entry '", path, "' leaves the directory"));
    }
  }
  return absl::OkStatus();
}

la_ssize_t AppendToString(archive*, void* out, const void* buf, size_t n) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

// Walks the archive open() opens, checking each entry; calls on_entry for
// accepted ones.
// compressed: gzip (raw archives) rather than a bare tar (bundles).
template <typename Open, typename F>
absl::Status ForEachEntryOf(Open&& open, int64_t max_bytes, F&& on_entry, bool compressed = false) {
  ThreadLocale utf8("C.UTF-8");  // UTF-8 names convert to the same bytes (PackBundle)
  std::unique_ptr<archive, ArchiveReadDeleter> a(archive_read_new());
  archive_read_support_format_tar(a.get());
  if (compressed) archive_read_support_filter_gzip(a.get());
  const char* what = compressed ? "archive" : "bundle";
  if (open(a.get()) != ARCHIVE_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not a tar: ", archive_error_string(a.get())));
  }
  int64_t total = 0;
  archive_entry* entry = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK) {
    const char* name = archive_entry_pathname(entry);
    if (name == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(what, " entry without a usable name"));
    const std::string path = name;
    if (auto s = CheckEntryPath(path, what); !s.ok()) return s;
    const auto type = archive_entry_filetype(entry);
    const bool link = compressed && archive_entry_hardlink(entry) != nullptr;
    if ((type != AE_IFREG && type != AE_IFDIR) || link) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " entry '", path, "' is not a file or directory"));
    }
    total += std::max<int64_t>(0, archive_entry_size(entry));
    if (total > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(what, " unpacks past ", max_bytes, " bytes"));
    }
    if (auto s = on_entry(a.get(), entry, path, type == AE_IFDIR); !s.ok()) return s;
  }
  if (rc != ARCHIVE_EOF) {
    return absl::InvalidArgumentError(
        absl::StrCat("corrupt ", what, ": ", archive_error_string(a.get())));
  }
  return absl::OkStatus();
}

// ForEachEntryOf a tar in memory.
template <typename F>
absl::Status ForEachEntry(const std::string& tar, int64_t max_bytes, F&& on_entry) {
  return ForEachEntryOf(
      [&tar](archive* a) { return archive_read_open_memory(a, tar.data(), tar.size()); }, max_bytes,
      std::forward<F>(on_entry));
}

// The paths under dir that go into a bundle, relative and sorted; only
// regular files and directories.
// raw: keep everything (no skip list) and leave out, rather than refuse,
// what is not a regular file or directory.
absl::StatusOr<std::vector<fs::path>> BundleEntries(const fs::path& dir, bool raw = false) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const fs::path rel = fs::relative(it->path(), dir);
    if (raw && (it->is_symlink() || (!it->is_regular_file() && !it->is_directory()))) continue;
    if (!raw && Skipped(rel)) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink() || (!it->is_regular_file() && !it->is_directory())) {
      return absl::InvalidArgumentError(
          absl::StrCat(it->path().string(), ": bundles hold only regular files and directories"));
    }
    entries.push_back(rel);
  }
  if (ec) return absl::InternalError(absl::StrCat("walk ", dir.string(), ": ", ec.message()));
  std::sort(entries.begin(), entries.end());
  return entries;
}

// Appends dir/rel to the archive a, which writes into out; refuses when the
// bundle would pass max_bytes.
absl::Status AddEntry(archive* a, const fs::path& dir, const fs::path& rel, int64_t max_bytes,
                      const std::string& out) {
  const fs::path full = dir / rel;
  const bool is_dir = fs::is_directory(full);
  std::string content;
  if (!is_dir) {
    std::ifstream in(full, std::ios::binary);
    if (!in) {
      return absl::InvalidArgumentError(absl::StrCat(full.string(), ": cannot be read"));
    }
    content.assign(std::istreambuf_iterator<char>(in), {});
    if (static_cast<int64_t>(out.size() + content.size()) > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("bundle of ", dir.string(), " exceeds ", max_bytes, " bytes"));
    }
  }
  std::unique_ptr<archive_entry, EntryDeleter> e(archive_entry_new());
  archive_entry_set_pathname(e.get(), rel.generic_string().c_str());
  archive_entry_set_filetype(e.get(), is_dir ? AE_IFDIR : AE_IFREG);
  const auto perms = fs::status(full).permissions();
  const bool exec = (perms & fs::perms::owner_exec) != fs::perms::none;
  archive_entry_set_perm(e.get(), is_dir || exec ? 0755 : 0644);
  archive_entry_set_size(e.get(), static_cast<la_int64_t>(content.size()));
  archive_entry_set_mtime(e.get(), 0, 0);
  // ARCHIVE_WARN: a name that is not UTF-8, written in binary (hdrcharset).
  if (archive_write_header(a, e.get()) < ARCHIVE_WARN ||
      (!content.empty() && archive_write_data(a, content.data(), content.size()) < 0)) {
    return absl::InternalError(absl::StrCat("pack ", rel.string(), ": ", archive_error_string(a)));
  }
  return absl::OkStatus();
}

bool Utf8Codeset() { return std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0; }

}  // namespace

std::string UseUtf8PathNames() {
  const char* now = std::setlocale(LC_CTYPE, "");
  if (now == nullptr || !Utf8Codeset()) now = std::setlocale(LC_CTYPE, "C.UTF-8");
  if (now == nullptr) now = std::setlocale(LC_CTYPE, nullptr);
  return now != nullptr ? now : "C";
}

absl::StatusOr<std::string> PackBundle(const fs::path& dir, int64_t max_bytes) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("operator directory ", dir.string(), " not found"));
  }
  absl::StatusOr<std::vector<fs::path>> entries = BundleEntries(dir);
  if (!entries.ok()) return entries.status();
  std::string out;
  std::unique_ptr<archive, ArchiveWriteDeleter> a(archive_write_new());
  archive_write_set_format_pax_restricted(a.get());
  archive_write_open(a.get(), &out, nullptr, AppendToString, nullptr);
  // Names are UTF-8 bytes whatever the process locale (the CLI runs in the C
  // locale, where libarchive cannot convert any non-ASCII name): this thread
  // uses C.UTF-8 while packing. A name that is not UTF-8 is stored as its bytes
  // (pax hdrcharset=BINARY). python/npuperf/bundle.py writes the same bytes.
  ThreadLocale utf8("C.UTF-8");
  for (const auto& rel : *entries) {
    if (absl::Status s = AddEntry(a.get(), dir, rel, max_bytes, out); !s.ok()) return s;
  }
  archive_write_close(a.get());
  return out;
}

absl::StatusOr<std::string> PackBundleFiles(
    std::vector<std::pair<std::string, std::string>> files) {
  std::sort(files.begin(), files.end());
  std::string out;
  std::unique_ptr<archive, ArchiveWriteDeleter> a(archive_write_new());
  archive_write_set_format_pax_restricted(a.get());
  archive_write_open(a.get(), &out, nullptr, AppendToString, nullptr);
  for (const auto& [name, content] : files) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("bundle file name ", name, ": not a plain name"));
    }
    std::unique_ptr<archive_entry, EntryDeleter> e(archive_entry_new());
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(content.size()));
    archive_entry_set_mtime(e.get(), 0, 0);
    if (archive_write_header(a.get(), e.get()) < ARCHIVE_WARN ||
        (!content.empty() && archive_write_data(a.get(), content.data(), content.size()) < 0)) {
      return absl::InternalError(absl::StrCat("pack ", name, ": ", archive_error_string(a.get())));
    }
  }
  archive_write_close(a.get());
  return out;
}

absl::Status VerifyBundle(const std::string& tar, int64_t max_bytes) {
  return ForEachEntry(tar, max_bytes, [](archive*, archive_entry*, const std::string&, bool) {
    return absl::OkStatus();
  });
}

absl::Status VerifyBundleFd(int fd, int64_t max_bytes) {
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    return absl::InternalError(absl::StrCat("rewind bundle file: ", std::strerror(errno)));
  }
  return ForEachEntryOf(
      [fd](archive* a) { return archive_read_open_fd(a, fd, 64 * 1024); }, max_bytes,
      [](archive*, archive_entry*, const std::string&, bool) { return absl::OkStatus(); });
}

absl::StatusOr<std::string> BundleFileContent(const std::string& tar, const std::string& path,
                                              int64_t max_bytes, int64_t max_file_bytes) {
  std::optional<std::string> content;
  absl::Status s = ForEachEntry(
      tar, max_bytes,
      [&](archive* a, archive_entry* e, const std::string& name, bool is_dir) -> absl::Status {
        if (is_dir || name != path) return absl::OkStatus();
        if (archive_entry_size(e) > max_file_bytes) {
          return absl::ResourceExhaustedError(
              absl::StrCat("larger than ", max_file_bytes, " bytes"));
        }
        content.emplace();
        char buf[64 * 1024];
        la_ssize_t n;
        while ((n = archive_read_data(a, buf, sizeof(buf))) > 0) content->append(buf, n);
        if (n < 0) return absl::InvalidArgumentError("corrupt file in the bundle");
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (!content) return absl::NotFoundError("no such file in the bundle");
  return *std::move(content);
}

absl::Status UnpackBundle(const std::string& tar, const fs::path& dest, int64_t max_bytes) {
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) return absl::InternalError(absl::StrCat("create ", dest.string(), ": ", ec.message()));
  return ForEachEntry(
      tar, max_bytes,
      [&](archive* a, archive_entry* e, const std::string& path, bool is_dir) -> absl::Status {
        const fs::path target = dest / path;
        if (is_dir) {
          fs::create_directories(target, ec);
          return ec ? absl::InternalError(
                          absl::StrCat("mkdir ", target.string(), ": ", ec.message()))
                    : absl::OkStatus();
        }
        fs::create_directories(target.parent_path(), ec);
        std::ofstream out(target, std::ios::binary | std::ios::trunc);
        char buf[64 * 1024];
        la_ssize_t n;
        while ((n = archive_read_data(a, buf, sizeof(buf))) > 0) out.write(buf, n);
        if (n < 0 || !out) return absl::InternalError(absl::StrCat("extract ", path, " failed"));
        out.close();
        fs::permissions(target, (archive_entry_perm(e) & 0100) ? fs::perms(0755) : fs::perms(0644),
                        ec);
        return absl::OkStatus();
      });
}

namespace {

// Appends dir/rel to the raw archive a, streaming a file's content.
absl::Status AddRawEntry(archive* a, const fs::path& dir, const fs::path& rel) {
  const fs::path full = dir / rel;
  std::error_code ec;
  const bool is_dir = fs::is_directory(full, ec);
  std::ifstream in;
  int64_t size = 0;
  if (!is_dir) {
    in.open(full, std::ios::binary);
    size = static_cast<int64_t>(fs::file_size(full, ec));
    if (!in || ec) return absl::InternalError(absl::StrCat(full.string(), ": cannot be read"));
  }
  std::unique_ptr<archive_entry, EntryDeleter> e(archive_entry_new());
  archive_entry_set_pathname(e.get(), rel.generic_string().c_str());
  archive_entry_set_filetype(e.get(), is_dir ? AE_IFDIR : AE_IFREG);
  archive_entry_set_perm(e.get(), is_dir ? 0755 : 0644);
  archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
  archive_entry_set_mtime(e.get(), 0, 0);
  if (archive_write_header(a, e.get()) < ARCHIVE_WARN) {
    return absl::InternalError(absl::StrCat("pack ", rel.string(), ": ", archive_error_string(a)));
  }
  char buf[64 * 1024];
  int64_t left = size;  // exactly the size announced, even if the file grows meanwhile
  while (left > 0 && in) {
    in.read(buf, static_cast<std::streamsize>(std::min<int64_t>(left, sizeof(buf))));
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    if (archive_write_data(a, buf, static_cast<size_t>(n)) < 0) {
      return absl::InternalError(
          absl::StrCat("pack ", rel.string(), ": ", archive_error_string(a)));
    }
    left -= n;
  }
  if (left > 0) return absl::InternalError(absl::StrCat(full.string(), ": shrank while packed"));
  return absl::OkStatus();
}

// The entry's path under dest, refusing any existing component that is not
// a plain directory (a link planted under dest).
absl::StatusOr<fs::path> SafeTarget(const fs::path& dest, const std::string& path) {
  fs::path at = dest;
  const fs::path rel(path);
  for (auto it = rel.begin(); it != rel.end(); ++it) {
    if (it->empty() || *it == ".") continue;
    at /= *it;
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(at, ec);
    if (fs::is_symlink(st)) {
      return absl::InvalidArgumentError(absl::StrCat("entry '", path, "' passes a link"));
    }
  }
  return at;
}

absl::Status ExtractFile(archive* a, const fs::path& target, const std::string& path) {
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) return absl::InternalError(absl::StrCat("mkdir for ", path, ": ", ec.message()));
  const int fd =
      ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("create ", path, ": ", std::strerror(errno)));
  char buf[64 * 1024];
  la_ssize_t n;
  bool ok = true;
  while (ok && (n = archive_read_data(a, buf, sizeof(buf))) > 0) {
    ok = ::write(fd, buf, static_cast<size_t>(n)) == n;
  }
  ok = ok && n == 0;
  ::close(fd);
  if (!ok) return absl::InternalError(absl::StrCat("extract ", path, " failed"));
  return absl::OkStatus();
}

absl::Status RewindFd(int fd) {
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    return absl::InternalError(absl::StrCat("rewind archive file: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> PackRawArchive(const fs::path& dir, const fs::path& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("directory ", dir.string(), " not found"));
  }
  absl::StatusOr<std::vector<fs::path>> entries = BundleEntries(dir, /*raw=*/true);
  if (!entries.ok()) return entries.status();
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("create ", out.string(), ": ", std::strerror(errno)));
  }
  std::unique_ptr<archive, ArchiveWriteDeleter> a(archive_write_new());
  archive_write_set_format_pax_restricted(a.get());
  archive_write_add_filter_gzip(a.get());
  archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr);  // no mtime: same bytes
  absl::Status s = archive_write_open_fd(a.get(), fd) == ARCHIVE_OK
                       ? absl::OkStatus()
                       : absl::InternalError(archive_error_string(a.get()));
  ThreadLocale utf8("C.UTF-8");
  for (size_t i = 0; s.ok() && i < entries->size(); ++i)
    s = AddRawEntry(a.get(), dir, (*entries)[i]);
  if (s.ok() && archive_write_close(a.get()) != ARCHIVE_OK) {
    s = absl::InternalError(
        absl::StrCat("pack ", dir.string(), ": ", archive_error_string(a.get())));
  }
  a.reset();
  if (s.ok() && ::fsync(fd) != 0) s = absl::InternalError(std::strerror(errno));
  ::close(fd);
  if (!s.ok()) return s;
  return static_cast<int64_t>(entries->size());
}

absl::Status VerifyRawArchiveFd(int fd, int64_t max_unpacked) {
  if (auto s = RewindFd(fd); !s.ok()) return s;
  return ForEachEntryOf(
      [fd](archive* a) { return archive_read_open_fd(a, fd, 64 * 1024); }, max_unpacked,
      [](archive*, archive_entry*, const std::string&, bool) { return absl::OkStatus(); },
      /*compressed=*/true);
}

absl::Status UnpackRawArchiveFd(int fd, const fs::path& dest, int64_t max_unpacked) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dest, ec)) &&
      (!fs::is_directory(fs::symlink_status(dest, ec)) || !fs::is_empty(dest, ec))) {
    return absl::FailedPreconditionError(
        absl::StrCat(dest.string(), " exists and is not an empty directory"));
  }
  fs::create_directories(dest, ec);
  if (ec) return absl::InternalError(absl::StrCat("create ", dest.string(), ": ", ec.message()));
  if (auto s = RewindFd(fd); !s.ok()) return s;
  return ForEachEntryOf(
      [fd](archive* a) { return archive_read_open_fd(a, fd, 64 * 1024); }, max_unpacked,
      [&](archive* a, archive_entry*, const std::string& path, bool is_dir) -> absl::Status {
        auto target = SafeTarget(dest, path);
        if (!target.ok()) return target.status();
        if (!is_dir) return ExtractFile(a, *target, path);
        fs::create_directories(*target, ec);
        return ec ? absl::InternalError(absl::StrCat("mkdir ", path, ": ", ec.message()))
                  : absl::OkStatus();
      },
      /*compressed=*/true);
}

}  // namespace npuperf
