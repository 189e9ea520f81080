"""The LLM through the real `anthropic` SDK against a local fake Messages API (SPEC sections 8 and 12)."""

import time
from dataclasses import replace

import pytest
from conftest import reconfigure
from fakes.anthropic_server import Reply
from fakes.fixtures import ANTHROPIC_TEST_KEY
from pydantic import BaseModel

from gligabao import bootstrap
from gligabao.ai.llm import LLM
from gligabao.ai.retries import RetryPolicy
from gligabao.errors import ProviderError
from gligabao.observability.inferences import CallContext, save_inferences

PROMPT = "Alice works at Acme and lives in Paris."


class Fact(BaseModel):
    source: str
    target: str
    relation: str


class Facts(BaseModel):
    facts: list[Fact]


ALICE_AT_ACME = {"facts": [{"source": "Alice", "target": "Acme", "relation": "works_at"}]}


@pytest.fixture
def call() -> CallContext:
    return CallContext(user_id="u1", type="remember", session_id="a", request_id="req-1")


def complete(call, stage="extract", **options):
    options.setdefault("system", "Extract the facts.")
    options.setdefault("content", PROMPT)
    options.setdefault("reply_model", Facts)
    return bootstrap.bundle().llm.complete(call, stage, **options)


def test_a_reply_is_validated_into_the_reply_model(fake_anthropic, call):
    fake_anthropic.queue(ALICE_AT_ACME)
    reply = complete(call)
    assert reply == Facts(facts=[Fact(source="Alice", target="Acme", relation="works_at")])


def test_the_request_carries_the_prompt_and_the_key(fake_anthropic, call):
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call, system="You extract facts.")
    request = fake_anthropic.requests[-1]
    assert request.headers["authorization"] == f"Bearer {ANTHROPIC_TEST_KEY}"
    assert request.body["system"] == "You extract facts."
    assert request.body["messages"] == [{"role": "user", "content": PROMPT}]


@pytest.mark.parametrize("stage", ["extract", "resolve", "query", "detect_geo"])
def test_every_request_carries_the_stage_header(fake_anthropic, call, stage):
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call, stage)
    assert fake_anthropic.requests[-1].headers["x-gligabao-stage"] == stage


def test_the_stage_header_is_sent_on_every_retry(fake_anthropic, call):
    fake_anthropic.queue(Reply.error(529), ALICE_AT_ACME)
    complete(call, "resolve")
    assert [r.headers["x-gligabao-stage"] for r in fake_anthropic.requests] == ["resolve", "resolve"]


def test_the_default_model_is_the_configured_one(fake_anthropic, call):
    reconfigure(llm_model="claude-sonnet-4-6")
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call)
    assert fake_anthropic.messages[-1]["model"] == "claude-sonnet-4-6"
    assert call.inferences[-1].model == "claude-sonnet-4-6"


def test_the_default_model_is_claude_haiku_5_5(fake_anthropic, call):
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call)
    assert fake_anthropic.messages[-1]["model"] == "claude-haiku-5-5"


def test_a_stage_model_overrides_the_default(fake_anthropic, call):
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call, model="claude-sonnet-4-6")
    assert fake_anthropic.messages[-1]["model"] == "claude-sonnet-4-6"


def test_reasoning_none_turns_thinking_off(fake_anthropic, call):
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call, reasoning="none", max_tokens=4096)
    body = fake_anthropic.messages[-1]
    assert body["thinking"] == {"type": "disabled"}
    assert body["max_tokens"] == 4096


@pytest.mark.parametrize(("level", "budget"), [("low", 2048), ("medium", 8192), ("high", 16384)])
def test_thinking_budget_per_level_with_max_tokens_raised_to_fit_the_answer(
    fake_anthropic, call, level, budget
):
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call, reasoning=level, max_tokens=4096)
    body = fake_anthropic.messages[-1]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == budget + 4096


def test_the_thinking_block_is_not_taken_for_the_answer(fake_anthropic, call):
    fake_anthropic.queue(Reply(data=ALICE_AT_ACME, thinking='Maybe {"facts": []} would do.'))
    assert complete(call, reasoning="low").facts[0].source == "Alice"


def test_structured_output_sends_the_reply_models_json_schema(fake_anthropic, call):
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call)
    output_format = fake_anthropic.messages[-1]["output_config"]["format"]
    assert output_format["type"] == "json_schema"
    schema = output_format["schema"]
    assert schema["required"] == ["facts"]
    assert schema["additionalProperties"] is False
    assert set(schema["$defs"]["Fact"]["properties"]) == {"source", "target", "relation"}


def test_models_before_structured_output_get_no_output_config(fake_anthropic, call):
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call, model="claude-3-5-haiku-20241022")
    assert "output_config" not in fake_anthropic.messages[-1]


def test_image_content_blocks_are_sent_as_given(fake_anthropic, call):
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    content = [image, {"type": "text", "text": "Describe the picture."}]
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call, "image", content=content)
    assert fake_anthropic.messages[-1]["messages"][0]["content"] == content


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"facts": [{"source": "Alice", "target": "Acme", "relation": "works_at"}]}\n```',
        'The facts: {"facts": [{"source": "Alice", "target": "Acme", "relation": "works_at"}]} Done.',
    ],
    ids=["code-fence", "prose"],
)
def test_json_in_code_fences_or_prose_is_parsed(fake_anthropic, call, text):
    fake_anthropic.queue(text)
    assert complete(call).facts[0].relation == "works_at"


def test_a_reply_truncated_at_max_tokens_is_a_502(fake_anthropic, call):
    fake_anthropic.queue(Reply(text='{"facts": [{"source": "Al', stop_reason="max_tokens"))
    with pytest.raises(ProviderError, match="truncated") as raised:
        complete(call)
    assert raised.value.status == 502


def test_a_refusal_is_a_502(fake_anthropic, call):
    refusal = {"type": "refusal", "category": "cyber"}
    fake_anthropic.queue(Reply(text="", stop_reason="refusal", stop_details=refusal))
    with pytest.raises(ProviderError, match="refused") as raised:
        complete(call)
    assert raised.value.status == 502


def test_an_empty_reply_is_a_502(fake_anthropic, call):
    fake_anthropic.queue(Reply(text="  \n"))
    with pytest.raises(ProviderError, match="empty"):
        complete(call)


def test_an_unparseable_reply_is_a_502(fake_anthropic, call):
    fake_anthropic.queue("I could not find any facts, sorry.")
    with pytest.raises(ProviderError, match="not JSON") as raised:
        complete(call)
    assert raised.value.status == 502


def test_a_reply_not_fitting_the_schema_is_a_502_naming_the_field(fake_anthropic, call):
    fake_anthropic.queue({"facts": [{"source": "Alice", "target": "Acme"}]})
    with pytest.raises(ProviderError, match="did not fit its schema") as raised:
        complete(call)
    assert "facts.0.relation" in raised.value.message


def test_a_server_error_after_the_retries_is_a_502_and_is_recorded_once(fake_anthropic, call):
    fake_anthropic.queue(Reply.error(500), times=3)
    with pytest.raises(ProviderError, match=r"HTTP 500 api_error .* after 3 attempts") as raised:
        complete(call)
    assert raised.value.status == 502
    assert (
        raised.value.__cause__ is None and raised.value.__suppress_context__
    )  # the SDK error quotes the reply
    assert len(fake_anthropic.requests) == 3  # the first try and two retries
    [inference] = call.inferences
    assert inference.ok is False
    assert "HTTP 500" in inference.error
    assert inference.input_tokens is None and inference.cost_usd is None


def test_an_overloaded_provider_is_retried(fake_anthropic, call):
    fake_anthropic.queue(Reply.error(529), Reply.error(529), ALICE_AT_ACME)
    assert complete(call).facts[0].target == "Acme"
    assert len(fake_anthropic.requests) == 3
    assert [i.ok for i in call.inferences] == [True]


def test_a_bad_request_is_not_retried(fake_anthropic, call):
    fake_anthropic.queue(Reply.error(400))
    with pytest.raises(ProviderError, match="HTTP 400 invalid_request_error"):
        complete(call)
    assert len(fake_anthropic.requests) == 1


def test_a_timeout_is_a_502(fake_anthropic, call):
    fake_anthropic.queue(Reply(data=ALICE_AT_ACME, delay_s=1.0))
    llm = LLM(
        default_model="claude-haiku-5-5",
        api_key=ANTHROPIC_TEST_KEY,
        base_url=fake_anthropic.url,
        retry=replace(RetryPolicy.for_llm(), attempt_timeout_s=0.2, max_attempts=1),
    )
    with pytest.raises(ProviderError, match="timed out"):
        llm.complete(call, "extract", system="s", content=PROMPT, reply_model=Facts)
    assert call.inferences[-1].ok is False


def test_an_unreachable_provider_is_a_502(call):
    llm = LLM(
        default_model="claude-haiku-5-5",
        api_key=ANTHROPIC_TEST_KEY,
        base_url="http://127.0.0.1:9",
        retry=replace(RetryPolicy.for_llm(), max_attempts=1),
    )
    with pytest.raises(ProviderError, match="could not reach the provider"):
        llm.complete(call, "extract", system="s", content=PROMPT, reply_model=Facts)
    assert call.inferences[-1].ok is False


def test_the_timeout_fits_the_time_left_before_the_deadline(fake_anthropic, call):
    fake_anthropic.queue(ALICE_AT_ACME, ALICE_AT_ACME)
    complete(call)
    assert float(fake_anthropic.requests[-1].headers["x-stainless-timeout"]) == 60.0
    complete(call, deadline=time.monotonic() + 12)
    assert float(fake_anthropic.requests[-1].headers["x-stainless-timeout"]) <= 10.0


def test_no_call_is_made_without_time_left_and_the_failure_is_recorded(fake_anthropic, call):
    with pytest.raises(ProviderError, match="no time left"):
        complete(call, deadline=time.monotonic() + 0.5)
    assert fake_anthropic.requests == []
    assert call.inferences[-1].ok is False


@pytest.mark.parametrize(
    "reply",
    [Reply.error(500), Reply.error(401), Reply(text="nothing"), Reply(data={"facts": [{"source": PROMPT}]})],
    ids=["server-error", "auth-error", "unparseable", "schema"],
)
def test_error_messages_never_hold_the_key_or_the_prompt(fake_anthropic, call, reply):
    fake_anthropic.queue(reply, times=3)
    with pytest.raises(ProviderError) as raised:
        complete(call)
    for message in (str(raised.value), call.inferences[-1].error):
        assert ANTHROPIC_TEST_KEY not in message
        assert PROMPT not in message
        assert "Alice" not in message


def test_tokens_and_cost_are_recorded(fake_anthropic, call):
    usage = {
        "input_tokens": 1000,
        "cache_read_input_tokens": 200,
        "cache_creation_input_tokens": 300,
        "output_tokens": 500,
    }
    fake_anthropic.queue(Reply(data=ALICE_AT_ACME, usage=usage, delay_s=0.2))
    started = time.monotonic()
    complete(call, "extract")
    took_ms = round((time.monotonic() - started) * 1000)
    [inference] = call.inferences
    assert (inference.stage, inference.model, inference.reasoning) == ("extract", "claude-haiku-5-5", "none")
    assert inference.input_tokens == 1500  # input, cache reads and cache writes
    assert inference.output_tokens == 500
    assert inference.thinking_tokens is None
    assert (inference.cache_write_tokens, inference.cached_tokens) == (300, 200)
    # claude-haiku-5-5: 1000 x 0.10 + 300 x 0.125 (cache write) + 200 x 0.01 (cache read) + 500 x 0.50
    assert inference.cost_usd == 0.0003895
    assert inference.ok is True and inference.error is None
    assert 200 <= inference.duration_ms <= took_ms  # the fake's 0.2 s at least, the call's time at most


def test_thinking_tokens_are_recorded_and_billed_as_output(fake_anthropic, call):
    fake_anthropic.queue(Reply(data=ALICE_AT_ACME, thinking="one two three four"))
    complete(call, reasoning="medium", model="claude-sonnet-4-6")
    inference = call.inferences[-1]
    assert inference.reasoning == "medium"
    assert inference.thinking_tokens == 4
    assert inference.output_tokens > inference.thinking_tokens
    assert inference.cost_usd == pytest.approx(
        (inference.input_tokens * 3.00 + inference.output_tokens * 15.00) / 1_000_000
    )


def test_a_configured_price_prices_claude_calls_too(fake_anthropic, call):
    reconfigure(model_prices={"claude-haiku-5-5": {"input": 0.2, "output": 1.0, "cache_read": 0.02}})
    usage = {"input_tokens": 1000, "cache_read_input_tokens": 2000, "output_tokens": 500}
    fake_anthropic.queue(Reply(data=ALICE_AT_ACME, usage=usage))
    complete(call, "extract")
    assert call.inferences[-1].cost_usd == 0.00074  # 1000 x 0.2 + 2000 x 0.02 + 500 x 1.0


def test_a_failed_reply_still_records_its_tokens(fake_anthropic, call):
    usage = {"input_tokens": 1000, "output_tokens": 4096}
    fake_anthropic.queue(Reply(text='{"facts": [', stop_reason="max_tokens", usage=usage))
    with pytest.raises(ProviderError):
        complete(call)
    inference = call.inferences[-1]
    assert (inference.ok, inference.error) == (False, "LLM reply of stage extract was truncated (max_tokens)")
    assert (inference.input_tokens, inference.output_tokens) == (1000, 4096)
    assert inference.cost_usd == pytest.approx(0.002148)  # claude-haiku-5-5: 1000 x 0.10 + 4096 x 0.50


def test_an_unknown_model_is_recorded_without_cost(fake_anthropic, call):
    fake_anthropic.queue(ALICE_AT_ACME)
    complete(call, model="claude-unreleased-9")
    assert call.inferences[-1].cost_usd is None
    assert call.inferences[-1].input_tokens > 0


def test_inferences_are_saved_to_gb_inferences(fake_anthropic, call, db):
    fake_anthropic.queue(ALICE_AT_ACME, Reply(text="not json"))
    complete(call, "extract", reasoning="low")
    with pytest.raises(ProviderError):
        complete(call, "resolve")
    save_inferences(db, call)
    rows = db.execute(
        "SELECT user_id, type, stage, model, reasoning, input_tokens, output_tokens, thinking_tokens,"
        " cost_usd::float8, session_id, request_id, ok, error FROM gb_inferences ORDER BY id"
    ).fetchall()
    first, second = call.inferences
    assert rows == [
        (
            "u1",
            "remember",
            "extract",
            "claude-haiku-5-5",
            "low",
            first.input_tokens,
            first.output_tokens,
            first.thinking_tokens,
            pytest.approx(first.cost_usd),
            "a",
            "req-1",
            True,
            None,
        ),
        (
            "u1",
            "remember",
            "resolve",
            "claude-haiku-5-5",
            "none",
            second.input_tokens,
            second.output_tokens,
            None,
            pytest.approx(second.cost_usd),
            "a",
            "req-1",
            False,
            "LLM reply of stage resolve was not JSON",
        ),
    ]
    assert first.thinking_tokens > 0
    assert call.saved == 2


def test_the_key_is_not_in_the_clients_repr(fake_anthropic):
    assert ANTHROPIC_TEST_KEY not in repr(bootstrap.bundle().llm)


def test_the_client_is_kept_until_its_key_changes(fake_anthropic):
    deps = bootstrap.bundle()
    first = deps.llm
    assert deps.llm is first
    deps = reconfigure(anthropic_api_key="sk-ant-rotated-key")
    assert deps.llm is not first
    assert deps.llm is deps.llm
