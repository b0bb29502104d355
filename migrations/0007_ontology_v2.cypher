// Ontology v2 stores findings (problems in requirement, ADR and trace files) as
// versioned nodes of the knowledge and trace layers; their keys need a
// uniqueness constraint like every key. Everything else v2 adds (optional
// properties, the `composer` ecosystem) needs no schema.
CREATE CONSTRAINT strata_knowledge_finding_key IF NOT EXISTS FOR (n:KnowledgeFinding) REQUIRE n.key IS UNIQUE;
CREATE CONSTRAINT strata_trace_finding_key IF NOT EXISTS FOR (n:TraceFinding) REQUIRE n.key IS UNIQUE;
