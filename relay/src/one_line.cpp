// relay/src/one_line.cpp
#include "pgmq/relay/one_line.hpp"

namespace pgmq::relay {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsBreak(char c) { return c == '\n' || c == '\r'; }

}  // namespace

std::string OneLine(std::string_view text)
{
	std::string out;
	out.reserve(text.size());
	std::size_t i = 0;
	while (i < text.size()) {
		if (!IsBreak(text[i])) {
			out += text[i++];
			continue;
		}
		while (!out.empty() && IsBlank(out.back()))
			out.pop_back();
		while (i < text.size() && (IsBreak(text[i]) || IsBlank(text[i])))
			i++;
		if (i < text.size() && !out.empty())
			out += "; ";
	}
	while (!out.empty() && IsBlank(out.back()))
		out.pop_back();
	return out;
}

}  // namespace pgmq::relay
