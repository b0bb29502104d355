// Search (issue 13): derived SearchDoc nodes, one per distinct content of a
// Symbol, File, Requirement or Decision state, joined back to the versions
// carrying that content by (node, hash) so that every search is as-of like
// every other read. Rebuildable from the graph at any time (strata.search.docs).
CREATE CONSTRAINT strata_search_doc_key IF NOT EXISTS FOR (d:SearchDoc) REQUIRE d.key IS UNIQUE;
CREATE CONSTRAINT strata_search_cursor_repo IF NOT EXISTS FOR (c:SearchCursor) REQUIRE c.repo IS UNIQUE;
// Case-insensitive name lookup (`toLower(name) CONTAINS`): a text index serves CONTAINS.
CREATE TEXT INDEX strata_search_doc_lname IF NOT EXISTS FOR (d:SearchDoc) ON (d.lname);
CREATE INDEX strata_search_doc_pending IF NOT EXISTS FOR (d:SearchDoc) ON (d.repo, d.embedded);
// Identifier words are spelled out by strata.search.text; the English analyzer
// lower-cases, drops stop words and stems prose (docstrings, requirement text).
// rtag is one token per repository, a required clause of every query.
CREATE FULLTEXT INDEX strata_search_text IF NOT EXISTS
FOR (d:SearchDoc) ON EACH [d.names, d.text, d.rtag]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
// 512 dimensions: the local Universal Sentence Encoder (strata.knowledge.embedder).
CREATE VECTOR INDEX strata_search_vector IF NOT EXISTS
FOR (d:SearchDoc) ON d.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 512, `vector.similarity_function`: 'cosine'}};
