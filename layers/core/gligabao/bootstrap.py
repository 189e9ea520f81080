"""The composition root: builds, once per container (per Lambda container, per local API process),
the bundle the memory core needs, and nothing else looks a client up.

    bundle().database     units of work scoped to a user (PostgreSQL)
    bundle().llm          Anthropic (or Claude on Bedrock); 503 when no key is configured
    bundle().embedder     OpenAI embeddings; 503 when no key is configured
    bundle().clock        now, in UTC
    bundle().geo          the geo resolver (offline gazetteer or Amazon Location); None while geo is off
    bundle().idempotency_records(user_id)   the user's Idempotency-Key records (PostgreSQL)
    bundle().settings     everything read from the environment, limits included

Tests build a `Bundle` of their own (fakes, another database) and `install()` it, or override
the routes' dependency; they never set environment variables to swap a part.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from gligabao.ai.embeddings import Embedder
from gligabao.ai.llm import LLM
from gligabao.ai.prices import LongContext, Price
from gligabao.ai.retries import RetryPolicy
from gligabao.aws.secrets import ProviderKeys, database_url_from_secret
from gligabao.db.connection import Database
from gligabao.errors import NotConfigured
from gligabao.limits import Limits
from gligabao.memory import ports
from gligabao.settings import InvalidConfiguration, ModelPrice, Settings
from gligabao.timefmt import utcnow

if TYPE_CHECKING:
    from gligabao.db.deploy_migrations import Outcome
    from gligabao.db.idempotency import IdempotencyRecords


class Bundle:
    """What the memory core takes (`ports.Memory`): settings, database, LLM, embedder, clock.

    The model clients are built on first use, so a missing key answers 503 on the endpoints that
    need it instead of failing the container; each is rebuilt when its key changes (rotation).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        database: ports.Transactions | None = None,
        llm: ports.LLM | None = None,
        embedder: ports.Embedder | None = None,
        clock: Callable[[], datetime] = utcnow,
        keys: ProviderKeys | None = None,
        geo: ports.GeoResolver | None = None,
        jobs: ports.JobQueue | None = None,
    ):
        self.settings = settings
        self.keys = keys or ProviderKeys(settings)
        self.database = database or Database(
            lambda: database_url(settings), server_side_prepare=not settings.behind_rds_proxy
        )
        self.clock = clock
        self._llm, self._embedder = llm, embedder
        self._fixed_llm, self._fixed_embedder = llm is not None, embedder is not None
        self._geo = geo
        self._jobs = jobs
        self._built: dict[str, tuple[str, object]] = {}
        self._lock = threading.Lock()
        # The (user, dataset) pairs this container's queries found: their retrieval skips the lookup.
        self.known_datasets: dict[tuple[str, str], bool] = {}

    def __repr__(self) -> str:
        return f"Bundle(llm={self._llm!r}, embedder={self._embedder!r})"

    @property
    def limits(self) -> Limits:
        return self.settings.limits

    @property
    def llm(self) -> ports.LLM:
        if self._fixed_llm:
            return self._llm
        settings = self.settings
        llm_retry = RetryPolicy.for_llm(settings.limits)
        if settings.llm_provider == "openai":
            return self._client("llm", self.keys.require("OPENAI_API_KEY", "LLM"), openai_llm(settings))
        if settings.llm_provider == "offline":
            from gligabao.ai.offline.llm import OfflineLLM

            return self._client("llm", "offline", lambda _: OfflineLLM())
        if settings.llm_provider == "bedrock":
            return self._client(
                "llm",
                "bedrock",
                lambda _: LLM(
                    provider="bedrock",
                    default_model=settings.llm_model,
                    retry=llm_retry,
                    prices=model_prices(settings),
                ),
            )
        return self._client(
            "llm",
            self.keys.require("ANTHROPIC_API_KEY"),
            lambda key: LLM(
                api_key=key,
                default_model=settings.llm_model,
                base_url=settings.anthropic_base_url,
                retry=llm_retry,
                prices=model_prices(settings),
            ),
        )

    @property
    def embedder(self) -> ports.Embedder:
        if self._fixed_embedder:
            return self._embedder
        settings = self.settings
        if settings.embedding_provider == "offline":
            from gligabao.ai.offline.embeddings import OfflineEmbedder

            return self._client(
                "embedder", "offline", lambda _: OfflineEmbedder(settings.embedding_dimensions)
            )
        return self._client(
            "embedder",
            self.keys.require("OPENAI_API_KEY"),
            lambda key: Embedder(
                api_key=key,
                model=settings.embedding_model,
                dimensions=settings.embedding_dimensions,
                base_url=settings.openai_base_url,
                retry=RetryPolicy.for_embeddings(settings.limits),
                prices=model_prices(settings),
            ),
        )

    @property
    def geo(self) -> ports.GeoResolver | None:
        """None while geo is off; else the resolver GB_GEO_RESOLVER names, built on first use
        (the gazetteer's data, or the boto3 client, is loaded only when geo is on)."""
        if not self.settings.geo:
            return None
        if self._geo is None:
            with self._lock:
                if self._geo is None:
                    self._geo = geo_resolver(self.settings)
        return self._geo

    @property
    def jobs(self) -> ports.JobQueue:
        """The queue of asynchronous remembers: the one installed (`gligabao serve`, tests), else
        the SQS queue of GB_JOBS_QUEUE_URL; neither is 503."""
        if self._jobs is not None:
            return self._jobs
        if not self.settings.jobs_queue_url:
            raise NotConfigured("asynchronous remember not configured: GB_JOBS_QUEUE_URL is not set")
        from gligabao.aws.job_queue import SqsJobQueue

        return self._client("jobs", self.settings.jobs_queue_url, SqsJobQueue)

    def use_job_queue(self, queue: ports.JobQueue | None) -> None:
        """Run asynchronous remembers on `queue` (the local runtime's, a test's)."""
        self._jobs = queue

    def idempotency_records(self, user_id: str) -> IdempotencyRecords:
        """The store of the user's Idempotency-Key records (Powertools' persistence layer),
        imported on first use: Powertools' idempotency package imports boto3."""
        from gligabao.db.idempotency import IdempotencyRecords

        return IdempotencyRecords(self.database, user_id)

    def _client(self, name: str, key: str, build: Callable[[str], object]):
        with self._lock:
            built = self._built.get(name)
            if built is None or built[0] != key:
                built = self._built[name] = (key, build(key))
            return built[1]


def openai_llm(settings: Settings) -> Callable[[str], ports.LLM]:
    """The builder of the OpenAI-compatible LLM (GB_LLM_PROVIDER=openai), given the key. Its model
    must be named: the default one is Anthropic's, which no such server has."""
    if "llm_model" not in settings.model_fields_set:
        raise NotConfigured(
            "LLM not configured: GB_LLM_MODEL must name the model with GB_LLM_PROVIDER=openai"
        )
    from gligabao.ai.openai_llm import OpenAICompatibleLLM

    return lambda key: OpenAICompatibleLLM(
        api_key=key,
        default_model=settings.llm_model,
        base_url=settings.openai_base_url,
        retry=RetryPolicy.for_llm(settings.limits),
        prices=model_prices(settings),
        structured_output=settings.llm_structured_output,
    )


def model_prices(settings: Settings) -> dict[str, Price]:
    """GB_MODEL_PRICES as the price table takes it."""
    return {name: _price(entry) for name, entry in settings.model_prices.items()}


def _price(entry: ModelPrice) -> Price:
    long_context = None
    if entry.long_threshold is not None and entry.long_input is not None and entry.long_output is not None:
        long_context = LongContext(entry.long_threshold, entry.long_input, entry.long_output)
    return Price(entry.input, entry.output, entry.cache_write, entry.cache_read, long_context)


def geo_resolver(settings: Settings) -> ports.GeoResolver:
    """The resolver of GB_GEO_RESOLVER: `local` (offline) or `aws-location` (GB_PLACE_INDEX)."""
    if settings.geo_resolver == "aws-location":
        from gligabao.aws.location import AwsLocationResolver

        return AwsLocationResolver(settings.place_index)
    from gligabao.geo.gazetteer import local_gazetteer

    return local_gazetteer()


def preload_geo() -> None:
    """Under SnapStart (a before-snapshot hook): with geo on, the resolver is built and the local
    gazetteer's data loaded (about 2 s) into the snapshot, not on a request. Never fails: a
    configuration problem is answered by the requests (503), as without the hook."""
    try:
        resolver = bundle().geo
    except NotConfigured:
        return
    preload = getattr(resolver, "preload", None)
    if preload is not None:
        preload()


def database_url(settings: Settings, *, admin: bool = False) -> str:
    """The service's database URL, subject to row-level security: DATABASE_URL; on Lambda the
    proxy endpoint with the service role's secret; else the embedded PostgreSQL as gligabao_app.

    `admin`: the URL the migrations connect with (the tables' owner): GB_MIGRATION_DATABASE_URL;
    on Lambda the proxy endpoint with the cluster's master secret; else DATABASE_URL (one role
    for everything, which owns the tables and so is not held by the policies); else the embedded
    PostgreSQL's superuser."""
    from gligabao.db.migrate import APP_ROLE

    if admin:
        if settings.migration_database_url:
            return settings.migration_database_url
        if settings.db_secret_arn:
            return database_url_from_secret(settings, settings.db_secret_arn)
    if settings.database_url:
        return settings.database_url
    if settings.db_app_secret_arn and not admin:
        return database_url_from_secret(settings, settings.db_app_secret_arn)
    from gligabao.local.embedded_pg import embedded_database_url

    return embedded_database_url(
        os.path.join(settings.data_dir, "pgdata"),
        user=None if admin else APP_ROLE,
        version=settings.postgres_version,
    )


def admin_database(settings: Settings) -> Database:
    """Units of work as the tables' owner: for the migrations only, never for the service."""
    return Database(
        lambda: database_url(settings, admin=True), server_side_prepare=not settings.behind_rds_proxy
    )


_installed: Bundle | None = None
_install_lock = threading.Lock()


def bundle() -> Bundle:
    """This container's bundle, built from the environment on first use. A variable the service
    cannot use is a 503 naming it (and is read again on the next call), never a crash."""
    global _installed
    with _install_lock:
        if _installed is None:
            try:
                settings = Settings.from_env()
            except InvalidConfiguration as error:
                raise NotConfigured(str(error)) from None
            _installed = Bundle(settings)
        return _installed


def install(new: Bundle | None) -> Bundle | None:
    """Make `new` this process's bundle (the local API, tests); None: build it again from the
    environment on next use. Returns the bundle it replaces."""
    global _installed
    with _install_lock:
        previous, _installed = _installed, new
        return previous


# --- the deploy-time migrations (functions/migrate) ---------------------------------------------


def migrate_schema(deadline: float | None, requested: int | None = None) -> Outcome:
    """Apply the schema (up to the template's SchemaVersion `requested`) to this container's
    database as its owner, waiting for it until `deadline`; then give the service's role the
    password of its secret (GB_DB_APP_SECRET_ARN), so that a deploy keeps the two in step. When
    the database is already newer (a rollback), nothing is done at all."""
    from gligabao.aws.secrets import secret_password
    from gligabao.db.deploy_migrations import apply_migrations
    from gligabao.db.migrate import set_role_password

    settings = bundle().settings
    database = admin_database(settings)
    try:
        outcome = apply_migrations(database, settings.embedding_dimensions, deadline, requested)
        if settings.db_app_secret_arn and outcome.kept_at is None:
            set_role_password(database.connection(), secret_password(settings.db_app_secret_arn, fresh=True))
        return outcome
    finally:
        database.close()


def rotate_app_secret(event: dict) -> str:
    """One step of the rotation of the service role's secret (GB_DB_APP_SECRET_ARN): the migrate
    function is its Secrets Manager rotation function (gligabao.aws.rotation)."""
    from gligabao.aws.rotation import rotate
    from gligabao.aws.secrets import secrets_manager_client
    from gligabao.db.migrate import APP_ROLE
    from gligabao.db.role_passwords import DatabaseRolePasswords

    settings = bundle().settings
    if not settings.db_app_secret_arn:
        raise NotConfigured("GB_DB_APP_SECRET_ARN is not set: no secret to rotate")
    passwords = DatabaseRolePasswords(
        admin_database(settings), lambda role, password: role_login_url(settings, role, password)
    )
    try:
        return rotate(
            event, secrets_manager_client(), passwords, secret_arn=settings.db_app_secret_arn, role=APP_ROLE
        )
    finally:
        passwords.close()


def role_login_url(settings: Settings, role: str, password: str) -> str:
    """A connection as `role` with `password` to the database itself. On Lambda: the cluster's
    endpoint, which the master secret holds (its attachment writes it), not the proxy (which
    accepts only the secret's current password), verified against Amazon RDS's authorities,
    with SCRAM required besides. Else the owner's URL with that role and password."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from gligabao.aws.secrets import database_secret, rds_certificates

    if settings.db_secret_arn and not settings.migration_database_url:
        cluster = database_secret(settings.db_secret_arn)
        return make_conninfo(
            host=cluster["host"],
            port=cluster.get("port", 5432),
            dbname=settings.db_name,
            user=role,
            password=password,
            sslmode="verify-full",
            sslrootcert=rds_certificates(),
            require_auth="scram-sha-256",
        )
    params = conninfo_to_dict(database_url(settings, admin=True))
    return make_conninfo(**{**params, "user": role, "password": password})


def apply_schema() -> list[str]:
    """Apply the pending migrations as the tables' owner (`gligabao migrate`, `gligabao serve`),
    then check that the database's vectors are the configured embedder's (EmbeddingSpaceMismatch)."""
    from gligabao.db.embedding_space import check_embedding_space
    from gligabao.db.migrate import ensure_schema

    settings = bundle().settings
    database = admin_database(settings)
    try:
        applied = ensure_schema(database, settings.embedding_dimensions)
        check_embedding_space(database.connection(), embedder_identity(settings))
        return applied
    finally:
        database.close()


def embedder_identity(settings: Settings) -> str:
    """What makes the vectors: the provider and its model (db/embedding_space.py)."""
    if settings.embedding_provider == "offline":
        from gligabao.ai.offline.embeddings import OFFLINE_EMBEDDING_MODEL

        return f"offline:{OFFLINE_EMBEDDING_MODEL}"
    return f"openai:{settings.embedding_model}"


def database_passwords() -> list[str]:
    """The database passwords this container may hold (the URLs', the secrets'), which no error
    reason may show."""
    from gligabao.aws.secrets import secret_password
    from gligabao.db.deploy_migrations import passwords_in

    deps = bundle()
    settings = deps.settings
    resolved = deps.database.url() if isinstance(deps.database, Database) and deps.database._url else None
    found = passwords_in([settings.database_url, settings.migration_database_url, resolved])
    for arn in filter(None, (settings.db_secret_arn, settings.db_app_secret_arn)):
        try:
            found.append(secret_password(arn))
        except Exception:  # an unreadable secret has no password to hide
            continue
    return found
