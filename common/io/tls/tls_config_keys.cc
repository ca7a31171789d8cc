#include "common/io/tls/tls_config_keys.h"

namespace gpusched::tls {

TlsFiles ReadTlsKeys(config::TomlTableReader& reader, const TlsKeyNames& names, bool complete) {
  TlsFiles files;
  files.cert = reader.Path(names.cert).value_or("");
  files.key = reader.Path(names.key).value_or("");
  files.ca = reader.Path(names.ca).value_or("");
  RecordTlsProblems(reader, files, names, complete);
  return files;
}

void RecordTlsProblems(config::TomlTableReader& reader, const TlsFiles& files, const TlsKeyNames& names,
                       bool complete) {
  for (const TlsProblem& problem : CheckTlsFiles(files, names, nullptr, complete)) {
    reader.Error(reader.LineOf(problem.key), problem.message);
  }
}

}  // namespace gpusched::tls
