"""All configuration: one pydantic model over the environment, the only reader of `os.environ`.

`Settings.from_env()` is read once per container by the bootstrap; tests build a `Settings`
of their own (`Settings(database_url=..., anthropic_api_key=...)`) instead of setting variables.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from gligabao.limits import HNSW_MAX_VECTOR_DIMENSIONS, Limits

# Environment variable -> field. The provider variables are the SDKs' own names.
ENVIRONMENT = {
    "DATABASE_URL": "database_url",
    "GB_DATA_DIR": "data_dir",
    "GB_POSTGRES_VERSION": "postgres_version",
    "GB_DB_SECRET_ARN": "db_secret_arn",
    "GB_DB_HOST": "db_host",
    "GB_DB_NAME": "db_name",
    "GB_DB_CA": "db_ca",
    "GB_SECRETS_ARN": "secrets_arn",
    "ANTHROPIC_API_KEY": "anthropic_api_key",
    "OPENAI_API_KEY": "openai_api_key",
    "ANTHROPIC_BASE_URL": "anthropic_base_url",
    "OPENAI_BASE_URL": "openai_base_url",
    "GB_LLM_PROVIDER": "llm_provider",
    "GB_LLM_MODEL": "llm_model",
    "GB_EMBEDDING_MODEL": "embedding_model",
    "GB_EMBEDDING_PROVIDER": "embedding_provider",
    "GB_EMBEDDING_DIMENSIONS": "embedding_dimensions",
    "GB_GEO": "geo",
    "GB_GEO_RESOLVER": "geo_resolver",
    "GB_GEO_RADIUS_KM": "geo_radius_km",
    "GB_PLACE_INDEX": "place_index",
    # remember's web_search: the model's server-side web search tool (Anthropic API only).
    "GB_WEB_SEARCH": "web_search",
    "POWERTOOLS_SERVICE_NAME": "service_name",
    # Authentication
    "GB_AUTH_MODE": "auth_mode",
    "GB_JWT_ISSUER": "jwt_issuer",
    "GB_JWT_AUDIENCE": "jwt_audience",
    "GB_JWKS": "jwks",
    # The local servers (`gligabao serve`, `gligabao explore`): host names they answer to.
    "GB_ALLOWED_HOSTS": "allowed_hosts",
    # Row-level security: the service connects as its own role, the migrations as the admin.
    "GB_MIGRATION_DATABASE_URL": "migration_database_url",
    "GB_DB_APP_SECRET_ARN": "db_app_secret_arn",
    # Asynchronous remember: the SQS FIFO queue of the jobs (the template sets it).
    "GB_JOBS_QUEUE_URL": "jobs_queue_url",
    # The MCP server (`gligabao mcp`): the API it calls and whose memory it serves.
    "GB_API_URL": "mcp_api_url",
    "GB_API_AUTH": "mcp_api_auth",
    "GB_API_TOKEN": "mcp_api_token",
    "GB_USER_ID": "mcp_user_id",
    "GB_DATASET": "mcp_dataset",
    "GB_MCP_TOKEN": "mcp_http_token",
    "GB_MCP_ALLOWED_HOSTS": "mcp_allowed_hosts",
    "GB_MCP_ALLOWED_ORIGINS": "mcp_allowed_origins",
    # OpenAI-compatible LLMs (GB_LLM_PROVIDER=openai) and the price table of every model.
    "GB_LLM_STRUCTURED_OUTPUT": "llm_structured_output",
    "GB_MODEL_PRICES": "model_prices",
    # What a request may ask for: the models it may name and the highest reasoning level.
    "GB_ALLOWED_MODELS": "allowed_models",
    "GB_MAX_REASONING": "max_reasoning",
}


class ModelPrice(BaseModel):
    """One model's entry of GB_MODEL_PRICES: USD per million tokens, the gligabao server's fields.

    Cache writes and reads left unpriced are billed as input. Above long_threshold input tokens
    (cache included) a call's input and output are billed at long_input and long_output; the three
    come together (that server bills a missing long rate as 0, which would hide a cost)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cache_write: float | None = Field(None, ge=0, allow_inf_nan=False)
    cache_read: float | None = Field(None, ge=0, allow_inf_nan=False)
    long_threshold: int | None = Field(None, gt=0)
    long_input: float | None = Field(None, ge=0, allow_inf_nan=False)
    long_output: float | None = Field(None, ge=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _long_context_complete(self) -> ModelPrice:
        named = [x is not None for x in (self.long_threshold, self.long_input, self.long_output)]
        if any(named) and not all(named):
            raise ValueError("long_threshold, long_input and long_output come together")
        return self


# The words of a switch's environment variable.
_ON = frozenset({"on", "true", "1", "yes"})
_OFF = frozenset({"off", "false", "0", "no"})


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # The database: DATABASE_URL; on Lambda the RDS Proxy endpoint with the cluster secret;
    # locally (neither set) the embedded PostgreSQL in data_dir.
    database_url: str | None = None
    data_dir: str = Field(default_factory=lambda: os.path.join(os.getcwd(), "var"))
    # The embedded PostgreSQL of a new data folder (one already made keeps its own): None is 18.
    postgres_version: Literal[16, 18] | None = None
    db_secret_arn: str | None = None
    db_host: str | None = None
    db_name: str = "gligabao"
    # The authorities that verify the database's TLS certificate on Lambda: `public` for RDS Proxy
    # (ACM certificates, Amazon Trust Services' roots), `rds` for the cluster itself (Amazon RDS's
    # own authorities, shipped in the package); the template sets it with GB_DB_HOST.
    db_ca: Literal["public", "rds"] = "public"

    # Model providers. Keys come from here or, on Lambda, from the secret named by secrets_arn.
    secrets_arn: str | None = None
    anthropic_api_key: SecretStr | None = None
    openai_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    openai_base_url: str | None = None
    # "offline": the rule-based LLM and hashed embeddings shipped in the package (ai/offline), which
    # `gligabao serve` chooses when no key is set; elsewhere only when named.
    llm_provider: Literal["anthropic", "bedrock", "openai", "offline"] = "anthropic"
    llm_model: str = "claude-haiku-5-5"
    embedding_provider: Literal["openai", "offline"] = "openai"
    embedding_model: str = "text-embedding-3-small"
    embedding_dimensions: int = Field(1536, gt=0, le=16000)

    geo: bool = False
    geo_resolver: Literal["local", "aws-location"] = "local"
    geo_radius_km: float = Field(50.0, gt=0, le=20015)
    place_index: str | None = None

    # remember's `web_search`: search the web for the latest events about a text's key entities
    # with Anthropic's web search tool ($0.01 a search besides the tokens) and remember what it finds.
    # Off by default: the operator pays for the searches. It needs the Anthropic API (an
    # ANTHROPIC_API_KEY): Bedrock and OpenAI-compatible servers have no such tool.
    web_search: bool = False

    service_name: str = "gligabao"
    limits: Limits = Field(default_factory=Limits)

    # Authentication. iam: API Gateway checks SigV4 and the caller names the user; jwt: API
    # Gateway validates a bearer token and the user is its subject; none: nothing is checked
    # (a private network only). The issuer, audiences (comma-separated) and JWKS (a file or a URL)
    # are read only by the local API, which emulates API Gateway's JWT authorizer.
    auth_mode: Literal["iam", "jwt", "none"] = "iam"
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    jwks: str | None = None

    # The local API and the explorer answer only requests whose Host (and Origin, if any) names
    # this machine: localhost, 127.0.0.0/8, [::1], the address they listen on. Listening on a
    # wildcard address (0.0.0.0, ::), list here the names others reach them by, comma-separated
    # (local/browser_guard.py; --allowed-host adds to it).
    allowed_hosts: str | None = None

    # Row-level security. database_url (or, on Lambda, the proxy with db_app_secret_arn's
    # credentials, user gligabao_app) is the service's connection, subject to the policies; the
    # migrations connect with migration_database_url, else (on Lambda) the cluster's master
    # secret, else database_url itself; locally the embedded PostgreSQL's superuser migrates and
    # the service connects as gligabao_app over its Unix socket.
    migration_database_url: str | None = None
    db_app_secret_arn: str | None = None

    # Asynchronous remember: the SQS FIFO queue the remember function sends its jobs to and the
    # worker drains. Unset (and not `gligabao serve`, which runs its own queue): async is a 503.
    jobs_queue_url: str | None = None

    # The MCP server (`gligabao mcp`, a client of the API; its flags win over these): the API's URL,
    # its authentication (iam: SigV4 with the caller's AWS credentials; jwt: the bearer token
    # GB_API_TOKEN; none), the user whose memory it serves and the default dataset.
    mcp_api_url: str | None = None
    mcp_api_auth: Literal["iam", "jwt", "none"] | None = None
    mcp_api_token: SecretStr | None = None
    mcp_user_id: str | None = None
    mcp_dataset: str | None = None
    # Its streamable HTTP (`--http`): the bearer token every MCP client must send (required when it
    # listens beyond loopback), and the Host and Origin values it accepts beyond its own
    # (comma-separated; for a published container port, a LAN name, a proxy).
    mcp_http_token: SecretStr | None = None
    mcp_allowed_hosts: str | None = None
    mcp_allowed_origins: str | None = None

    # OpenAI-compatible LLMs: with llm_provider "openai", every LLM stage goes through Chat
    # Completions at openai_base_url with openai_api_key (OpenAI, Ollama, vLLM...), llm_model naming
    # the server's model. Structured output: "auto" sends the reply's JSON schema and stops where a
    # server refuses it, "on" always sends it, "off" never. model_prices: USD per million tokens by
    # model name, each entry replacing or adding a whole entry of the package's table (ai/prices.py);
    # a model neither table knows costs null. As JSON: {"llama3.1:8b": [0, 0], "gpt-4o-mini":
    # {"input": 0.15, "output": 0.6, "cache_read": 0.075}}; an object may also name cache_write and
    # a long context: long_threshold, long_input and long_output together.
    llm_structured_output: Literal["auto", "on", "off"] = "auto"
    model_prices: dict[str, ModelPrice] = Field(default_factory=dict)

    # What a request's `models` and `reasoning` may ask for, billed to the operator: the models a
    # request may name (comma-separated; unset: only the model the deployment is configured with,
    # llm_model) and the highest reasoning level. The stages' own default is "none", so is the
    # maximum's: an untrusted caller cannot raise the cost above what the operator chose.
    allowed_models: tuple[str, ...] | None = None
    max_reasoning: Literal["none", "low", "medium", "high"] = "none"

    @field_validator("allowed_models", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            names = tuple(name.strip() for name in value.split(",") if name.strip())
            return names or None
        return value

    @property
    def request_models(self) -> tuple[str, ...]:
        """The models a request may name: GB_ALLOWED_MODELS, else the deployment's own."""
        return self.allowed_models or (self.llm_model,)

    @field_validator("model_prices", mode="before")
    @classmethod
    def _prices_json(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise ValueError(
                    "must be a JSON object of model to [input, output] USD per million tokens"
                ) from None
        if isinstance(value, dict):
            return {name: _model_price(name, price) for name, price in value.items()}
        return value

    @field_validator(
        "llm_provider",
        "embedding_provider",
        "geo_resolver",
        "auth_mode",
        "mcp_api_auth",
        "llm_structured_output",
        "db_ca",
        "max_reasoning",
        mode="before",
    )
    @classmethod
    def _lowercase(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    # AWS deploy: a size the vector indexes cannot take fails here, not at the first migration.
    @field_validator("embedding_dimensions")
    @classmethod
    def _fits_the_vector_index(cls, value: int) -> int:
        if value > HNSW_MAX_VECTOR_DIMENSIONS:
            raise ValueError(
                f"at most {HNSW_MAX_VECTOR_DIMENSIONS} (the HNSW index of a pgvector vector column)"
            )
        return value

    @field_validator("postgres_version", mode="before")
    @classmethod
    def _version_number(cls, value: object) -> object:
        return int(value) if isinstance(value, str) and value.strip().isdigit() else value

    @field_validator("geo", mode="before")
    @classmethod
    def _on_off(cls, value: object) -> object:
        return value.strip().lower() in _ON if isinstance(value, str) else value

    @field_validator("web_search", mode="before")
    @classmethod
    def _true_or_false(cls, value: object) -> object:
        """A switch that costs money: a value that is neither (GB_WEB_SEARCH=ture) is an error, not off."""
        if not isinstance(value, str):
            return value
        word = value.strip().lower()
        if word in _ON or word in _OFF:
            return word in _ON
        raise ValueError("must be true or false")

    @property
    def behind_rds_proxy(self) -> bool:
        """On Lambda the database is reached through RDS Proxy, with the cluster's secret."""
        return self.database_url is None and (self.db_secret_arn or self.db_app_secret_arn) is not None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings of this environment; InvalidConfiguration names the variable that is wrong."""
        env = dict(os.environ if env is None else env)
        values: dict[str, object] = {field: env[name] for name, field in ENVIRONMENT.items() if env.get(name)}
        try:
            values["limits"] = Limits.from_env(env)
            return cls.model_validate(values)
        except ValidationError as error:
            raise InvalidConfiguration(_first_problem(error)) from None


def _model_price(name: str, price: object) -> ModelPrice:
    """[input, output], or an object of ModelPrice's fields, each a number at least 0."""
    if isinstance(price, ModelPrice):
        return price
    if isinstance(price, (list, tuple)) and len(price) == 2 and all(_is_price(x) for x in price):
        return ModelPrice(input=price[0], output=price[1])
    if isinstance(price, dict):
        try:
            return ModelPrice.model_validate(price)
        except ValidationError as error:
            problem = error.errors(include_url=False, include_input=False)[0]
            where = ".".join([name, *(str(part) for part in problem["loc"])])
            raise ValueError(f"{where}: {problem['msg'].removeprefix('Value error, ')}") from None
    raise ValueError(
        "each price must be [input, output] or an object of input, output, cache_write, cache_read, "
        "long_threshold, long_input and long_output: USD per million tokens, numbers >= 0"
    )


def _is_price(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


class InvalidConfiguration(ValueError):
    """An environment variable holds a value the service cannot use."""


def _first_problem(error: ValidationError) -> str:
    problem = error.errors(include_url=False, include_input=False)[0]
    field = str(problem["loc"][-1]) if problem["loc"] else ""
    variable = next((name for name, f in ENVIRONMENT.items() if f == field), f"GB_{field.upper()}")
    return f"configuration invalid: {variable}: {problem['msg']}"


def environment_value(name: str) -> str | None:
    """One variable of the environment, for what must be known before any Settings exist (the
    logger's service name at import)."""
    return os.environ.get(name) or None
