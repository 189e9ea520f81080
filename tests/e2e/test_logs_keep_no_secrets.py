"""Keys and texts never reach the logs, whatever a request carries."""

from remember_helpers import use_rule_based_model

KEY_LIKE = "sk-ant-api03-Zq8vK2mN4pR7tW1xY5bC9dF3gH6jL0"
TEXT = f"Alice works at Acme. Her key is {KEY_LIKE}."


def test_a_remember_carrying_a_key_logs_neither_the_key_nor_the_text(api, capfd, fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)

    reply = api.post(
        "/v1/gb/remember",
        {"user_id": "u1", "text": TEXT, "session_id": "s1"},
        headers={"authorization": f"Bearer {KEY_LIKE}"},
    )

    assert reply.status == 200
    logged = "".join(capfd.readouterr())
    assert "remember.ok" in logged  # the monitoring event was logged: there was something to leak
    assert KEY_LIKE not in logged
    assert "Her key is" not in logged


def test_a_failed_remember_logs_neither_the_key_nor_the_text(api, capfd, fake_anthropic, fake_openai):
    from fakes.anthropic_server import Reply

    fake_anthropic.queue(Reply.error(500), times=3)

    reply = api.post("/v1/gb/remember", {"user_id": f"user-{KEY_LIKE}", "text": TEXT})

    assert reply.status == 502
    logged = "".join(capfd.readouterr())
    assert "remember.error" in logged
    assert "[REDACTED]" in logged  # the user id carrying the key was logged, redacted
    assert KEY_LIKE not in logged
    assert "Her key is" not in logged
    assert KEY_LIKE not in reply.raw.decode()
