// spdlog compiled into gpusched_logging instead of loaded from Debian's
// shared libspdlog. Debian ships spdlog and fmt only as shared C++ libraries;
// a program that loads one loads the shared C++ runtime with it (1.7 MiB of
// the agent's resident memory), so the agent, which runs on every node,
// compiles the parts it uses here and links its C++ runtime statically.
//
// Every user of gpusched_logging sees spdlog's headers in its compiled-
// library form (SPDLOG_COMPILED_LIB, set by the target): declarations only.
// This file gives the definitions, and the templates instantiated for the
// sinks GetLogger makes (and the default logger spdlog's registry makes).

#ifndef SPDLOG_COMPILED_LIB
#error "gpusched_logging sets SPDLOG_COMPILED_LIB for everything that includes spdlog"
#endif

#include <mutex>

#include "spdlog/common-inl.h"
#include "spdlog/details/backtracer-inl.h"
#include "spdlog/details/log_msg-inl.h"
#include "spdlog/details/log_msg_buffer-inl.h"
#include "spdlog/details/null_mutex.h"
#include "spdlog/details/os-inl.h"
#include "spdlog/details/periodic_worker-inl.h"
#include "spdlog/details/registry-inl.h"
#include "spdlog/logger-inl.h"
#include "spdlog/pattern_formatter-inl.h"
#include "spdlog/sinks/ansicolor_sink-inl.h"
#include "spdlog/sinks/base_sink-inl.h"
#include "spdlog/sinks/sink-inl.h"
#include "spdlog/sinks/stdout_color_sinks-inl.h"
#include "spdlog/sinks/stdout_sinks-inl.h"
#include "spdlog/spdlog-inl.h"

template class spdlog::sinks::base_sink<std::mutex>;
template class spdlog::sinks::base_sink<spdlog::details::null_mutex>;
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_mutex>;
template std::shared_ptr<spdlog::logger> spdlog::stderr_color_mt<spdlog::synchronous_factory>(
    const std::string& logger_name, color_mode mode);
