/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * The logging and check macros ps-lite programs use (dmlc-core's names):
 * LOG(INFO|WARNING|ERROR|FATAL) << ..., CHECK(cond) << ..., CHECK_EQ and
 * the other comparisons, CHECK_NOTNULL, DCHECK*, PS_VLOG(n) (shown when
 * PS_VERBOSE >= n). A failed check prints its message and aborts. Each
 * macro is defined only if the program has none of that name yet.
 */
#ifndef BX_PS_LOGGING_H_
#define BX_PS_LOGGING_H_

#include <cstdlib>
#include <ctime>
#include <iostream>
#include <sstream>
#include <string>

namespace ps {
namespace logging {

/* One message, printed (and for a fatal one: abort) when it ends. */
class Message {
 public:
  Message(const char* file, int line, const char* level, bool fatal)
      : fatal_(fatal) {
    const char* base = file;
    for (const char* p = file; *p; ++p)
      if (*p == '/') base = p + 1;
    os_ << "[" << level << " " << base << ":" << line << "] ";
  }
  ~Message() {
    os_ << "\n";
    std::cerr << os_.str();
    std::cerr.flush();
    if (fatal_) std::abort();
  }
  std::ostream& stream() { return os_; }

 private:
  std::ostringstream os_;
  bool fatal_;
};

/* Swallows a stream expression (a check that held, a quiet level). */
class Voidify {
 public:
  void operator&(std::ostream&) {}
};

inline int Verbose() {
  const char* v = std::getenv("PS_VERBOSE");
  return v ? std::atoi(v) : 0;
}

template <typename T>
T* CheckNotNull(const char* file, int line, const char* what, T* p) {
  if (!p) Message(file, line, "FATAL", true).stream() << what << " is NULL";
  return p;
}

}  // namespace logging
}  // namespace ps

#define BX_PS_LOG_INFO ::ps::logging::Message(__FILE__, __LINE__, "I", false)
#define BX_PS_LOG_WARNING ::ps::logging::Message(__FILE__, __LINE__, "W", false)
#define BX_PS_LOG_ERROR ::ps::logging::Message(__FILE__, __LINE__, "E", false)
#define BX_PS_LOG_FATAL ::ps::logging::Message(__FILE__, __LINE__, "F", true)

#ifndef LOG
#define LOG(level) BX_PS_LOG_##level.stream()
#endif
#ifndef LOG_IF
#define LOG_IF(level, cond) \
  !(cond) ? (void)0 : ::ps::logging::Voidify() & LOG(level)
#endif
#ifndef CHECK
#define CHECK(cond)                                          \
  (cond) ? (void)0                                           \
         : ::ps::logging::Voidify() &                        \
               ::ps::logging::Message(__FILE__, __LINE__, "F", true).stream() \
                   << "Check failed: " #cond " "
#endif
#define BX_PS_CHECK_OP(a, b, op)                                            \
  ((a)op(b)) ? (void)0                                                      \
             : ::ps::logging::Voidify() &                                   \
                   ::ps::logging::Message(__FILE__, __LINE__, "F", true)    \
                           .stream()                                        \
                       << "Check failed: " #a " " #op " " #b " (" << (a)    \
                       << " vs. " << (b) << ") "
#ifndef CHECK_EQ
#define CHECK_EQ(a, b) BX_PS_CHECK_OP(a, b, ==)
#define CHECK_NE(a, b) BX_PS_CHECK_OP(a, b, !=)
#define CHECK_LT(a, b) BX_PS_CHECK_OP(a, b, <)
#define CHECK_LE(a, b) BX_PS_CHECK_OP(a, b, <=)
#define CHECK_GT(a, b) BX_PS_CHECK_OP(a, b, >)
#define CHECK_GE(a, b) BX_PS_CHECK_OP(a, b, >=)
#endif
#ifndef CHECK_NOTNULL
#define CHECK_NOTNULL(p) \
  ::ps::logging::CheckNotNull(__FILE__, __LINE__, #p, (p))
#endif
#ifndef DCHECK
#define DCHECK(cond) CHECK(cond)
#define DCHECK_EQ(a, b) CHECK_EQ(a, b)
#define DCHECK_NE(a, b) CHECK_NE(a, b)
#define DCHECK_LT(a, b) CHECK_LT(a, b)
#define DCHECK_LE(a, b) CHECK_LE(a, b)
#define DCHECK_GT(a, b) CHECK_GT(a, b)
#define DCHECK_GE(a, b) CHECK_GE(a, b)
#endif
#ifndef PS_VLOG
#define PS_VLOG(x) LOG_IF(INFO, (x) <= ::ps::logging::Verbose())
#endif

#endif  // BX_PS_LOGGING_H_
