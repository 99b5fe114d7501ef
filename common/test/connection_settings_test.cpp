// common/test/connection_settings_test.cpp
#include "connection_settings.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <gtest/gtest.h>

using namespace pgmq::pg;

TEST(ConnectionSettings, FindsAPasswordInEitherForm)
{
	EXPECT_TRUE(ConninfoHasPassword("host=db dbname=app password=secret"));
	EXPECT_TRUE(ConninfoHasPassword("postgresql://app:secret@db/app"));
	EXPECT_FALSE(ConninfoHasPassword("host=db dbname=app sslmode=verify-full"));
	EXPECT_FALSE(ConninfoHasPassword("postgresql://app@db/app?sslmode=verify-full"));
	EXPECT_FALSE(ConninfoHasPassword(""));
	EXPECT_THROW(ConninfoHasPassword("host=db nonsense"), std::invalid_argument);
}

TEST(ConnectionSettings, ReadsThePasswordFilesFirstLine)
{
	std::string path = testing::TempDir() + "pgmq_password_test";
	std::ofstream(path) << "s3cret\r\nsecond line\n";
	EXPECT_EQ(ReadPasswordFile(path), "s3cret");
	std::ofstream(path) << "\nlater\n";
	EXPECT_THROW(ReadPasswordFile(path), std::runtime_error);
	std::remove(path.c_str());
	try {
		ReadPasswordFile(path);
		FAIL() << "a missing file was read";
	} catch (const std::runtime_error &e) {
		EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
	}
}

TEST(ConnectionSettings, HintsNameTheSettingToFix)
{
	std::string hint = ConnectionHint(
		"connection to server at \"127.0.0.1\", port 5432 failed: server certificate for \"localhost\" does not match "
		"host name \"127.0.0.1\"",
		"--password-file");
	EXPECT_NE(hint.find("set host"), std::string::npos) << hint;
	EXPECT_NE(hint.find("\"localhost\", not \"127.0.0.1\""), std::string::npos) << hint;
	EXPECT_NE(ConnectionHint("server certificate for \"db.example\" (and 2 other names) does not match host name \"x\"",
							 "p")
				  .find("\"db.example\""),
			  std::string::npos);
	EXPECT_NE(ConnectionHint("connection to server at \"localhost\" failed: SSL error: certificate verify failed", "p")
				  .find("sslrootcert"),
			  std::string::npos);
	EXPECT_NE(ConnectionHint("root certificate file \"/root/.postgresql/root.crt\" does not exist", "p").find("sslrootcert"),
			  std::string::npos);
	EXPECT_NE(ConnectionHint("could not open certificate file \"/x.pem\": No such file", "p").find("sslcert"),
			  std::string::npos);
	EXPECT_NE(ConnectionHint("private key file \"/k\" has group or world access", "p").find("0600"), std::string::npos);
	EXPECT_NE(ConnectionHint("FATAL:  connection requires a valid client certificate", "p").find("sslcert"),
			  std::string::npos);
	EXPECT_NE(ConnectionHint("server does not support SSL, but SSL was required", "p").find("no TLS"), std::string::npos);
	EXPECT_NE(ConnectionHint("FATAL:  no pg_hba.conf entry for host \"1.2.3.4\", user \"a\", database \"b\", no "
							 "encryption",
							 "p")
				  .find("sslmode=verify-full"),
			  std::string::npos);
	EXPECT_NE(ConnectionHint("FATAL:  password authentication failed for user \"app\"", "postgres_password_file")
				  .find("postgres_password_file, PGPASSWORD or PGPASSFILE"),
			  std::string::npos);
	EXPECT_EQ(ConnectionHint("could not translate host name \"db\" to address", "p"), "");
}

TEST(ConnectionSettings, WithHintKeepsTheMessage)
{
	EXPECT_EQ(WithHint("something else", "p"), "something else");
	std::string text = WithHint("fe_sendauth: no password supplied", "--password-file");
	EXPECT_EQ(text.rfind("fe_sendauth: no password supplied -- check the password: --password-file", 0), 0u) << text;
}
