#include "common/bundle_tar.h"

#include <archive.h>
#include <archive_entry.h>

#include <clocale>
#include <filesystem>
#include <fstream>

#include "common/clock.h"
#include "common/sha256.h"
#include "gtest/gtest.h"

namespace npuperf {
namespace {
namespace fs = std::filesystem;

class BundleTarTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("bundle_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "op" / "sub");
    Write(root_ / "op" / "test_op.py", "print('hi')\n");
    Write(root_ / "op" / "sub" / "data.txt", "data");
    fs::create_directories(root_ / "op" / "__pycache__");
    Write(root_ / "op" / "__pycache__" / "x.pyc", "junk");
    fs::create_directories(root_ / "op" / "docs" / "perf" / "round_001");
    Write(root_ / "op" / "docs" / "perf" / "round_001" / "summary.txt", "old");
  }
  void TearDown() override { fs::remove_all(root_); }
  static void Write(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

  // A tar with one entry of the given path and type, built by hand.
  static std::string TarWith(const std::string& path, int type) {
    std::string out;
    archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_open(
        a, &out, nullptr,
        [](archive*, void* o, const void* b, size_t n) -> la_ssize_t {
          static_cast<std::string*>(o)->append(static_cast<const char*>(b), n);
          return static_cast<la_ssize_t>(n);
        },
        nullptr);
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, path.c_str());
    archive_entry_set_filetype(e, type);
    if (type == AE_IFLNK) archive_entry_set_symlink(e, "/etc/passwd");
    archive_entry_set_size(e, 0);
    archive_write_header(a, e);
    archive_entry_free(e);
    archive_write_close(a);
    archive_write_free(a);
    return out;
  }

  fs::path root_;
};

TEST_F(BundleTarTest, PackIsDeterministicAndRoundTrips) {
  auto a = PackBundle(root_ / "op", 1 << 20);
  ASSERT_TRUE(a.ok()) << a.status();
  fs::last_write_time(root_ / "op" / "test_op.py",
                      std::chrono::file_clock::from_sys(RealClock().SystemNow()));
  auto b = PackBundle(root_ / "op", 1 << 20);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Sha256Hex(*a), Sha256Hex(*b));
  ASSERT_TRUE(VerifyBundle(*a, 1 << 20).ok());
  ASSERT_TRUE(UnpackBundle(*a, root_ / "out", 1 << 20).ok());
  std::ifstream in(root_ / "out" / "sub" / "data.txt");
  std::string s;
  in >> s;
  EXPECT_EQ(s, "data");
  EXPECT_FALSE(fs::exists(root_ / "out" / "__pycache__"));
  EXPECT_FALSE(fs::exists(root_ / "out" / "docs" / "perf"));
}

TEST_F(BundleTarTest, BundleFileContentReadsOneFile) {
  auto tar = PackBundle(root_ / "op", 1 << 20);
  ASSERT_TRUE(tar.ok()) << tar.status();
  auto data = BundleFileContent(*tar, "sub/data.txt", 1 << 20, 4);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(*data, "data");
  EXPECT_TRUE(
      absl::IsResourceExhausted(BundleFileContent(*tar, "sub/data.txt", 1 << 20, 3).status()));
  const absl::Status missing = BundleFileContent(*tar, "sub/none.txt", 1 << 20, 4).status();
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_EQ(missing.message().find("none.txt"), std::string::npos) << "never quotes the path";
  EXPECT_TRUE(absl::IsNotFound(BundleFileContent(*tar, "sub", 1 << 20, 4).status()));  // a dir
  EXPECT_TRUE(absl::IsInvalidArgument(
      BundleFileContent(TarWith("../x", AE_IFREG), "../x", 1 << 20, 4).status()));
}

// Issue 14: libarchive converts names through LC_CTYPE; the packer and reader
// use C.UTF-8 on their thread whatever the process locale (the C locale here),
// so a bundle holding 说明.md round-trips byte for byte: the same sha256 when
// packed again, from the source and from the unpacked copy.
TEST_F(BundleTarTest, NonAsciiNamesRoundTripWithTheSameHash) {
  const std::string name = "说明.md";
  Write(root_ / "op" / name, "# 说明\n");
  fs::create_directories(root_ / "op" / "数据");
  Write(root_ / "op" / "数据" / "é.txt", "e");

  std::setlocale(LC_CTYPE, "C");
  auto a = PackBundle(root_ / "op", 1 << 20);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_NE(a->find(name), std::string::npos) << "the name is not stored as UTF-8";
  ASSERT_TRUE(VerifyBundle(*a, 1 << 20).ok());
  ASSERT_TRUE(UnpackBundle(*a, root_ / "out", 1 << 20).ok());
  std::ifstream in(root_ / "out" / name);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "# 说明\n");
  EXPECT_TRUE(fs::exists(root_ / "out" / "数据" / "é.txt"));
  auto again = PackBundle(root_ / "op", 1 << 20);
  auto repacked = PackBundle(root_ / "out", 1 << 20);
  ASSERT_TRUE(again.ok() && repacked.ok());
  EXPECT_EQ(Sha256Hex(*again), Sha256Hex(*a));
  EXPECT_EQ(Sha256Hex(*repacked), Sha256Hex(*a));
}

TEST_F(BundleTarTest, NonAsciiNamesAreStoredAsTheirBytes) {
  const std::string utf8 = "\xe7\xae\x97\xe5\xad\x90";  // UTF-8, in the C locale
  const std::string binary = "bad\xff\xfe.bin";         // not UTF-8 at all
  fs::create_directories(root_ / "op" / utf8);
  Write(root_ / "op" / utf8 / "caf\xc3\xa9.py", "u");
  Write(root_ / "op" / binary, "b");
  auto tar = PackBundle(root_ / "op", 1 << 20);
  ASSERT_TRUE(tar.ok()) << tar.status();
  EXPECT_NE(tar->find("hdrcharset=BINARY"), std::string::npos);  // for the binary one only
  EXPECT_EQ(tar->find("hdrcharset"), tar->rfind("hdrcharset"));
  ASSERT_TRUE(UnpackBundle(*tar, root_ / "out", 1 << 20).ok());
  EXPECT_TRUE(fs::exists(root_ / "out" / utf8 / "caf\xc3\xa9.py"));
  EXPECT_TRUE(fs::exists(root_ / "out" / binary));
}

TEST_F(BundleTarTest, RefusesSymlinksWhenPacking) {
  fs::create_symlink("/etc/passwd", root_ / "op" / "link");
  EXPECT_FALSE(PackBundle(root_ / "op", 1 << 20).ok());
}

TEST_F(BundleTarTest, RefusesEscapingEntries) {
  EXPECT_FALSE(VerifyBundle(TarWith("../evil", AE_IFREG), 1 << 20).ok());
  EXPECT_FALSE(VerifyBundle(TarWith("/abs", AE_IFREG), 1 << 20).ok());
  EXPECT_FALSE(VerifyBundle(TarWith("a/../../b", AE_IFREG), 1 << 20).ok());
  EXPECT_FALSE(UnpackBundle(TarWith("link", AE_IFLNK), root_ / "x", 1 << 20).ok());
  EXPECT_FALSE(fs::exists(root_ / "x" / "link"));
  EXPECT_TRUE(VerifyBundle(TarWith("ok/file", AE_IFREG), 1 << 20).ok());
  EXPECT_FALSE(VerifyBundle("not a tar at all", 1 << 20).ok());
}

TEST_F(BundleTarTest, EnforcesSizeLimit) {
  Write(root_ / "op" / "big.bin", std::string(4096, 'x'));
  EXPECT_TRUE(absl::IsResourceExhausted(PackBundle(root_ / "op", 1024).status()));
}

}  // namespace
}  // namespace npuperf
