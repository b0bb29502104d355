// Knowledge cards (issue 14, ontology v3): one Card per package of a repository
// and ref, its versions on STATE facts like every other node.
CREATE CONSTRAINT strata_card_key IF NOT EXISTS FOR (c:Card) REQUIRE c.key IS UNIQUE;
