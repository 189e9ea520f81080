"""The numbers the seeds fix (SPEC section 14, seeds/query.md), each once, with its meaning in its name.

Every one is overridable by an environment variable: `GB_` and the field's name in capitals
(`GB_SIMILARITY_THRESHOLD=0.7`). `Limits()` holds the defaults; `Settings` reads the overrides.
The SQL takes them as parameters, never as literals.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

ENV_PREFIX = "GB_"


class Limits(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # --- request bodies ------------------------------------------------------------------------
    remember_max_body_bytes: int = Field(1024 * 1024, gt=0, description="remember body; 413 above")
    query_max_body_bytes: int = Field(64 * 1024, gt=0, description="query body; 413 above")
    session_id_max_bytes: int = Field(128, gt=0, description="a session id, in UTF-8 bytes")
    user_id_max_bytes: int = Field(256, gt=0, description="a user id, in UTF-8 bytes")
    ontology_max_bytes: int = Field(
        512 * 1024, gt=0, description="an ontology's document (OWL RDF/XML) or body; 413 above"
    )
    ontology_max_types: int = Field(
        500, gt=0, description="entity types, and relation types, an ontology may declare; 400 above"
    )
    json_max_depth: int = Field(
        32, gt=0, description="nesting of a JSON body (objects and arrays); 400 deeper"
    )

    # --- remember: chunking (SPEC section 5, step 2) -----------------------------------------
    chunking_threshold_chars: int = Field(6_000, gt=0, description="a longer text is chunked")
    chunk_max_chars: int = Field(4_000, gt=0, description="the longest chunk")
    chunk_overlap_chars: int = Field(400, ge=0, description="about this much text is in two chunks")
    # 20 calls at once: a batch's window of 50 texts extracted in three waves (bulk import: 100
    # texts in 28.8 s with 2 s model calls, against 98.8 s with 4); a provider's 429 is retried
    # after its retry-after. A low rate-limit tier lowers it (GB_EXTRACT_CONCURRENCY).
    extract_concurrency: int = Field(
        20, gt=0, description="texts or chunks extracted at once (provider rate limits)"
    )

    # --- remember: resolution (steps 5 and 6) ------------------------------------------------
    entity_match_similarity: float = Field(0.75, ge=-1, le=1, description="cosine: the same entity")
    entity_name_guard: bool = Field(
        True,
        description="a vector match also needs names of which one could be a short form of the other "
        "(off: the vector alone, SPEC section 5 step 5)",
    )
    fact_candidate_similarity: float = Field(0.75, ge=-1, le=1, description="cosine: a fact to compare")
    max_fact_candidates: int = Field(50, gt=0, description="live facts shown to the resolve stage")
    fact_candidates_per_entity: int = Field(
        1000,
        gt=0,
        description="live facts around a known entity, newest first, compared with the new facts (each end)",
    )
    entity_name_max_chars: int = Field(
        200, gt=0, le=500, description="a longer entity name from the model is cut to this many characters"
    )

    # --- query: keywords (seeds/query.md, step 1) ---------------------------------------------
    max_query_terms: int = Field(12, gt=0, description="terms of the question kept")
    min_term_chars: int = Field(2, gt=0, description="shorter terms are dropped")
    keyword_seeds: int = Field(10, gt=0, description="top entities by keyword score")
    whole_name_score: int = Field(5, ge=0, description="the entity's whole name is in the question")
    term_in_name_score: int = Field(3, ge=0, description="per term in the entity's name")
    term_in_description_score: int = Field(1, ge=0, description="per term in the entity's description")

    # --- query: similarity and expansion (step 2) ---------------------------------------------
    similarity_threshold: float = Field(0.75, ge=-1, le=1, description="cosine a vector match counts from")
    similar_entities: int = Field(10, ge=0, description="similarity seeds taken")
    similar_edges: int = Field(10, ge=0, description="similar facts taken")
    similar_chunks: int = Field(5, ge=0, description="chunk matches taken")
    similar_summaries: int = Field(5, ge=0, description="summary matches taken")
    fallback_seeds: int = Field(25, ge=0, description="most recently updated entities when nothing matched")
    expansion_edges: int = Field(100, ge=0, description="one-hop edges around the seeds, newest first")
    passages_with_text: int = Field(3, ge=0, description="best passages given with their text")
    passages_summary_only: int = Field(5, ge=0, description="more passages given with their summary only")

    # --- query: the relevance-ranked context (memory/ranking.py) -------------------------------
    # "ranked" orders the candidates the seed's retrieval finds by relevance to the question and
    # keeps the best within a token budget; "seed" gives the seed's whole context (seeds/query.md).
    retrieval: Literal["ranked", "seed"] = Field("ranked", description="the context: ranked or seed")
    context_token_budget: int = Field(
        1200, gt=0, description="ranked: estimated tokens of context (graph and passages) at most"
    )
    rank_similarity_threshold: float = Field(
        0.4,
        ge=-1,
        le=1,
        description="ranked: cosine a vector match counts from (candidates: the ranking cuts)",
    )
    rank_keyword_seeds: int = Field(
        30, gt=0, description="ranked: keyword seeds (candidates: namesakes beyond the 10 newest)"
    )
    rank_expansion_edges: int = Field(300, ge=0, description="ranked: one-hop edges taken as candidates")
    rank_expansion_per_seed: int = Field(
        60, ge=0, description="ranked: one-hop edges per seed and end (the best seeds' come first)"
    )
    # The hops beyond the seeds choose their facts by the question's terms a path has not met yet,
    # then by cosine (db/graph_reads.py, _SECOND_HOP), and reach a third hop. Measured on the
    # chains world (`bench/retrieval_quality.py --world chains`, docs/performance.md, multi-hop):
    # the gold facts among the candidates, before the ranking cuts, went from 0.827 of the
    # multi-hop gold (newest 30 facts per end, most similar first, no third hop) to 0.980 (the
    # third hop from the 20 second-hop facts whose paths met most terms; from 10 0.960; from the
    # 10 or 20 that met most terms themselves 0.947 or 0.973). From 40 (7 December, the four worlds
    # of `--world all`): chains 0.971 -> 0.983 overall, business 0.782 -> 0.796, family 0.853 ->
    # 0.850; the realistic world's p95 68.1 against 68.8 ms in turns (bench/query.py).
    rank_second_hop_edges: int = Field(
        30, ge=0, description="ranked: facts per far end that match most terms, looked at for a hop (0: none)"
    )
    rank_hop_per_end: int = Field(
        10, ge=0, description="ranked: second-hop facts taken per far end, most terms then most similar first"
    )
    rank_hop_frontier: int = Field(
        10, ge=0, description="ranked: first-hop facts (most similar first) whose far ends are expanded"
    )
    rank_hop_scan_edges: int = Field(
        400, ge=0, description="ranked: newest facts per end of an entity whose terms are matched at a hop"
    )
    rank_third_hop_frontier: int = Field(
        40, ge=0, description="ranked: best second-hop facts whose far ends are expanded (0: no third hop)"
    )
    rank_third_hop_per_end: int = Field(
        5, ge=0, description="ranked: third-hop facts taken per far end, most terms then most similar first"
    )
    rank_hop_seeds: int = Field(
        1, ge=0, description="ranked: the best keyword seeds whose facts are expanded first"
    )
    rank_keyword_weight: float = Field(
        0.5, ge=0, description="ranked: added for a candidate holding every term of the question"
    )
    rank_anchor_weight: float = Field(
        0.3, ge=0, description="ranked: added for a fact of the strongest seed (a name the question gives)"
    )
    # How the ranking counts the graph (memory/ranking.py). On the chains world at the default
    # budget, multi-hop recall (2 and 3 hops): paths 0.953, bridge 0.513, pagerank 0.46 (with a
    # margin of 1.8; its damping and weight swept over 0.5-0.85 and 0.5-1.0: 0.44-0.46); the
    # direct, paraphrased and current-state questions 1.000 with each. Paths' numbers, swept there:
    # a hop's cost 0.0 / 0.1 / 0.2 gives 0.907 / 0.953 / 0.807; paths from every seed rather than
    # the strongest (`rank_path_seed_strength` 0) 0.947, and twice the paths to extend.
    rank_graph: Literal["paths", "pagerank", "bridge"] = Field(
        "paths",
        description="ranked: how the graph counts: paths from the seeds, personalized PageRank, or one bridged hop",
    )
    rank_pagerank_damping: float = Field(0.5, ge=0, lt=1, description="ranked, pagerank: the walk goes on")
    rank_pagerank_iterations: int = Field(20, ge=1, description="ranked, pagerank: steps of the walk")
    rank_pagerank_weight: float = Field(
        1.0, ge=0, description="ranked, pagerank: added for the fact most walked"
    )
    rank_path_hops: int = Field(3, ge=1, description="ranked, paths: facts of a path at most")
    rank_path_beam: int = Field(200, ge=1, description="ranked, paths: best paths of each length extended")
    rank_path_seed_strength: float = Field(
        0.99, ge=0, le=1, description="ranked, paths: start from the seeds this close to the strongest"
    )
    # What a path of facts is worth, measured on the four worlds of `bench/retrieval_quality.py
    # --world all` (docs/performance.md, "Worlds nobody tuned for"): the family and business worlds'
    # recall went from 0.755 and 0.700 to 0.853 and 0.782 with the four defaults below together
    # (attribute, max, asked, a hop's cost 0.15), the first two worlds' unchanged (0.982, 0.971).
    rank_path_answers: Literal["terms", "attribute"] = Field(
        "attribute",
        description="ranked, paths: a path's last fact answers when it holds a term of the question the path"
        " had not met (terms), or also when it is one of at most 2 facts of its relation on its side of the"
        " entity reached, an attribute of it (attribute)",
    )
    rank_path_value: Literal["mean", "max"] = Field(
        "max",
        description="ranked, paths: a path counts the mean cosine of its facts with the question, or the best one",
    )
    # With the best cosine of a path (max), the paths through one middle (the sibling whom "where
    # does Dalia's brother live?" never names) were all worth the same, whichever of its facts came
    # last; the cut then kept them in the retrieval's order. A small weight of the last fact's own
    # cosine breaks that tie without moving budget between hops: on the four worlds (docs/
    # performance.md, "Worlds nobody tuned for") chains 0.983 -> 0.992, family 0.850 -> 0.864, the
    # two others unchanged, at 0.03 (0.05 and 0.08 alike; 0.2 and above cost the business world's
    # roles, 0.5 the chains' multi-hop 0.973 -> 0.880).
    rank_answer_weight: float = Field(
        0.03,
        ge=0,
        description="ranked, paths: added times the cosine of a path's last fact, for each path of more than one",
    )
    rank_term_weights: Literal["found", "asked"] = Field(
        "asked",
        description="ranked: the question's terms weigh by rarity among the terms some candidate holds"
        " (found), or among all the question asks, a term no candidate holds weighing as the rarest (asked)",
    )
    rank_hop_cost: float = Field(
        0.15, ge=0, description="ranked, paths: taken for each fact after a path's first"
    )
    rank_bridge_facts: int = Field(
        3,
        ge=0,
        description="ranked, bridge: best facts whose far ends count as seeds (the hop from the seeds)",
    )
    rank_hop_decay: float = Field(
        0.5, ge=0, description="ranked, bridge: a far end's share of its fact's seed strength"
    )
    rank_ended_penalty: float = Field(
        0.1, ge=0, description="ranked: taken from a fact that has ended (an invalid_at) when asked now"
    )
    rank_relevance_margin: float = Field(
        0.8, ge=0, description="ranked: candidates this far below the best one are left out"
    )

    @field_validator("retrieval", mode="before")
    @classmethod
    def _lowercase_mode(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    # --- query: the answer (step 3) and geo ---------------------------------------------------
    query_max_output_tokens: int = Field(2048, gt=0, description="the answer's max output tokens")
    geo_radius_max_km: float = Field(20015.0, gt=0, description="half the Earth's circumference")
    geo_nearby_entities: int = Field(
        25, ge=0, description="entities a nearby search adds to the context, nearest first"
    )

    # --- search strategy (not in the seed) ----------------------------------------------------
    # Any window gives the same seeds; 250 instead of 1,000 scores fewer rows per question (keyword
    # statement p50 6.0 -> 4.0 ms at 100k edges, 9-10 -> 6.4 ms at 1M; 100 made the 1M p95 worse:
    # `GB_KEYWORD_WINDOW=250 bench/query.py`, docs/performance.md, query).
    keyword_window: int = Field(250, gt=0, description="most recently updated entities all keyword-scored")
    # A common term's newest holders: walked in recency order instead of sorting all of them when
    # the window says they lie within half of this (0: never walked; docs/performance.md, query).
    keyword_walk_rows: int = Field(
        2000, ge=0, description="most recently updated entities walked for a common term's newest holders"
    )
    exact_scan_max_rows: int = Field(
        1000, ge=0, description="a dataset with this few rows in an index is searched exactly"
    )
    # At most 1,000: pgvector refuses a wider hnsw.ef_search, which would fail every query.
    hnsw_candidates: int = Field(
        64, gt=0, le=1000, description="rows taken from an HNSW index (hnsw.ef_search)"
    )
    # Only the facts' search finds more at a wider walk: at 1M edges 299 of the exact scan's 310
    # similar facts at 64, 309 at 80 to 128; the seeds and passages the same at each. It costs the
    # retrieval 0.4-0.5 ms at the median, every index at 80 about 2 (`bench/query.py --ef-sweep`,
    # `--walks`; docs/performance.md, query).
    hnsw_fact_candidates: int = Field(
        80, gt=0, le=1000, description="rows taken from the facts' HNSW index (its hnsw.ef_search)"
    )

    # --- idempotent remember (the Idempotency-Key header) -------------------------------------
    idempotency_ttl_seconds: int = Field(
        24 * 60 * 60, gt=0, description="a key's first response is replayed this long"
    )
    idempotency_key_max_chars: int = Field(255, gt=0, description="an Idempotency-Key, printable ASCII")

    # --- reading memory back: GET sessions/{id} and entities/{id} (pages of their lists) --------
    readback_page_default: int = Field(
        50, gt=0, description="items per list of a page when `limit` is not given"
    )
    readback_page_max: int = Field(500, gt=0, description="the largest `limit` of a page; 400 above")
    artifact_preview_chars: int = Field(
        200, ge=0, description="characters of a text a session's artifact shows"
    )

    @field_validator("readback_page_max")
    @classmethod
    def _the_default_page_fits(cls, value: int, info: ValidationInfo) -> int:
        default = info.data.get("readback_page_default")
        if default is not None and value < default:
            raise ValueError(f"must be at least GB_READBACK_PAGE_DEFAULT ({default})")
        return value

    # --- model providers: retries and time (ai/retries.py) -------------------------------------
    provider_max_attempts: int = Field(3, gt=0, description="attempts of one model call, the first included")
    provider_backoff_base_s: float = Field(
        0.5, ge=0, description="wait before the first retry, doubled after"
    )
    provider_max_wait_s: float = Field(
        10.0, ge=0, description="longest wait before a retry (retry-after too)"
    )
    llm_attempt_timeout_s: float = Field(60.0, gt=0, description="one LLM attempt at most")
    embeddings_attempt_timeout_s: float = Field(10.0, gt=0, description="one embeddings attempt at most")
    provider_min_attempt_s: float = Field(1.0, gt=0, description="an attempt with less time left is not made")
    provider_deadline_margin_s: float = Field(
        2.0, ge=0, description="kept before the Lambda's end to record a failed call and answer 502"
    )

    # --- graph export (GET /v1/gb/graph) --------------------------------------------------------
    graph_page_rows: int = Field(1000, gt=0, description="entities and edges of an export page without limit")
    graph_page_max_rows: int = Field(5000, gt=0, description="the largest limit of an export page")
    graph_page_max_bytes: int = Field(
        5_000_000, gt=0, description="an export page's body, as a Lambda response holds it (6 MB at most)"
    )

    @field_validator("graph_page_max_rows")
    @classmethod
    def _the_default_export_page_fits(cls, value: int, info: ValidationInfo) -> int:
        default = info.data.get("graph_page_rows")
        if default is not None and value < default:
            raise ValueError(f"must be at least GB_GRAPH_PAGE_ROWS ({default})")
        return value

    # --- remember with an image (SPEC section 7) ------------------------------------------------
    # A synchronous Lambda invocation carries at most 6 MB: an image's base64 (4/3 of its bytes),
    # the rest of the JSON body and API Gateway's event around it must fit in it. 4 MiB decoded is
    # 5,592,408 bytes of base64: with IMAGE_REQUEST_OTHER_FIELDS_BYTES and the event, about 5.7 MB.
    image_max_bytes: int = Field(
        4 * 1024 * 1024,
        gt=0,
        le=4 * 1024 * 1024,
        description="an image, decoded; 413 above (no larger image fits a Lambda invocation)",
    )
    image_caption_max_chars: int = Field(4_000, gt=0, description="an image's caption; 400 above")

    @property
    def remember_image_max_body_bytes(self) -> int:
        """The largest remember body that carries an image: its base64 and the other fields."""
        return base64_length(self.image_max_bytes) + IMAGE_REQUEST_OTHER_FIELDS_BYTES

    # --- asynchronous remember: the queue, the worker, the batch ---------------------------------
    # A remember answers within API Gateway's 29 s. A text is extracted chunk by chunk (about
    # chunk_max_chars - chunk_overlap_chars = 3,600 new characters each), extract_concurrency at
    # once, a real extraction of a full chunk taking up to ~8 s; then one embeddings request
    # (~1 s) and one resolve call (up to ~8 s). 24,000 characters is 7 chunks: with 4 at once, two
    # waves of extraction (~16 s) + embed + resolve ~ 25 s, the most that fits the deadline's margin
    # whatever the concurrency.
    # A longer text is remembered asynchronously (202) even without "async": true.
    async_remember_threshold_chars: int = Field(
        24_000, gt=0, description="a longer text is remembered asynchronously (202), async or not"
    )
    batch_remember_max_texts: int = Field(100, gt=0, description="texts of one POST /v1/gb/remember/batch")
    async_prepare_ahead: int = Field(
        4,
        ge=0,
        le=10,
        description="queued short texts of a dataset a job extracts and embeds beside its own; 0: none",
    )
    # A batch's short texts in one dataset are remembered a window at a time (memory/windows.py):
    # extracted at once, judged by one resolve call, stored in one transaction. Measured with model
    # calls of 1-3 s, 20 extractions at once, on a quiet 2-core machine (docs/performance.md, bulk
    # import): 100 texts in 28.8 s with windows of 50 (1.02 LLM calls per text) against 34.4 s with
    # windows of 20 (1.05) and 98.8 s for 20 with 4 at once; one text at a time 266-300 s. A larger
    # window holds the dataset's lock longer and shows the resolve call more facts at once (a window
    # is cut where one reply could no longer judge them: windows.within_reply_budget). 1 remembers
    # each text on its own, as a single async remember does.
    bulk_window_texts: int = Field(
        50,
        ge=1,
        le=100,
        description="texts of a batch remembered together (one resolve call); 1: one at a time",
    )
    async_max_attempts: int = Field(
        5, gt=0, description="attempts of a job; the queue's maxReceiveCount (AsyncMaxAttempts) must match"
    )
    async_retry_backoff_s: float = Field(
        30.0, ge=0, description="wait before a failed job's second attempt, doubled after"
    )
    async_retry_backoff_max_s: float = Field(
        900.0, ge=0, le=43_200, description="longest wait before a job's retry (SQS allows 12 hours)"
    )

    # --- remember with facts (bring your own facts) ----------------------------------------------
    # A text's extraction yields some tens of entities and edges per chunk; the facts of one
    # remember are embedded in one request and judged by one resolve call, as a text's are.
    facts_max_entities: int = Field(500, gt=0, description="entities of one remember with facts; 400 above")
    facts_max_edges: int = Field(500, gt=0, description="edges of one remember with facts; 400 above")

    # --- remember with web_search (GB_WEB_SEARCH) ------------------------------------------------
    # As the gligabao server: its 3 key entities, each one call of the web search tool allowed 3
    # searches. Each search costs $0.01 besides the tokens (ai/prices.py), and each call's findings
    # an extraction: at most 10 x 10 searches, a bounded bill.
    web_search_entities: int = Field(
        3, gt=0, le=10, description="a remember's entities searched on the web (those with the most facts)"
    )
    web_search_max_uses: int = Field(
        3, gt=0, le=10, description="web searches the model may run for one entity (the tool's max_uses)"
    )

    # --- timeseries (POST /v1/gb/timeseries, remember's `timeseries.series`, query's context) -------
    max_series_per_request: int = Field(20, gt=0, description="series of one request; 400 above")
    max_points_per_series: int = Field(
        100_000, gt=0, description="points of one series in one request; 400 above (send more in several)"
    )
    max_anchors_per_series: int = Field(
        20, gt=0, description="anchors of one series in one request; 400 above"
    )
    # A Lambda invocation carries at most 6 MB: a body of 5 MiB leaves room for API Gateway's event.
    # 20 series of 10,000 points (about 32 bytes each as JSON) do not fit: they take several requests.
    timeseries_max_body_bytes: int = Field(
        5 * 1024 * 1024,
        gt=0,
        le=6_000_000,
        description="a POST /v1/gb/timeseries body; 413 above (no larger body fits a Lambda invocation)",
    )
    context_series: int = Field(
        5, ge=0, description="series a query's context shows, of those anchored to its entities and facts"
    )
    context_series_points: int = Field(
        5, ge=0, description="latest points of each series a query's context shows"
    )

    @classmethod
    def from_env(cls, env: dict[str, str]) -> Limits:
        """The defaults, with each `GB_<NAME>` of `env` instead (validated: a bad value is an error)."""
        overrides = {
            name: env[ENV_PREFIX + name.upper()]
            for name in cls.model_fields
            if env.get(ENV_PREFIX + name.upper(), "").strip()
        }
        return cls.model_validate(overrides)


def base64_length(size: int) -> int:
    """The length of the padded base64 of `size` bytes."""
    return 4 * ((size + 2) // 3)


# The fields of an image request besides the base64 (user_id, session_id, caption, reasoning...),
# JSON-escaped: room enough for their own limits, small next to the Lambda's 6 MB.
IMAGE_REQUEST_OTHER_FIELDS_BYTES = 64 * 1024

DEFAULT_LIMITS = Limits()

# --- the local API's HTTP framing (`gligabao serve`): API Gateway's HTTP API quotas, fixed ------------
LOCAL_API_MAX_HEAD_BYTES = 10_240  # request line and header values together; 414 or 431 above
LOCAL_API_MAX_BODY_BYTES = 10 * 1024 * 1024  # a request body (API Gateway's 10 MB payload); 413 above
LOCAL_API_READ_TIMEOUT_SECONDS = 30.0  # a request line, headers or body slower than this: 408, closed

# --- the memory explorer (`gligabao explore`): its proxy to the API and the page's reading of a graph --
EXPLORER_DEFAULT_PORT = 7879  # next to the local API's 7878
# `gligabao serve --workers`: per function, 4 concurrent invocations each, ~70 MiB of memory per worker
LOCAL_API_DEFAULT_WORKERS = 4
EXPLORER_PROXY_TIMEOUT_SECONDS = 60.0  # one call of the API through the proxy (a query may take a while)
EXPLORER_PROXY_MAX_BODY_BYTES = 1024 * 1024  # what the page sends: a question, never a text to remember

# --- the vector indexes (AWS deploy: EmbeddingDimensions) ------------------------------------------
# pgvector's HNSW index takes `vector` columns of at most 2,000 dimensions (pgvector's README:
# "vector: up to 2,000 dimensions" for HNSW and IVFFlat). The template's EmbeddingDimensions has
# this MaxValue and the settings refuse a larger GB_EMBEDDING_DIMENSIONS, whatever the default.
HNSW_MAX_VECTOR_DIMENSIONS = 2000
