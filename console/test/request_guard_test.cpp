#include <gtest/gtest.h>

#include "pgmq/console/request_guard.hpp"

using namespace pgmq::console;

namespace {

const std::string kToken(64, 'a');

RequestFacts Post(const std::string &host = "127.0.0.1:8432")
{
	return {"POST", host, "http://" + host, "same-origin", kToken, "application/json"};
}

}  // namespace

TEST(RequestGuard, AcceptsTheConsolesOwnNamesOnly)
{
	RequestGuard guard("127.0.0.1", 8432, {}, kToken);
	for (const char *host : {"127.0.0.1:8432", "localhost:8432", "LOCALHOST:8432", "[::1]:8432"})
		EXPECT_EQ(guard.RefuseRead({"GET", host, "", "", "", ""}), "") << host;
	// DNS rebinding: a foreign name that resolves to 127.0.0.1.
	EXPECT_NE(guard.RefuseRead({"GET", "evil.example:8432", "", "", "", ""}), "");
	EXPECT_NE(guard.RefuseRead({"GET", "127.0.0.1:9999", "", "", "", ""}), "");
	EXPECT_NE(guard.RefuseRead({"GET", "", "", "", "", ""}), "");
}

TEST(RequestGuard, AllowedHostsAddNamesWithAndWithoutPort)
{
	RequestGuard guard("0.0.0.0", 8432, {"console.example"}, kToken);
	EXPECT_EQ(guard.RefuseRead({"GET", "console.example", "", "", "", ""}), "");
	EXPECT_EQ(guard.RefuseRead({"GET", "console.example:8432", "", "", "", ""}), "");
	EXPECT_NE(guard.RefuseRead({"GET", "localhost:8432", "", "", "", ""}), "");
}

TEST(RequestGuard, RefusesCrossSiteReads)
{
	RequestGuard guard("127.0.0.1", 8432, {}, kToken);
	EXPECT_NE(guard.RefuseRead({"GET", "127.0.0.1:8432", "", "cross-site", "", ""}), "");
	EXPECT_EQ(guard.RefuseRead({"GET", "127.0.0.1:8432", "", "none", "", ""}), "");
}

TEST(RequestGuard, ActionsNeedTokenJsonAndOwnOrigin)
{
	RequestGuard guard("127.0.0.1", 8432, {}, kToken);
	EXPECT_EQ(guard.RefuseAction(Post()), "");
	RequestFacts facts = Post();
	facts.origin = "";  // a non-browser client sends none
	EXPECT_EQ(guard.RefuseAction(facts), "");

	facts = Post();
	facts.token = "";
	EXPECT_NE(guard.RefuseAction(facts), "");
	facts.token = std::string(63, 'a') + "b";
	EXPECT_NE(guard.RefuseAction(facts), "");
	facts = Post();
	facts.content_type = "application/x-www-form-urlencoded";
	EXPECT_NE(guard.RefuseAction(facts), "");
	facts = Post();
	facts.origin = "http://evil.example";
	EXPECT_NE(guard.RefuseAction(facts), "");
	facts = Post();
	facts.method = "GET";
	EXPECT_NE(guard.RefuseAction(facts), "");
}

TEST(RequestGuard, TokensAreFreshAndComparedWhole)
{
	std::string a = NewSessionToken(), b = NewSessionToken();
	EXPECT_EQ(a.size(), 64u);
	EXPECT_NE(a, b);
	EXPECT_TRUE(SameSecret(a, a));
	EXPECT_FALSE(SameSecret(a, b));
	EXPECT_FALSE(SameSecret(a, a.substr(1)));
}
