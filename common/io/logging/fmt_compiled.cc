// fmt compiled into gpusched_logging instead of loaded from Debian's shared
// libfmt (see spdlog_compiled.cc for why). fmt's headers declare what
// format-inl.h defines unless FMT_HEADER_ONLY is set, which nothing here
// sets: including it once gives every definition, and the templates
// format.h declares extern are instantiated for the character types it
// names.

#include "fmt/format-inl.h"

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> char;
template auto decimal_point_impl(locale_ref) -> wchar_t;
}  // namespace detail
FMT_END_NAMESPACE
