# Writes OUTPUT, a C++ file defining `const char SYMBOL[]` with INPUT's bytes:
# the page is part of the binary, so the console is one file to install.
# cmake -DINPUT=... -DOUTPUT=... -DSYMBOL=... -P embed.cmake
file(READ "${INPUT}" content HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${content}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by console/cmake/embed.cmake.\n#include <cstddef>\nnamespace pgmq::console {\nextern const char ${SYMBOL}[] = {${bytes}'\\0'};\nextern const std::size_t ${SYMBOL}Size = sizeof ${SYMBOL} - 1;\n}\n")
