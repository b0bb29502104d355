// Unresolved call sites by called name (strata.code.unseen). The simple analyzer
// keeps runs of letters, lower-cased: "self._store.values@12" is indexed as self,
// store, values. A name's letter runs, searched as a phrase, find every state whose
// list may hold a call of it; the reader keeps the exact matches. Without this
// index, every answer that counts the callers the graph may not hold (impact,
// callers, context packs) read every symbol state of the repository.
CREATE FULLTEXT INDEX strata_unresolved_calls IF NOT EXISTS
FOR ()-[r:STATE]-() ON EACH [r.unresolved_calls]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'simple'}};
