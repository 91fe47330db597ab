#include "common/status_util.h"

#include "gtest/gtest.h"

namespace npuperf {
namespace {

TEST(StatusUtilTest, FieldViolationsSurviveTheGrpcRoundTrip) {
  absl::Status s = InvalidArgumentWithFields(
      {{"spec.operators[0].op_name", "give exactly one"}, {"spec.priority", "must be in -10..10"}});
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("spec.priority"), absl::string_view::npos);
  grpc::Status g = ToGrpcStatus(s);
  EXPECT_EQ(g.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_FALSE(g.error_details().empty());
  absl::Status back = FromGrpcStatus(g);
  auto fields = FieldViolationsOf(back);
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].field, "spec.operators[0].op_name");
  EXPECT_EQ(fields[1].description, "must be in -10..10");
}

TEST(StatusUtilTest, ErrorReasonsSurviveTheGrpcRoundTrip) {
  absl::Status s = WithErrorReason(absl::PermissionDeniedError("not yours"), "FOREIGN_AGENT");
  EXPECT_EQ(ErrorReasonOf(s), "FOREIGN_AGENT");
  absl::Status back = FromGrpcStatus(ToGrpcStatus(s));
  EXPECT_TRUE(absl::IsPermissionDenied(back));
  EXPECT_EQ(ErrorReasonOf(back), "FOREIGN_AGENT");
  EXPECT_EQ(ErrorReasonOf(absl::PermissionDeniedError("plain")), "");
  // Field violations and a reason travel together.
  absl::Status both = WithErrorReason(InvalidArgumentWithFields({{"f", "bad"}}), "R");
  absl::Status both_back = FromGrpcStatus(ToGrpcStatus(both));
  EXPECT_EQ(FieldViolationsOf(both_back).size(), 1u);
  EXPECT_EQ(ErrorReasonOf(both_back), "R");
}

TEST(StatusUtilTest, CodesMapOneToOneAndMessagesAreCut) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_EQ(ToGrpcStatus(absl::FailedPreconditionError("stale")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(ToGrpcStatus(absl::NotFoundError(std::string(5000, 'x'))).error_message().size(),
            1024u);
  EXPECT_TRUE(FieldViolationsOf(absl::InternalError("x")).empty());
}

TEST(StatusUtilTest, ManyOrLongViolationsStayUnderTheTrailerLimit) {
  std::vector<FieldViolation> many;
  for (int i = 0; i < 10'000; ++i) {
    many.push_back({"spec.operators[" + std::to_string(i) + "].name", std::string(1000, 'x')});
  }
  grpc::Status g = ToGrpcStatus(InvalidArgumentWithFields(many));
  // grpc-status-details-bin travels base64-encoded beside grpc-message: both under 8 KiB.
  const size_t trailer = (g.error_details().size() + 2) / 3 * 4 + g.error_message().size();
  EXPECT_LT(trailer, 7500u);
  EXPECT_LE(g.error_message().size(), 1024u);
  auto back = FieldViolationsOf(FromGrpcStatus(g));
  ASSERT_GE(back.size(), 2u);
  EXPECT_EQ(back[0].description.size(), 256u);
  EXPECT_EQ(back.back().field, "...");
  EXPECT_NE(back.back().description.find("more"), std::string::npos);
}

TEST(StatusUtilTest, FieldViolationsTravelOnOtherCodesToo) {
  absl::Status s = StatusWithFields(absl::StatusCode::kAlreadyExists, "key reused",
                                    {{"spec.params.repeats", "differs"}});
  EXPECT_TRUE(absl::IsAlreadyExists(s));
  auto back = FieldViolationsOf(FromGrpcStatus(ToGrpcStatus(s)));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].field, "spec.params.repeats");
}

}  // namespace
}  // namespace npuperf
