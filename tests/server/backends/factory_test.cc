// RedactDbUrl: what the server logs of --db never holds a password.
#include "server/backends/factory.h"

#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

TEST(RedactDbUrlTest, TheUserInfoPasswordIsHidden) {
  EXPECT_EQ(RedactDbUrl("postgres://npuperf:s3cr:et@db.example:5432/npuperf"),
            "postgres://npuperf:***@db.example:5432/npuperf");
  EXPECT_EQ(RedactDbUrl("postgresql://u:p%40ss@h/db?sslmode=require"),
            "postgresql://u:***@h/db?sslmode=require");
}

TEST(RedactDbUrlTest, PasswordParametersAreHidden) {
  EXPECT_EQ(RedactDbUrl("postgres://u@h/db?password=x&sslmode=require"),
            "postgres://u@h/db?password=***&sslmode=require");
  EXPECT_EQ(RedactDbUrl("host=h dbname=d password=abc user=u"),
            "host=h dbname=d password=*** user=u");
}

TEST(RedactDbUrlTest, UrlsWithoutSecretsAreUnchanged) {
  for (const char* db : {"sqlite:/var/lib/npuperf/npuperf.db", "postgres://npuperf@db/npuperf",
                         "postgres://db.example/npuperf?user=a@b", "sqlite:/tmp/a:b@c.db"}) {
    EXPECT_EQ(RedactDbUrl(db), db);
  }
}

}  // namespace
}  // namespace npuperf::server
