// The agent client certificate rule (core/agent_certificate.h): which agent
// a certificate names, and when an AgentService call may act with it.
#include "server/core/agent_certificate.h"

#include "gtest/gtest.h"
#include "server/core/job_rules.h"

namespace npuperf::server {
namespace {

PeerCertificate Cert(std::vector<std::string> dns, std::string cn = "") {
  return PeerCertificate{true, std::move(dns), std::move(cn)};
}

TEST(AgentCertificateTest, OneDnsNameElseTheCommonName) {
  EXPECT_EQ(CertificateAgentName(Cert({"h1"}, "other")).value(), "h1");
  EXPECT_EQ(CertificateAgentName(Cert({}, "h2")).value(), "h2");
  auto two = CertificateAgentName(Cert({"h1", "h2"}, "h1"));
  EXPECT_EQ(AgentRefusalOf(two.status()), AgentRefusal::kCertMismatch) << two.status();
  EXPECT_NE(two.status().message().find("h1, h2"), std::string::npos) << two.status();
  auto none = CertificateAgentName(Cert({}, ""));
  EXPECT_TRUE(absl::IsPermissionDenied(none.status())) << none.status();
  EXPECT_NE(none.status().message().find("names no agent"), std::string::npos);
}

TEST(AgentCertificateTest, NoCertificateIsRefusedOnlyWhenRequired) {
  const AgentIdentity h1 = AgentIdentity::ForHost("h1");
  auto optional = DecideAgentCertificate(PeerCertificate{}, h1, false);
  ASSERT_TRUE(optional.ok()) << optional.status();
  EXPECT_EQ(optional->host(), "h1");
  auto required = DecideAgentCertificate(PeerCertificate{}, h1, true);
  EXPECT_TRUE(absl::IsUnauthenticated(required.status())) << required.status();
  EXPECT_EQ(AgentRefusalOf(required.status()), AgentRefusal::kNoClientCert);
  EXPECT_NE(required.status().message().find("--require-agent-cert"), std::string::npos);
  EXPECT_NE(required.status().message().find("'h1'"), std::string::npos);
}

TEST(AgentCertificateTest, ACertificateMustNameTheTokensHost) {
  const AgentIdentity h1 = AgentIdentity::ForHost("h1");
  for (bool require : {false, true}) {
    auto own = DecideAgentCertificate(Cert({"h1"}), h1, require);
    ASSERT_TRUE(own.ok()) << own.status();
    EXPECT_EQ(own->host(), "h1");
    auto other = DecideAgentCertificate(Cert({"h2"}), h1, require);
    EXPECT_TRUE(absl::IsPermissionDenied(other.status())) << other.status();
    EXPECT_EQ(AgentRefusalOf(other.status()), AgentRefusal::kCertMismatch);
    EXPECT_NE(other.status().message().find("names agent 'h2'"), std::string::npos)
        << other.status();
    EXPECT_NE(other.status().message().find("host 'h1'"), std::string::npos);
    // The CN does not count once a DNS name is there.
    EXPECT_FALSE(DecideAgentCertificate(Cert({"h2"}, "h1"), h1, require).ok());
    EXPECT_TRUE(DecideAgentCertificate(Cert({}, "h1"), h1, require).ok());
  }
}

TEST(AgentCertificateTest, AnUnboundTokenIsBoundByTheCertificate) {
  auto bound = DecideAgentCertificate(Cert({"h2"}), AgentIdentity::Unbound(), true);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_TRUE(bound->MayActFor("h2"));
  EXPECT_FALSE(bound->MayActFor("h1"));
  auto none = DecideAgentCertificate(PeerCertificate{}, AgentIdentity::Unbound(), false);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->bound());
}

TEST(AgentCertificateTest, RefusalNamesAreMetricLabels) {
  EXPECT_STREQ(AgentRefusalName(AgentRefusal::kNoClientCert), "no_client_cert");
  EXPECT_STREQ(AgentRefusalName(AgentRefusal::kCertMismatch), "cert_mismatch");
}

}  // namespace
}  // namespace npuperf::server
