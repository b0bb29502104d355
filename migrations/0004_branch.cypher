// Ontology v1 gained the Branch node type (an indexed ref; its state history is
// the index history). Its key needs a uniqueness constraint like every key.
CREATE CONSTRAINT strata_branch_key IF NOT EXISTS FOR (n:Branch) REQUIRE n.key IS UNIQUE;
