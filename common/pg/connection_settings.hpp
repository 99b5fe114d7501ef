// common/pg/connection_settings.hpp
// What pgmq-relay and pgmq-console share about reaching PostgreSQL as a
// managed service wants it: TLS through libpq's own settings (sslmode,
// sslrootcert, sslcert, sslkey, in the connection string or as PGSSLMODE,
// ...), a password from a file or the environment but never from the command
// line (where ps and /proc/PID/cmdline show it to every user), and a failed
// connection's message completed with the setting to fix.
#pragma once

#include <string>

namespace pgmq::pg {

// Whether a libpq connection string (key=value words or a postgresql:// URI)
// carries a password. Throws std::invalid_argument with libpq's message when
// it does not parse.
bool ConninfoHasPassword(const std::string &conninfo);

// The password in a file: its first line, without the line break. Throws
// std::runtime_error naming the file when it cannot be read or starts with
// an empty line.
std::string ReadPasswordFile(const std::string &path);

// For a connection failure libpq reported, the likely cause and the setting
// that fixes it, as a sentence ("" when the message is not one it knows).
// password_setting names where this program takes its password.
std::string ConnectionHint(const std::string &libpq_message, const std::string &password_setting);

// The message, and its hint after " -- " when there is one.
std::string WithHint(const std::string &libpq_message, const std::string &password_setting);

}  // namespace pgmq::pg
