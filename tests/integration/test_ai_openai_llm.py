"""The LLM through an OpenAI-compatible Chat Completions API (GB_LLM_PROVIDER=openai), with the real
`openai` SDK against the local fake server: structured output where the server takes it, the same
JSON repair where it does not, the same retries, tokens and prices from the configured table."""

import pytest
from conftest import reconfigure
from fakes.fake_http import Fault
from fakes.fixtures import OPENAI_TEST_KEY
from fakes.openai_server import Chat
from pydantic import BaseModel

from gligabao import bootstrap
from gligabao.ai.openai_llm import OpenAICompatibleLLM
from gligabao.errors import NotConfigured, ProviderError
from gligabao.observability.inferences import CallContext

PROMPT = "Alice works at Acme and lives in Paris."
MODEL = "llama3.1:8b"


class Fact(BaseModel):
    source: str
    target: str
    relation: str


class Facts(BaseModel):
    facts: list[Fact]


ALICE_AT_ACME = {"facts": [{"source": "Alice", "target": "Acme", "relation": "works_at"}]}
PARSED = Facts(facts=[Fact(source="Alice", target="Acme", relation="works_at")])


@pytest.fixture
def llm(fake_openai):
    reconfigure(llm_provider="openai", llm_model=MODEL, model_prices={MODEL: (0.5, 1.5)})
    built = bootstrap.bundle().llm
    assert isinstance(built, OpenAICompatibleLLM)
    return built


@pytest.fixture
def call() -> CallContext:
    return CallContext(user_id="u1", type="remember", session_id="a", request_id="req-1")


def complete(llm, call, stage="extract", **options):
    options.setdefault("system", "Extract the facts.")
    options.setdefault("content", PROMPT)
    options.setdefault("reply_model", Facts)
    return llm.complete(call, stage, **options)


def test_a_reply_is_asked_with_its_json_schema_and_validated_into_the_reply_model(fake_openai, llm, call):
    fake_openai.queue_chat(ALICE_AT_ACME)

    assert complete(llm, call) == PARSED

    [request] = fake_openai.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {OPENAI_TEST_KEY}"
    assert request.headers["x-gligabao-stage"] == "extract"
    body = request.body
    assert body["model"] == MODEL
    assert body["messages"] == [
        {"role": "system", "content": "Extract the facts."},
        {"role": "user", "content": PROMPT},
    ]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "Facts"
    assert body["response_format"]["json_schema"]["schema"] == Facts.model_json_schema()
    assert "reasoning_effort" not in body


def test_tokens_are_recorded_and_priced_from_the_configured_table(fake_openai, llm, call):
    fake_openai.queue_chat(Chat(data=ALICE_AT_ACME, usage={"prompt_tokens": 1000, "completion_tokens": 200}))

    complete(llm, call, model=MODEL)

    [inference] = call.inferences
    assert (inference.stage, inference.model, inference.ok) == ("extract", MODEL, True)
    assert (inference.input_tokens, inference.output_tokens) == (1000, 200)
    assert inference.cost_usd == pytest.approx((1000 * 0.5 + 200 * 1.5) / 1_000_000)


def test_prompt_tokens_read_from_the_cache_cost_the_configured_cache_read_price(fake_openai, call):
    prices = {MODEL: {"input": 0.5, "output": 1.5, "cache_read": 0.05}}
    reconfigure(llm_provider="openai", llm_model=MODEL, model_prices=prices)
    usage = {"prompt_tokens": 1000, "completion_tokens": 200, "prompt_tokens_details": {"cached_tokens": 600}}
    fake_openai.queue_chat(Chat(data=ALICE_AT_ACME, usage=usage))

    complete(bootstrap.bundle().llm, call, model=MODEL)

    [inference] = call.inferences
    assert (inference.input_tokens, inference.cached_tokens) == (1000, 600)  # prompt_tokens counts them
    assert inference.cost_usd == 0.00053  # 400 x 0.5 + 600 x 0.05 + 200 x 1.5


def test_a_model_no_price_table_knows_costs_null_not_a_guess(fake_openai, llm, call):
    fake_openai.queue_chat(ALICE_AT_ACME)

    complete(llm, call, model="qwen2.5:7b-instruct")

    [inference] = call.inferences
    assert inference.input_tokens > 0 and inference.cost_usd is None


def test_a_server_without_usage_records_the_call_without_tokens_or_cost(fake_openai, llm, call):
    fake_openai.queue_chat(Chat(data=ALICE_AT_ACME, usage=None))

    assert complete(llm, call) == PARSED
    [inference] = call.inferences
    assert (inference.input_tokens, inference.output_tokens, inference.cost_usd) == (None, None, None)


def test_a_server_refusing_structured_output_is_asked_again_without_it_and_never_again_with_it(
    fake_openai, llm, call
):
    fake_openai.structured_output = False
    fake_openai.queue_chat("Here you are:\n```json\n" + '{"facts": []}' + "\n```", ALICE_AT_ACME)

    assert complete(llm, call) == Facts(facts=[])
    assert complete(llm, call) == PARSED

    formats = ["response_format" in body for body in fake_openai.chat_requests]
    assert formats == [True, False, False]  # refused once; then the model is asked plainly
    assert [i.ok for i in call.inferences] == [True, True]


def test_structured_output_off_never_sends_a_schema(fake_openai, call):
    reconfigure(llm_provider="openai", llm_model=MODEL, llm_structured_output="off")
    fake_openai.queue_chat('{"facts": []}')

    complete(bootstrap.bundle().llm, call)

    assert "response_format" not in fake_openai.chat_requests[0]


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"facts": []}\n```',
        'Sure! The facts are: {"facts": []} Hope it helps.',
        '<think>The user wants {facts}. Let me see.</think>\n{"facts": []}',
    ],
)
def test_fences_prose_and_thinking_around_the_json_are_repaired(fake_openai, llm, call, text):
    fake_openai.queue_chat(text)

    assert complete(llm, call) == Facts(facts=[])


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (
            Chat(text='{"facts": [', finish_reason="length"),
            "LLM reply of stage extract was truncated (length)",
        ),
        (Chat(text="", refusal="I can't help with that."), "LLM refused to answer stage extract"),
        (Chat(text="", finish_reason="content_filter"), "LLM refused to answer stage extract"),
        (Chat(text="   "), "LLM reply of stage extract was empty"),
        (Chat(text="no JSON at all"), "LLM reply of stage extract was not JSON"),
        (Chat(data={"facts": [{"source": "Alice"}]}), "LLM reply of stage extract did not fit its schema"),
    ],
)
def test_a_broken_reply_is_a_502_and_its_call_is_still_recorded(fake_openai, llm, call, reply, error):
    fake_openai.queue_chat(reply)

    with pytest.raises(ProviderError) as raised:
        complete(llm, call)

    assert raised.value.status == 502 and raised.value.message.startswith(error)
    [inference] = call.inferences
    assert inference.ok is False and inference.error.startswith(error)
    assert inference.input_tokens is not None  # the server answered and billed it


def test_a_body_that_is_no_chat_completion_is_a_502(fake_openai, llm, call):
    fake_openai.inject(Fault.body("<html>gateway</html>"))

    with pytest.raises(ProviderError, match="was not a Chat Completions reply: not JSON"):
        complete(llm, call)


def test_server_errors_are_retried_with_the_same_policy_as_the_anthropic_path(fake_openai, llm, call):
    fake_openai.queue_chat(Chat(status=500), Chat(status=429), ALICE_AT_ACME)

    assert complete(llm, call) == PARSED
    assert len(fake_openai.chat_requests) == 3


def test_a_client_error_is_not_retried(fake_openai, llm, call):
    fake_openai.queue_chat(Chat(status=401))

    with pytest.raises(ProviderError, match="HTTP 401"):
        complete(llm, call)
    assert len(fake_openai.chat_requests) == 1


def test_an_unanswered_attempt_ends_by_the_deadline(fake_openai, llm, call):
    import time

    fake_openai.inject(Fault.never_answer(), times=3)
    started = time.monotonic()

    with pytest.raises(ProviderError):
        complete(llm, call, deadline=time.monotonic() + 4.0)

    assert time.monotonic() - started < 4.0


def test_a_reasoning_level_asks_for_reasoning_effort_and_records_the_reasoning_tokens(fake_openai, llm, call):
    fake_openai.queue_chat(ALICE_AT_ACME)

    complete(llm, call, reasoning="medium", max_tokens=1000)

    body = fake_openai.chat_requests[0]
    assert body["reasoning_effort"] == "medium" and body["max_tokens"] == 8192 + 1000
    assert call.inferences[0].thinking_tokens == 12 and call.inferences[0].reasoning == "medium"


def test_an_image_block_is_sent_as_a_data_url_part(fake_openai, llm, call):
    fake_openai.queue_chat(ALICE_AT_ACME)
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}

    complete(llm, call, stage="image", content=[image, {"type": "text", "text": "<caption>x</caption>"}])

    assert fake_openai.chat_requests[0]["messages"][1]["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "text", "text": "<caption>x</caption>"},
    ]


def test_without_openai_api_key_the_llm_is_not_configured(memory_bundle):
    reconfigure(llm_provider="openai", llm_model=MODEL)

    with pytest.raises(NotConfigured, match="LLM not configured: OPENAI_API_KEY is not set"):
        _ = bootstrap.bundle().llm
