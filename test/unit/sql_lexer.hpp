// test/unit/sql_lexer.hpp
// A small SQL tokenizer for the unit tests, and the hygiene rules every
// statement and DDL text of the core must follow:
//  - one statement, no comments, no string literals, no numbers but 0 and 1
//    (values travel as $n parameters; a caller may allow named constants);
//  - every function call and type cast is pg_catalog-qualified, every
//    operator is written OPERATOR(pg_catalog.x) (assignments in SET aside),
//    so a hostile search_path cannot redirect anything;
//  - every table is pgmq-qualified (or a CTE of the statement), queue objects
//    are always quoted identifiers, and SELECT * reads only a CTE (whose
//    columns the statement names), never a table.
// It only knows the SQL the core writes; it is not a general SQL parser.
#pragma once

#include <cctype>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pgmq_test {

enum class TokenKind { Word, QuotedIdent, String, Param, Number, Operator, Punct, Comment, Error };

struct Token {
	TokenKind kind;
	std::string text;  // QuotedIdent: the identifier with doubled quotes undone
};

inline bool IsWordStart(char c)
{
	const auto u = static_cast<unsigned char>(c);
	return std::isalpha(u) || c == '_' || u >= 0x80;
}

inline bool IsWordChar(char c) { return IsWordStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '$'; }

inline bool IsOperatorChar(char c) { return std::string_view("+-*/<>=~!@#%^&|`?").find(c) != std::string_view::npos; }

inline std::string Upper(std::string_view text)
{
	std::string out(text);
	for (char &c : out)
		c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
	return out;
}

// Skips a '...' literal starting at sql[i] == '\''; returns the index after it,
// or npos when it is not closed.
inline std::size_t SkipStringLiteral(std::string_view sql, std::size_t i)
{
	for (++i; i < sql.size(); ++i) {
		if (sql[i] == '\'') {
			if (i + 1 < sql.size() && sql[i + 1] == '\'') {
				++i;
				continue;
			}
			return i + 1;
		}
	}
	return std::string_view::npos;
}

inline std::vector<Token> Lex(std::string_view sql)
{
	std::vector<Token> out;
	const std::size_t n = sql.size();
	std::size_t i = 0;
	while (i < n) {
		const char c = sql[i];
		const char next = i + 1 < n ? sql[i + 1] : '\0';
		if (std::isspace(static_cast<unsigned char>(c))) {
			++i;
		} else if (c == '"') {
			std::string ident;
			bool closed = false;
			for (++i; i < n; ++i) {
				if (sql[i] == '"') {
					if (i + 1 < n && sql[i + 1] == '"') {
						ident.push_back('"');
						++i;
						continue;
					}
					closed = true;
					++i;
					break;
				}
				ident.push_back(sql[i]);
			}
			out.push_back({closed ? TokenKind::QuotedIdent : TokenKind::Error, ident});
		} else if (c == '\'') {
			const std::size_t end = SkipStringLiteral(sql, i);
			out.push_back({end == std::string_view::npos ? TokenKind::Error : TokenKind::String,
			               std::string(sql.substr(i, end == std::string_view::npos ? n - i : end - i))});
			i = end == std::string_view::npos ? n : end;
		} else if (c == '$' && std::isdigit(static_cast<unsigned char>(next))) {
			std::size_t j = i + 1;
			while (j < n && std::isdigit(static_cast<unsigned char>(sql[j])))
				++j;
			out.push_back({TokenKind::Param, std::string(sql.substr(i + 1, j - i - 1))});
			i = j;
		} else if (c == '$') {
			// Dollar quoting: $tag$ ... $tag$ is a string literal.
			const std::size_t tag_end = sql.find('$', i + 1);
			if (tag_end == std::string_view::npos) {
				out.push_back({TokenKind::Error, std::string(sql.substr(i))});
				break;
			}
			const std::string_view tag = sql.substr(i, tag_end - i + 1);
			const std::size_t close = sql.find(tag, tag_end + 1);
			const std::size_t end = close == std::string_view::npos ? n : close + tag.size();
			out.push_back({close == std::string_view::npos ? TokenKind::Error : TokenKind::String,
			               std::string(sql.substr(i, end - i))});
			i = end;
		} else if ((c == '-' && next == '-') || (c == '/' && next == '*')) {
			const std::size_t end = c == '-' ? sql.find('\n', i) : sql.find("*/", i + 2);
			const std::size_t stop = end == std::string_view::npos ? n : end + (c == '-' ? 0 : 2);
			out.push_back({TokenKind::Comment, std::string(sql.substr(i, stop - i))});
			i = stop;
		} else if (IsWordStart(c)) {
			std::size_t j = i;
			while (j < n && IsWordChar(sql[j]))
				++j;
			if (j < n && sql[j] == '\'') {
				// E'...', B'...', X'...', U&'...' style literals.
				const std::size_t end = SkipStringLiteral(sql, j);
				out.push_back({end == std::string_view::npos ? TokenKind::Error : TokenKind::String,
				               std::string(sql.substr(i, end == std::string_view::npos ? n - i : end - i))});
				i = end == std::string_view::npos ? n : end;
			} else {
				out.push_back({TokenKind::Word, std::string(sql.substr(i, j - i))});
				i = j;
			}
		} else if (std::isdigit(static_cast<unsigned char>(c))) {
			std::size_t j = i;
			while (j < n && (std::isdigit(static_cast<unsigned char>(sql[j])) || sql[j] == '.'))
				++j;
			out.push_back({TokenKind::Number, std::string(sql.substr(i, j - i))});
			i = j;
		} else if (c == ':' && next == ':') {
			out.push_back({TokenKind::Punct, "::"});
			i += 2;
		} else if (IsOperatorChar(c)) {
			std::size_t j = i;
			while (j < n && IsOperatorChar(sql[j]) && !(sql[j] == '-' && j + 1 < n && sql[j + 1] == '-') &&
			       !(sql[j] == '/' && j + 1 < n && sql[j + 1] == '*'))
				++j;
			out.push_back({TokenKind::Operator, std::string(sql.substr(i, j - i))});
			i = j;
		} else {
			out.push_back({TokenKind::Punct, std::string(1, c)});
			++i;
		}
	}
	return out;
}

// Balanced quotes of both kinds: a name cannot break out of its identifier.
inline bool QuotesBalanced(std::string_view sql)
{
	bool in_ident = false, in_string = false;
	for (char c : sql) {
		if (c == '"' && !in_string)
			in_ident = !in_ident;
		else if (c == '\'' && !in_ident)
			in_string = !in_string;
	}
	return !in_ident && !in_string;
}

inline std::vector<std::string> QuotedIdentifiers(std::string_view sql)
{
	std::vector<std::string> out;
	for (const Token &token : Lex(sql))
		if (token.kind == TokenKind::QuotedIdent)
			out.push_back(token.text);
	return out;
}

// The $n numbers a statement uses.
inline std::set<int> Params(std::string_view sql)
{
	std::set<int> out;
	for (const Token &token : Lex(sql))
		if (token.kind == TokenKind::Param)
			out.insert(std::stoi(token.text));
	return out;
}

inline int MaxParam(std::string_view sql)
{
	const std::set<int> params = Params(sql);
	return params.empty() ? 0 : *params.rbegin();
}

// The text with every quoted identifier replaced by "<id>": what is left is
// the part of the statement a queue name must never reach.
inline std::string Skeleton(std::string_view sql)
{
	std::string out;
	for (const Token &token : Lex(sql)) {
		if (!out.empty())
			out.push_back(' ');
		switch (token.kind) {
		case TokenKind::QuotedIdent:
			out += "<id>";
			break;
		case TokenKind::Param:
			out += "$" + token.text;
			break;
		default:
			out += token.text;
		}
	}
	return out;
}

namespace detail {

inline bool IsWord(const std::vector<Token> &t, std::size_t i, std::string_view upper_word)
{
	return i < t.size() && t[i].kind == TokenKind::Word && Upper(t[i].text) == upper_word;
}

inline bool IsPunct(const std::vector<Token> &t, std::size_t i, std::string_view punct)
{
	return i < t.size() && t[i].kind == TokenKind::Punct && t[i].text == punct;
}

// t[i - 2] t[i - 1] == schema "."
inline bool QualifiedBy(const std::vector<Token> &t, std::size_t i, std::string_view schema)
{
	return i >= 2 && IsPunct(t, i - 1, ".") && t[i - 2].kind == TokenKind::Word && t[i - 2].text == schema;
}

}  // namespace detail

// Fixed objects of schema pgmq that statements may name without quotes.
inline const std::set<std::string> &FixedPgmqObjects()
{
	static const std::set<std::string> objects = {"meta",        "notify_insert_throttle", "topic_bindings", "send",
	                                              "_send_batch", "policies",               "deduplication"};
	return objects;
}

// Every rule of the file comment that sql breaks, one line each; empty when
// clean. constants: literal tokens (as written, quotes included) that are
// fixed parts of the statement rather than values, e.g. a JSON key.
inline std::vector<std::string> HygieneProblems(std::string_view sql, const std::set<std::string> &constants = {})
{
	using detail::IsPunct;
	using detail::IsWord;
	using detail::QualifiedBy;
	const std::vector<Token> t = Lex(sql);
	std::vector<std::string> problems;
	auto problem = [&](std::size_t i, const std::string &what) {
		problems.push_back(what + " at token " + std::to_string(i) + " '" + (i < t.size() ? t[i].text : "") + "'");
	};

	// CTE names: <word> AS (
	std::set<std::string> ctes;
	for (std::size_t i = 0; i + 2 < t.size(); ++i)
		if (t[i].kind == TokenKind::Word && IsWord(t, i + 1, "AS") && IsPunct(t, i + 2, "("))
			ctes.insert(t[i].text);

	// Grammar, not functions: keywords before a parenthesised expression or
	// list, and the constructs Postgres resolves whatever the search_path.
	static const std::set<std::string> kGrammarBeforeParen = {
		"VALUES", "FROM", "AS",   "ANY",  "ARRAY", "ALL",  "IN",   "EXISTS", "FILTER", "SELECT",   "WHERE",    "AND",     "OR",
		"NOT",    "CASE", "WHEN", "THEN", "ELSE", "ON",   "IS",     "BY",     "LATERAL",  "COALESCE", "GREATEST", "EXTRACT",
		"LEAST",  "NULLIF", "OVER", "CONFLICT", "JOIN", "USING", "WITH"};
	static const std::set<std::string> kTableIntroducers = {"FROM", "INTO", "UPDATE", "USING", "TRUNCATE", "JOIN", "TABLE"};

	int depth = 0;
	int set_depth = -1;  // depth of the open SET clause, -1 when none
	for (std::size_t i = 0; i < t.size(); ++i) {
		const Token &tok = t[i];
		switch (tok.kind) {
		case TokenKind::Error:
			problem(i, "unterminated quote");
			break;
		case TokenKind::String:
			if (!constants.count(tok.text))
				problem(i, "string literal (values must be $n parameters)");
			break;
		case TokenKind::Comment:
			problem(i, "comment");
			break;
		case TokenKind::Number:
			if (tok.text != "0" && tok.text != "1" && !constants.count(tok.text))
				problem(i, "numeric literal other than 0 or 1");
			break;
		case TokenKind::Param:
			break;
		case TokenKind::QuotedIdent: {
			// pgmq."q_x", or a catalog object such as the collation pg_catalog."C".
			const bool qualified = QualifiedBy(t, i, "pgmq") || QualifiedBy(t, i, "pg_catalog");
			// CREATE INDEX [IF NOT EXISTS] "name": an index lives in its table's schema.
			const bool index_name = i >= 1 && (IsWord(t, i - 1, "INDEX") ||
			                                   (i >= 4 && IsWord(t, i - 1, "EXISTS") && IsWord(t, i - 4, "INDEX")));
			if (!qualified && !index_name)
				problem(i, "quoted identifier not qualified with a schema");
			break;
		}
		case TokenKind::Punct:
			if (tok.text == "(") {
				++depth;
			} else if (tok.text == ")") {
				--depth;
				if (set_depth > depth)
					set_depth = -1;
			} else if (tok.text == ";") {
				problem(i, "more than one statement");
			} else if (tok.text == "::") {
				if (!(i + 2 < t.size() && t[i + 1].kind == TokenKind::Word && t[i + 1].text == "pg_catalog" &&
				      IsPunct(t, i + 2, ".")))
					problem(i, "cast to a type not qualified with pg_catalog.");
			}
			break;
		case TokenKind::Operator: {
			const bool operator_form = i >= 3 && IsPunct(t, i - 1, ".") && t[i - 2].text == "pg_catalog" &&
			                           IsPunct(t, i - 3, "(") && i >= 4 && IsWord(t, i - 4, "OPERATOR") &&
			                           IsPunct(t, i + 1, ")");
			const bool count_star = tok.text == "*" && IsPunct(t, i - 1, "(") && IsPunct(t, i + 1, ")") && i >= 2 &&
			                        t[i - 2].kind == TokenKind::Word && QualifiedBy(t, i - 2, "pg_catalog");
			const bool star_of_cte = tok.text == "*" && IsWord(t, i - 1, "SELECT") && IsWord(t, i + 1, "FROM") &&
			                         i + 2 < t.size() && t[i + 2].kind == TokenKind::Word && ctes.count(t[i + 2].text) &&
			                         !IsPunct(t, i + 3, ".");
			// SET column = ..., or a storage parameter: WITH (name = value, ...).
			const bool assignment = tok.text == "=" && set_depth == depth && i >= 2 &&
			                        t[i - 1].kind == TokenKind::Word &&
			                        (IsWord(t, i - 2, "SET") || IsPunct(t, i - 2, ",") ||
			                         (IsPunct(t, i - 2, "(") && IsWord(t, i - 3, "WITH")));
			if (!operator_form && !count_star && !star_of_cte && !assignment)
				problem(i, "operator not written OPERATOR(pg_catalog.x)");
			break;
		}
		case TokenKind::Word: {
			const std::string upper = Upper(tok.text);
			if (upper == "SET") {
				set_depth = depth;
			} else if (upper == "WITH" && IsPunct(t, i + 1, "(")) {
				set_depth = depth + 1;
			} else if (set_depth == depth && (upper == "FROM" || upper == "WHERE" || upper == "RETURNING")) {
				set_depth = -1;
			}
			if (upper == "OPERATOR") {
				if (!(IsPunct(t, i + 1, "(") && i + 2 < t.size() && t[i + 2].text == "pg_catalog"))
					problem(i, "OPERATOR() not qualified with pg_catalog.");
			} else if (IsPunct(t, i + 1, "(")) {
				const bool grammar = kGrammarBeforeParen.count(upper) > 0;
				const bool alias_columns = i >= 1 && IsWord(t, i - 1, "AS");
				// pg_catalog.f(...), pgmq's own pgmq.f(...), or INTO pgmq.t (columns).
				const bool qualified = QualifiedBy(t, i, "pg_catalog") || QualifiedBy(t, i, "pgmq");
				if (!grammar && !alias_columns && !qualified)
					problem(i, "function call not qualified with pg_catalog.");
			}
			if (tok.text == "pgmq") {
				// Queue objects are quoted; only pgmq's fixed objects are not.
				if (!IsPunct(t, i + 1, ".") || i + 2 >= t.size() ||
				    !(t[i + 2].kind == TokenKind::QuotedIdent ||
				      (t[i + 2].kind == TokenKind::Word && FixedPgmqObjects().count(t[i + 2].text))))
					problem(i, "unquoted pgmq object that is not one of pgmq's fixed objects");
			}
			// FOR UPDATE locks, ON CONFLICT ... DO UPDATE updates the conflicting row.
			if (kTableIntroducers.count(upper) && !(upper == "UPDATE" && (IsWord(t, i - 1, "FOR") || IsWord(t, i - 1, "DO"))) &&
			    i + 1 < t.size()) {
				std::size_t j = i + 1;
				while (IsWord(t, j, "IF") || IsWord(t, j, "NOT") || IsWord(t, j, "EXISTS") || IsWord(t, j, "ONLY"))
					++j;
				const bool ok = IsPunct(t, j, "(") || IsWord(t, j, "ROWS") || IsWord(t, j, "LATERAL") ||
				                (j + 1 < t.size() && t[j].kind == TokenKind::Word &&
				                 (t[j].text == "pgmq" || t[j].text == "pg_catalog") && IsPunct(t, j + 1, ".")) ||
				                (j < t.size() && t[j].kind == TokenKind::Word && ctes.count(t[j].text) > 0);
				if (!ok)
					problem(j, "table reference not qualified with pgmq. (nor a CTE)");
			}
			break;
		}
		}
	}
	if (depth != 0)
		problem(t.size(), "unbalanced parentheses");
	return problems;
}

inline std::string JoinLines(const std::vector<std::string> &lines)
{
	std::string out;
	for (const std::string &line : lines)
		out += "\n  " + line;
	return out;
}

}  // namespace pgmq_test
