"""An image's reading (the gligabao server's image fields): its theme, its title and its legible
text by block, asked of the one vision call, stored with its extraction, returned beside ours, and
returned again for a repeated image without a model call."""

from __future__ import annotations

from fakes.anthropic_server import Reply
from image_files import image_body, image_file

CHART = {
    "description": "A bar chart of Acme's revenue by quarter in 2024.",
    "theme": "Chart",  # a model's capital is read as the word
    "title": " Acme revenue 2024 ",
    "text_blocks": [
        {"kind": "title", "text": "Acme revenue 2024"},
        {"kind": "axis", "text": "Q1 Q2 Q3 Q4"},
        {"kind": "sticker", "text": "draft"},  # off the list: other
        {"kind": "label", "text": "   "},  # no text: left out
        "not a block",
    ],
    "entities": [{"name": "Acme", "type": "organization", "description": ""}],
    "edges": [],
}


def test_an_image_is_read_as_a_theme_a_title_and_its_text_by_block(api, db, models):
    fake_anthropic, _ = models
    fake_anthropic.queue(Reply(data=CHART))

    reply = api.post("/v1/gb/remember", image_body(image_file()))

    assert reply.status == 200, reply.json
    body = reply.json
    assert (body["theme"], body["title"]) == ("chart", "Acme revenue 2024")
    assert body["text_blocks"] == [
        {"kind": "title", "text": "Acme revenue 2024"},
        {"kind": "axis", "text": "Q1 Q2 Q3 Q4"},
        {"kind": "other", "text": "draft"},
    ]
    assert body["text"] == "Acme revenue 2024\nQ1 Q2 Q3 Q4\ndraft"
    assert body["description"] == CHART["description"]  # ours, beside the server's
    [extraction] = db.execute("SELECT extraction FROM gb_image_artifacts").fetchone()
    assert (extraction["theme"], extraction["title"], len(extraction["text_blocks"])) == (
        "chart",
        "Acme revenue 2024",
        3,
    )
    system = fake_anthropic.messages[0]["system"]
    system = system if isinstance(system, str) else " ".join(block["text"] for block in system)
    assert "text_blocks" in system and "theme" in system

    again = api.post("/v1/gb/remember", image_body(image_file()))

    assert again.status == 200 and again.json["repeated"] is True
    assert {k: again.json[k] for k in ("theme", "title", "text", "text_blocks")} == {
        k: body[k] for k in ("theme", "title", "text", "text_blocks")
    }
    assert len(fake_anthropic.messages) == 1


def test_a_reply_without_a_reading_reads_as_other_untitled_and_textless(api, models):
    fake_anthropic, _ = models
    fake_anthropic.queue(Reply(data={"description": "A photo of a cat.", "entities": [], "edges": []}))

    reply = api.post("/v1/gb/remember", image_body(image_file("image/gif"), "image/gif"))

    assert reply.status == 200, reply.json
    assert [reply.json[k] for k in ("theme", "title", "text", "text_blocks")] == ["other", "", "", []]


def test_a_text_has_no_image_fields(api, models):
    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."})

    assert reply.status == 200, reply.json
    assert not {"theme", "title", "text", "text_blocks", "description"} & set(reply.json)
