// Admin records (not ontology facts): registered repositories and API keys.
CREATE CONSTRAINT strata_repo_registration_name IF NOT EXISTS
FOR (r:RepoRegistration) REQUIRE r.name IS UNIQUE;
CREATE CONSTRAINT strata_api_key_id IF NOT EXISTS
FOR (k:ApiKey) REQUIRE k.key_id IS UNIQUE;
