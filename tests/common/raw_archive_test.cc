// Raw output archives (issue 19): PackRawArchive, VerifyRawArchiveFd and the
// safe extraction `npuperf fetch` relies on, against hand-built hostile
// gzip tars.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/bundle_tar.h"
#include "common/sha256.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf {
namespace {
namespace fs = std::filesystem;

struct Entry {
  std::string path;
  int type = AE_IFREG;
  std::string content;
  std::string link;  // symlink target, or hardlink source when hardlink
  bool hardlink = false;
};

Entry Of(std::string path, int type, std::string content = "", std::string link = "",
         bool hardlink = false) {
  return Entry{std::move(path), type, std::move(content), std::move(link), hardlink};
}

// A gzip tar file of the entries, built by hand (what a hostile server or a
// tampered store could send).
fs::path HostileArchive(const fs::path& dir, const std::vector<Entry>& entries) {
  const fs::path out = dir / "hostile.tar.gz";
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_gzip(a);
  archive_write_open_filename(a, out.c_str());
  for (const Entry& en : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, en.path.c_str());
    archive_entry_set_filetype(e, en.type);
    archive_entry_set_perm(e, 0644);
    if (en.type == AE_IFLNK) archive_entry_set_symlink(e, en.link.c_str());
    if (en.hardlink) archive_entry_set_hardlink(e, en.link.c_str());
    archive_entry_set_size(e, static_cast<la_int64_t>(en.content.size()));
    archive_write_header(a, e);
    if (!en.content.empty()) archive_write_data(a, en.content.data(), en.content.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

absl::Status Unpack(const fs::path& archive_path, const fs::path& dest, int64_t max = 1 << 20) {
  const int fd = ::open(archive_path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  absl::Status s = UnpackRawArchiveFd(fd, dest, max);
  ::close(fd);
  return s;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(RawArchive, PacksTheTreeDeterministicallyAndUnpacksItBack) {
  testing::TempDir tmp;
  const fs::path tree = tmp.path() / "session";
  fs::create_directories(tree / "repeat_1" / "PROF_a" / "device_0");
  std::ofstream(tree / "repeat_1" / "PROF_a" / "op_summary.csv") << "Op Name,Task Duration\nk,1\n";
  std::ofstream(tree / "collection.log") << "log\n";
  fs::create_symlink("/etc/passwd", tree / "leak");  // left out, never followed
  ASSERT_TRUE(PackRawArchive(tree, tmp.path() / "a.tar.gz").ok());
  ASSERT_TRUE(PackRawArchive(tree, tmp.path() / "b.tar.gz").ok());
  EXPECT_EQ(Sha256Hex(Read(tmp.path() / "a.tar.gz")), Sha256Hex(Read(tmp.path() / "b.tar.gz")));
  const int fd = ::open((tmp.path() / "a.tar.gz").c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_TRUE(VerifyRawArchiveFd(fd, 1 << 20).ok());
  ::close(fd);
  ASSERT_TRUE(Unpack(tmp.path() / "a.tar.gz", tmp.path() / "out").ok());
  EXPECT_EQ(Read(tmp.path() / "out" / "repeat_1" / "PROF_a" / "op_summary.csv"),
            "Op Name,Task Duration\nk,1\n");
  EXPECT_TRUE(fs::is_directory(tmp.path() / "out" / "repeat_1" / "PROF_a" / "device_0"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tmp.path() / "out" / "leak")));
}

TEST(RawArchive, RefusesEntriesThatCouldEscapeOrAreNotPlainFiles) {
  testing::TempDir tmp;
  const std::vector<std::pair<std::string, std::vector<Entry>>> cases = {
      {"absolute", {Of("/tmp/evil", AE_IFREG, "x")}},
      {"dot-dot", {Of("a/../../evil", AE_IFREG, "x")}},
      {"symlink", {Of("link", AE_IFLNK, "", "/etc")}},
      {"device", {Of("dev", AE_IFCHR)}},
      {"fifo", {Of("fifo", AE_IFIFO)}},
      {"hardlink", {Of("f", AE_IFREG, "x"), Of("h", AE_IFREG, "", "f", true)}},
  };
  for (const auto& [name, entries] : cases) {
    const fs::path dest = tmp.path() / ("out-" + name);
    const absl::Status s = Unpack(HostileArchive(tmp.path(), entries), dest);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << name << ": " << s;
    EXPECT_NE(s.message().find("archive entry"), std::string::npos) << name << ": " << s;
  }
  EXPECT_FALSE(fs::exists("/tmp/evil"));
}

TEST(RawArchive, CapsTheUnpackedSizeAndNeedsAnEmptyDestination) {
  testing::TempDir tmp;
  const fs::path big = HostileArchive(tmp.path(), {Of("big", AE_IFREG, std::string(5000, 'z'))});
  const absl::Status s = Unpack(big, tmp.path() / "out", 4096);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  fs::create_directories(tmp.path() / "full");
  std::ofstream(tmp.path() / "full" / "x") << "x";
  EXPECT_TRUE(absl::IsFailedPrecondition(Unpack(big, tmp.path() / "full")));
  const fs::path junk = tmp.path() / "junk";
  std::ofstream(junk) << std::string(100, 'j');
  EXPECT_TRUE(absl::IsInvalidArgument(Unpack(junk, tmp.path() / "out2")));
}

}  // namespace
}  // namespace npuperf
