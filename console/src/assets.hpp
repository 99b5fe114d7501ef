// console/src/assets.hpp
// console/web/*, embedded at build time (console/cmake/embed.cmake).
#pragma once

#include <cstddef>

namespace pgmq::console {

extern const char kIndexHtml[];
extern const std::size_t kIndexHtmlSize;
extern const char kAppJs[];
extern const std::size_t kAppJsSize;
extern const char kStyleCss[];
extern const std::size_t kStyleCssSize;

}  // namespace pgmq::console
