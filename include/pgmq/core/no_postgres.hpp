// include/pgmq/core/no_postgres.hpp
// Guard included last by every core header: the core layer is plain C++ and
// must never see Postgres headers (their macros and longjmp-based errors do
// not mix with C++ objects). It also forces adapter files to include core
// headers before postgres.h.
#pragma once

#ifdef POSTGRES_H
#error "pgmq core headers must be included before postgres.h, and core sources must not include it"
#endif
