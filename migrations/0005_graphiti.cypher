// graphiti-core's schema, owned here instead of built by its driver's constructor
// (strata.knowledge.documents subclasses the driver with a no-op index builder).
//
// Taken from graphiti_core.graph_queries (graphiti-core 0.31.2), Neo4j flavour:
// the same names, so graphiti's queries find them. Left out on purpose: the
// range indexes on Entity/Episodic/Community/Saga(uuid) (entity_uuid,
// episode_uuid, community_uuid, saga_uuid): the uniqueness constraints on those
// properties (0002, and Saga's below) already own an index there. Neo4j 5.26
// refuses a second one (`ConstraintAlreadyExists`); with IF NOT EXISTS it
// silently creates nothing, so graphiti's statement would be a no-op anyway.
//
// graphiti's queries depend on the four FULLTEXT index names at the end.

CREATE CONSTRAINT strata_saga_key IF NOT EXISTS FOR (n:Saga) REQUIRE n.uuid IS UNIQUE;

CREATE INDEX relation_uuid IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.uuid);
CREATE INDEX mention_uuid IF NOT EXISTS FOR ()-[e:MENTIONS]-() ON (e.uuid);
CREATE INDEX has_member_uuid IF NOT EXISTS FOR ()-[e:HAS_MEMBER]-() ON (e.uuid);
CREATE INDEX has_episode_uuid IF NOT EXISTS FOR ()-[e:HAS_EPISODE]-() ON (e.uuid);
CREATE INDEX next_episode_uuid IF NOT EXISTS FOR ()-[e:NEXT_EPISODE]-() ON (e.uuid);
CREATE INDEX entity_group_id IF NOT EXISTS FOR (n:Entity) ON (n.group_id);
CREATE INDEX episode_group_id IF NOT EXISTS FOR (n:Episodic) ON (n.group_id);
CREATE INDEX community_group_id IF NOT EXISTS FOR (n:Community) ON (n.group_id);
CREATE INDEX saga_group_id IF NOT EXISTS FOR (n:Saga) ON (n.group_id);
CREATE INDEX relation_group_id IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.group_id);
CREATE INDEX mention_group_id IF NOT EXISTS FOR ()-[e:MENTIONS]-() ON (e.group_id);
CREATE INDEX has_episode_group_id IF NOT EXISTS FOR ()-[e:HAS_EPISODE]-() ON (e.group_id);
CREATE INDEX next_episode_group_id IF NOT EXISTS FOR ()-[e:NEXT_EPISODE]-() ON (e.group_id);
CREATE INDEX name_entity_index IF NOT EXISTS FOR (n:Entity) ON (n.name);
CREATE INDEX saga_name IF NOT EXISTS FOR (n:Saga) ON (n.name);
CREATE INDEX created_at_entity_index IF NOT EXISTS FOR (n:Entity) ON (n.created_at);
CREATE INDEX created_at_episodic_index IF NOT EXISTS FOR (n:Episodic) ON (n.created_at);
CREATE INDEX valid_at_episodic_index IF NOT EXISTS FOR (n:Episodic) ON (n.valid_at);
CREATE INDEX name_edge_index IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.name);
CREATE INDEX created_at_edge_index IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.created_at);
CREATE INDEX expired_at_edge_index IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.expired_at);
CREATE INDEX valid_at_edge_index IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.valid_at);
CREATE INDEX invalid_at_edge_index IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.invalid_at);

CREATE FULLTEXT INDEX episode_content IF NOT EXISTS
FOR (e:Episodic) ON EACH [e.content, e.source, e.source_description, e.group_id];
CREATE FULLTEXT INDEX node_name_and_summary IF NOT EXISTS
FOR (n:Entity) ON EACH [n.name, n.summary, n.group_id];
CREATE FULLTEXT INDEX community_name IF NOT EXISTS
FOR (n:Community) ON EACH [n.name, n.group_id];
CREATE FULLTEXT INDEX edge_name_and_fact IF NOT EXISTS
FOR ()-[e:RELATES_TO]-() ON EACH [e.name, e.fact, e.group_id];
