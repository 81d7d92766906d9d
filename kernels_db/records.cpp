#include "kernels_db/records.h"

#include "kernels_db/error.h"

namespace tcjit::kernels_db {

std::string_view to_string(ResultStatus status) {
  switch (status) {
  case ResultStatus::ok: return "ok";
  case ResultStatus::failed: return "failed";
  case ResultStatus::illegal: return "illegal";
  }
  return "?";
}

std::string_view to_string(ProvenanceKind kind) {
  switch (kind) {
  case ProvenanceKind::measured: return "measured";
  case ProvenanceKind::predicted: return "predicted";
  case ProvenanceKind::emulated: return "emulated";
  }
  return "?";
}

ResultStatus parse_result_status(std::string_view text) {
  for (ResultStatus status : {ResultStatus::ok, ResultStatus::failed, ResultStatus::illegal})
    if (to_string(status) == text)
      return status;
  throw DbError(DbErrorKind::invalid_argument, "unknown result status '" + std::string(text) + "'",
                "result status", "use ok, failed or illegal");
}

ProvenanceKind parse_provenance_kind(std::string_view text) {
  for (ProvenanceKind kind :
       {ProvenanceKind::measured, ProvenanceKind::predicted, ProvenanceKind::emulated})
    if (to_string(kind) == text)
      return kind;
  throw DbError(DbErrorKind::invalid_argument, "unknown provenance '" + std::string(text) + "'",
                "result provenance", "use measured, predicted or emulated");
}

} // namespace tcjit::kernels_db
