#include "common/bundle_tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>

#include <algorithm>
#include <fstream>
#include <memory>
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

absl::Status CheckEntryPath(const std::string& path) {
  if (path.empty() || path.front() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("bundle entry '", path, "' is absolute or empty"));
  }
  for (const auto& part : fs::path(path)) {
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("bundle entry '", path, "' leaves the directory"));
    }
  }
  return absl::OkStatus();
}

la_ssize_t AppendToString(archive*, void* out, const void* buf, size_t n) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

// Walks the archive, checking each entry; calls on_entry for accepted ones.
template <typename F>
absl::Status ForEachEntry(const std::string& tar, int64_t max_bytes, F&& on_entry) {
  ThreadLocale utf8("C.UTF-8");  // UTF-8 names convert to the same bytes (PackBundle)
  std::unique_ptr<archive, ArchiveReadDeleter> a(archive_read_new());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), tar.data(), tar.size()) != ARCHIVE_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("bundle is not a tar: ", archive_error_string(a.get())));
  }
  int64_t total = 0;
  archive_entry* entry = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK) {
    const std::string path = archive_entry_pathname(entry);
    if (auto s = CheckEntryPath(path); !s.ok()) return s;
    const auto type = archive_entry_filetype(entry);
    if (type != AE_IFREG && type != AE_IFDIR) {
      return absl::InvalidArgumentError(
          absl::StrCat("bundle entry '", path, "' is not a file or directory"));
    }
    total += archive_entry_size(entry);
    if (total > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("bundle unpacks past ", max_bytes, " bytes"));
    }
    if (auto s = on_entry(a.get(), entry, path, type == AE_IFDIR); !s.ok()) return s;
  }
  if (rc != ARCHIVE_EOF) {
    return absl::InvalidArgumentError(
        absl::StrCat("corrupt bundle: ", archive_error_string(a.get())));
  }
  return absl::OkStatus();
}

// The paths under dir that go into a bundle, relative and sorted; only
// regular files and directories.
absl::StatusOr<std::vector<fs::path>> BundleEntries(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const fs::path rel = fs::relative(it->path(), dir);
    if (Skipped(rel)) {
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

}  // namespace

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

absl::Status VerifyBundle(const std::string& tar, int64_t max_bytes) {
  return ForEachEntry(tar, max_bytes, [](archive*, archive_entry*, const std::string&, bool) {
    return absl::OkStatus();
  });
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

}  // namespace npuperf
