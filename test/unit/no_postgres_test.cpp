// test/unit/no_postgres_test.cpp
// The layering rule no_postgres.hpp guards: every core header includes it
// last, and no core file includes a Postgres or adapter header. The files are
// found from this source file's own path (CMake compiles with absolute paths).
#include "pgmq/core/no_postgres.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#ifdef POSTGRES_H
#error "the unit tests must build without postgres.h"
#endif

namespace {

namespace fs = std::filesystem;

// From CMake rather than __FILE__, which -ffile-prefix-map (Debian's build
// flags, for reproducible builds) rewrites to a path relative to nowhere.
fs::path RepoRoot() { return fs::path(PGMQ_SOURCE_DIR); }

std::string ReadFile(const fs::path &path)
{
	std::ifstream in(path);
	std::ostringstream text;
	text << in.rdbuf();
	return text.str();
}

// The targets of the #include lines of a file, in order.
std::vector<std::string> Includes(const std::string &text)
{
	std::vector<std::string> out;
	std::istringstream lines(text);
	std::string line;
	while (std::getline(lines, line)) {
		const std::size_t hash = line.find_first_not_of(" \t");
		if (hash == std::string::npos || line[hash] != '#')
			continue;
		const std::size_t directive = line.find_first_not_of(" \t", hash + 1);
		if (directive == std::string::npos || line.compare(directive, 7, "include") != 0)
			continue;
		const std::size_t open = line.find_first_of("\"<", directive + 7);
		const std::size_t close = open == std::string::npos ? open : line.find_first_of("\">", open + 1);
		if (close != std::string::npos)
			out.push_back(line.substr(open + 1, close - open - 1));
	}
	return out;
}

std::vector<fs::path> FilesIn(const fs::path &dir, const std::string &extension)
{
	std::vector<fs::path> out;
	for (const fs::directory_entry &entry : fs::directory_iterator(dir))
		if (entry.is_regular_file() && entry.path().extension() == extension)
			out.push_back(entry.path());
	return out;
}

bool IsPostgresOrAdapterHeader(const std::string &include)
{
	static const char *const kForbidden[] = {"postgres.h", "postgres_ext.h", "fmgr.h", "funcapi.h", "executor/",
	                                         "utils/",     "access/",        "catalog/", "nodes/",  "storage/",
	                                         "miscadmin.h", "pgmq/pg/"};
	for (const char *forbidden : kForbidden)
		if (include.rfind(forbidden, 0) == 0)
			return true;
	return false;
}

TEST(NoPostgres, SourceTreeIsWhereThisFileSaysItIs)
{
	ASSERT_TRUE(fs::is_directory(RepoRoot() / "include" / "pgmq" / "core")) << RepoRoot();
	ASSERT_TRUE(fs::is_directory(RepoRoot() / "src" / "core")) << RepoRoot();
}

TEST(NoPostgres, EveryCoreHeaderIncludesTheGuardLast)
{
	const fs::path dir = RepoRoot() / "include" / "pgmq" / "core";
	ASSERT_TRUE(fs::is_directory(dir)) << dir;
	int checked = 0;
	for (const fs::path &header : FilesIn(dir, ".hpp")) {
		if (header.filename() == "no_postgres.hpp")
			continue;
		const std::vector<std::string> includes = Includes(ReadFile(header));
		ASSERT_FALSE(includes.empty()) << header;
		EXPECT_EQ(includes.back(), "pgmq/core/no_postgres.hpp") << header << " must include the guard last";
		++checked;
	}
	EXPECT_GE(checked, 5) << "expected at least arguments, ddl, error, queue_name and statements";
}

TEST(NoPostgres, NoCoreFileIncludesPostgresOrAdapterHeaders)
{
	std::vector<fs::path> files = FilesIn(RepoRoot() / "include" / "pgmq" / "core", ".hpp");
	const std::vector<fs::path> sources = FilesIn(RepoRoot() / "src" / "core", ".cpp");
	files.insert(files.end(), sources.begin(), sources.end());
	ASSERT_GE(files.size(), 10u);
	for (const fs::path &file : files)
		for (const std::string &include : Includes(ReadFile(file)))
			EXPECT_FALSE(IsPostgresOrAdapterHeader(include)) << file << " includes " << include;
}

TEST(NoPostgres, CheckerRecognisesForbiddenIncludes)
{
	const std::vector<std::string> includes =
		Includes("#include \"postgres.h\"\n  #  include <utils/builtins.h>\n#include \"pgmq/pg/executor.hpp\"\n"
		         "// #include nothing\n#include <string>\n");
	ASSERT_EQ(includes.size(), 4u);
	EXPECT_TRUE(IsPostgresOrAdapterHeader(includes[0]));
	EXPECT_TRUE(IsPostgresOrAdapterHeader(includes[1]));
	EXPECT_TRUE(IsPostgresOrAdapterHeader(includes[2]));
	EXPECT_FALSE(IsPostgresOrAdapterHeader(includes[3]));
	EXPECT_FALSE(IsPostgresOrAdapterHeader("pgmq/core/queue_name.hpp"));
}

}  // namespace
