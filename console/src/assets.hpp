// console/src/assets.hpp
// The files of console/web, embedded at build time (console/cmake/embed.cmake)
// and listed by console/CMakeLists.txt's PGMQ_CONSOLE_WEB_FILES.
#pragma once

#include <cstddef>

namespace pgmq::console {

struct Asset {
	const char *route;  // "/" for index.html, else "/<file>"
	const char *content;
	std::size_t size;
	const char *type;  // the Content-Type header
};

extern const Asset kAssets[];
extern const std::size_t kAssetCount;

}  // namespace pgmq::console
