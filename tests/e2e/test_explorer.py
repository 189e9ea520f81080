"""The memory explorer (`gligabao explore`) in a real browser: Debian's headless Chromium driven
by Playwright, the page served by the explorer's own server, its calls proxied to the local API
(the fake providers, the rule-based model). A console error fails the test."""

from __future__ import annotations

import itertools
import re
import threading
from dataclasses import dataclass, field

import pytest
from conftest import reconfigure
from explorer_browser import CHROMIUM, launch_chromium, screenshot_path, stand_in_api, synthetic_graph
from image_files import image_body, image_file
from ontology_helpers import register
from remember_helpers import prompt_of, remember, rule_based_model

from gligabao import bootstrap
from gligabao.explore.server import make_server


def cited_answer(body: dict) -> dict:
    """The rule-based model, which also answers a question, citing every fact and entity it was sent."""
    prompt = prompt_of(body)
    if "<graph>" not in prompt:
        return rule_based_model(body)
    edges = [int(m) for m in re.findall(r"^\[edge (\d+)\]", prompt, re.MULTILINE)]
    entities = [int(m) for m in re.findall(r"^\[entity (\d+)\]", prompt, re.MULTILINE)]
    return {"answer": "From memory.", "entities": entities, "edges": edges, "passages": []}


@pytest.fixture
def models(fake_anthropic, fake_openai):
    fake_anthropic.responder = cited_answer
    return fake_anthropic, fake_openai


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: `make test` installs it (apt-get install chromium)", pytrace=False
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


def _serve(api_url: str):
    server = make_server(api_url, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def explorer_url(local_api_server):
    server, url = _serve(local_api_server)
    yield url
    server.shutdown()
    server.server_close()


@dataclass
class Explorer:
    page: object
    url: str
    console_errors: list[str] = field(default_factory=list)
    expected_statuses: set[int] = field(default_factory=set)

    def open(self, user: str = "u1", dataset: str | None = None) -> None:
        query = f"?user={user}" + (f"&dataset={dataset}" if dataset else "")
        self.page.goto(self.url + "/" + query)

    def wait_for_graph(self) -> None:
        self.page.wait_for_selector("#graph[data-layout=done]")

    def edge_ids(self, state: str | None = None) -> set[int]:
        selector = "#edge-list button" + (f"[data-state={state}]" if state else "")
        return {
            int(i) for i in self.page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.edgeId)")
        }

    def entity_names(self) -> list[str]:
        return self.page.eval_on_selector_all(
            "#entity-list button", "els => els.map(e => e.firstChild.nextSibling.textContent)"
        )

    def click_on_canvas(self, kind: str, row_id: int) -> None:
        point = self.page.evaluate(f"gbExplorer.screenPoint('{kind}', {row_id})")
        self.page.mouse.click(point["x"], point["y"])

    def forget_confirmed(self, button: str) -> None:
        self.page.click(button)
        self.page.wait_for_selector("#confirm[open]")
        self.page.click("#confirm-forget")
        self.page.wait_for_selector("#notice:has-text('Forgotten')")

    def unexpected_errors(self) -> list[str]:
        # Chromium logs every non-2xx fetch as a console error: the ones a test provokes are expected.
        expected = [f"status of {status} " for status in self.expected_statuses]
        return [
            text
            for text in self.console_errors
            if not (text.startswith("Failed to load resource") and any(e in text for e in expected))
        ]

    def geometry(self) -> dict:
        """What the last draw put on the canvas: node circles and label boxes, in canvas pixels."""
        return self.page.evaluate("explorerGeometry()")

    def swatch_colours(self) -> dict[str, str]:
        """The legend's type -> the colour of its swatch (rgb(...))."""
        return dict(
            self.page.eval_on_selector_all(
                "#legend li",
                "els => els.map(e => [e.textContent.replace(/ \\(\\d+\\)$/, ''),"
                " getComputedStyle(e.querySelector('.swatch')).backgroundColor])",
            )
        )


def _page(browser, url: str):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(10_000)
    opened = Explorer(page, url)
    page.on("console", lambda message: message.type == "error" and opened.console_errors.append(message.text))
    page.on("pageerror", lambda error: opened.console_errors.append(f"page error: {error}"))
    return context, opened


@pytest.fixture
def explorer(browser, explorer_url, api):
    context, opened = _page(browser, explorer_url)
    yield opened
    context.close()
    assert opened.unexpected_errors() == []


@pytest.fixture
def synthetic(browser):
    """The page on graphs of a stand-in API (no database): synthetic(name=(entities, edges), ...)."""
    started = []

    def serve(**datasets) -> Explorer:
        api = stand_in_api(datasets)
        server, url = _serve(f"http://127.0.0.1:{api.server_address[1]}")
        context, opened = _page(browser, url)
        started.append((api, server, context, opened))
        return opened

    yield serve
    for api, server, context, opened in started:
        context.close()
        server.shutdown()
        server.server_close()
        api.shutdown()
        api.server_close()
        assert opened.unexpected_errors() == []


def overlaps(geometry: dict) -> dict[str, list]:
    """Every pair of node circles that overlap, label box that meets a circle, and pair of label
    boxes that intersect (touching is not overlapping)."""
    circles, boxes = geometry["circles"], geometry["labels"]

    def box_meets_circle(box, circle) -> bool:
        dx = circle["x"] - max(box["x"], min(circle["x"], box["x"] + box["w"]))
        dy = circle["y"] - max(box["y"], min(circle["y"], box["y"] + box["h"]))
        return dx * dx + dy * dy < circle["r"] ** 2

    def boxes_meet(a, b) -> bool:
        return not (
            a["x"] + a["w"] <= b["x"]
            or b["x"] + b["w"] <= a["x"]
            or a["y"] + a["h"] <= b["y"]
            or b["y"] + b["h"] <= a["y"]
        )

    return {
        "circles": [
            (a["id"], b["id"])
            for a, b in itertools.combinations(circles, 2)
            if (a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2 < (a["r"] + b["r"]) ** 2
        ],
        "label on circle": [
            (box["text"], circle["id"])
            for box in boxes
            for circle in circles
            if box_meets_circle(box, circle)
        ],
        "labels": [(a["text"], b["text"]) for a, b in itertools.combinations(boxes, 2) if boxes_meet(a, b)],
    }


def alice_and_friends(api) -> dict:
    first = remember(api, "Alice works at Acme. Alice lives in Paris. Bob knows Alice.", session_id="chat-1")
    second = remember(api, "Alice moved to Berlin in 2024.", session_id="chat-2")
    edges = {
        f"{e['source']} {e['relation']} {e['target']}": e["id"] for e in first["edges"] + second["edges"]
    }
    return {"first": first, "second": second, "edges": edges}


def test_the_graph_shows_every_entity_sized_by_degree_and_every_live_fact_with_its_relation(
    explorer, api, models
):
    known = alice_and_friends(api)

    explorer.open()
    explorer.wait_for_graph()

    assert explorer.entity_names() == ["Acme", "Alice", "Berlin", "Bob", "Paris"]
    live = {known["edges"][k] for k in ("Alice works_at Acme", "Bob knows Alice", "Alice lives_in Berlin")}
    assert explorer.edge_ids() == live  # the superseded Paris fact is not drawn by default
    assert explorer.page.inner_text("#edge-list").splitlines() == [
        "Alice lives_in Berlin",
        "Alice works_at Acme",
        "Bob knows Alice",
    ]
    degrees = dict(
        explorer.page.eval_on_selector_all(
            "#entity-list button", "els => els.map(e => [e.dataset.entityId, Number(e.dataset.degree)])"
        )
    )
    alice = next(e["id"] for e in known["first"]["entities"] if e["name"] == "Alice")
    assert degrees[str(alice)] == 3 and max(degrees.values()) == 3
    legend = explorer.page.inner_text("#legend")
    assert "person (2)" in legend and "place (2)" in legend and "organization (1)" in legend
    assert "5 entities · 3 facts" in explorer.page.inner_text("#stats")
    # everything fits a 1280x800 window: nothing sticks out of it, the canvas has the room left
    assert explorer.page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    ) == [
        1280,
        800,
    ]
    canvas = explorer.page.locator("#graph").bounding_box()
    assert canvas["width"] >= 600 and canvas["height"] >= 700
    # the canvas really draws: pixels of the type colours where the nodes are
    point = explorer.page.evaluate(f"gbExplorer.screenPoint('entity', {alice})")
    assert explorer.page.evaluate(
        "([x, y]) => { const c = document.getElementById('graph'); const r = c.getBoundingClientRect();"
        " const ratio = window.devicePixelRatio || 1;"
        " return Array.from(c.getContext('2d').getImageData((x - r.left) * ratio, (y - r.top) * ratio, 1, 1).data); }",
        [point["x"], point["y"]],
    )[:3] == [0x4E, 0x79, 0xA7]  # person's colour, from its name


def test_search_by_name_finds_an_entity_and_enter_opens_it(explorer, api, models):
    alice_and_friends(api)
    explorer.open()
    explorer.wait_for_graph()

    explorer.page.keyboard.press("/")
    explorer.page.keyboard.type("ber")
    assert explorer.page.inner_text("#search-results").strip().startswith("Berlin")
    explorer.page.keyboard.press("Enter")

    explorer.page.wait_for_selector("#detail h2:has-text('Berlin')")
    explorer.page.wait_for_selector("#timeline")
    assert "Alice lives_in Berlin" in explorer.page.inner_text("#timeline")


def test_the_time_slider_hides_a_superseded_fact_and_shows_it_again(explorer, api, models):
    known = alice_and_friends(api)
    paris = known["edges"]["Alice lives_in Paris"]
    berlin = known["edges"]["Alice lives_in Berlin"]
    explorer.open()
    explorer.wait_for_graph()
    assert paris not in explorer.edge_ids() and berlin in explorer.edge_ids()

    # back to when memory had only the first text: Paris was a live fact, Berlin unknown
    explorer.page.focus("#time")
    explorer.page.keyboard.press("Home")
    assert "as memory knew it at" in explorer.page.inner_text("#time-label")
    assert paris in explorer.edge_ids("live") and berlin not in explorer.edge_ids()
    assert "Berlin" not in explorer.entity_names()

    explorer.page.keyboard.press("End")  # now again: Paris is superseded, so hidden
    assert explorer.page.inner_text("#time-label") == "now: the live facts"
    assert paris not in explorer.edge_ids() and berlin in explorer.edge_ids("live")

    explorer.page.check("#superseded")  # on demand, drawn differently (dashed, struck through)
    assert paris in explorer.edge_ids("superseded") and berlin in explorer.edge_ids("live")

    explorer.page.select_option("#axis", "valid")  # the query's as_of: true in 2023? Paris only
    explorer.page.focus("#time")
    explorer.page.keyboard.press("Home")
    assert "as true at 2024-01-01 00:00:00 UTC" in explorer.page.inner_text("#time-label")
    assert berlin in explorer.edge_ids("live")


def test_clicking_an_edge_in_the_graph_shows_its_times_and_the_text_it_came_from(explorer, api, models):
    known = alice_and_friends(api)
    berlin = known["edges"]["Alice lives_in Berlin"]
    explorer.open()
    explorer.wait_for_graph()

    explorer.click_on_canvas("edge", berlin)

    explorer.page.wait_for_selector("#edge-source blockquote")
    assert explorer.page.inner_text("#edge-source blockquote") == "Alice moved to Berlin in 2024."
    assert explorer.page.inner_text("#edge-times [data-time=valid_at]") == "2024-01-01 00:00:00 UTC"
    assert explorer.page.inner_text("#edge-times [data-time=expired_at]") == "—"
    assert "session chat-2" in explorer.page.inner_text("#edge-source")
    assert explorer.page.get_attribute(f"#edge-list [data-edge-id='{berlin}']", "aria-current") == "true"


def test_an_image_s_fact_shows_the_image_s_description_as_its_source(explorer, api, models):
    reply = api.post("/v1/gb/remember", image_body(image_file(), caption="Alice works at Acme."))
    assert reply.status == 200, reply.json
    [works] = reply.json["edges"]
    explorer.open()
    explorer.wait_for_graph()

    explorer.click_on_canvas("edge", works["id"])

    explorer.page.wait_for_selector("#edge-source blockquote")
    assert explorer.page.inner_text("#edge-source blockquote") == reply.json["description"]
    assert f"image {reply.json['artifact_id']}: its description" in explorer.page.inner_text("#edge-source")


def test_clicking_an_entity_shows_its_timeline_with_the_superseded_fact(explorer, api, models):
    known = alice_and_friends(api)
    alice = next(e["id"] for e in known["first"]["entities"] if e["name"] == "Alice")
    explorer.open()
    explorer.wait_for_graph()

    explorer.click_on_canvas("entity", alice)

    explorer.page.wait_for_selector("#timeline")
    timeline = explorer.page.inner_text("#timeline")
    assert "Alice lives_in Paris superseded" in timeline
    assert f"superseded by fact {known['edges']['Alice lives_in Berlin']}" in timeline
    assert "Alice lives_in Berlin live" in timeline
    assert "chat-1" in explorer.page.inner_text("#detail dl")


def test_a_session_filter_highlights_what_the_session_touched(explorer, api, models):
    known = alice_and_friends(api)
    explorer.open()
    explorer.wait_for_graph()

    explorer.page.fill("#session", "chat-2")
    explorer.page.press("#session", "Enter")

    explorer.page.wait_for_selector("#session-artifacts")
    highlighted = explorer.page.eval_on_selector_all(
        "#edge-list button[data-session=true]", "els => els.map(e => Number(e.dataset.edgeId))"
    )
    assert highlighted == [known["edges"]["Alice lives_in Berlin"]]
    assert sorted(
        explorer.page.eval_on_selector_all(
            "#entity-list button[data-session=true]", "els => els.map(e => e.textContent)"
        )
    ) == ["Aliceperson · 3", "Berlinplace · 1"]
    assert "Alice moved to Berlin in 2024." in explorer.page.inner_text("#session-artifacts")
    explorer.page.keyboard.press("Escape")
    assert explorer.page.eval_on_selector_all("[data-session=true]", "els => els.length") == 0


def test_a_question_highlights_its_evidence_in_the_graph(explorer, api, models):
    known = alice_and_friends(api)
    remember(api, "Carol works at Globex.")
    explorer.open()
    explorer.wait_for_graph()

    explorer.page.fill("#question", "Where does Alice work?")
    explorer.page.click("#ask")

    explorer.page.wait_for_selector("#answer")
    assert explorer.page.inner_text("#answer") == "From memory."
    evidence = set(
        explorer.page.eval_on_selector_all(
            "#edge-list button[data-evidence=true]", "els => els.map(e => Number(e.dataset.edgeId))"
        )
    )
    assert known["edges"]["Alice works_at Acme"] in evidence
    assert known["edges"]["Alice lives_in Paris"] not in evidence  # superseded facts are never retrieved
    carol = explorer.page.get_attribute(
        "#edge-list button:has-text('Carol works_at Globex')", "data-evidence"
    )
    assert carol == "false"
    assert "evidence:" in explorer.page.inner_text("#highlight-bar")


def test_forgetting_a_fact_removes_it_from_the_graph_and_from_the_next_query(explorer, api, models):
    fake_anthropic, _ = models
    known = alice_and_friends(api)
    works = known["edges"]["Alice works_at Acme"]
    explorer.open()
    explorer.wait_for_graph()
    explorer.page.click(f"#edge-list [data-edge-id='{works}']")
    explorer.page.wait_for_selector("#forget-edge")

    explorer.page.click("#forget-edge")
    explorer.page.wait_for_selector("#confirm[open]")
    explorer.page.click("#confirm-cancel")  # a cancelled confirmation forgets nothing
    assert works in explorer.edge_ids()
    explorer.forget_confirmed("#forget-edge")

    assert works not in explorer.edge_ids()
    assert "1 edges" in explorer.page.inner_text("#notice")
    assert (
        api.get(f"/v1/gb/artifacts/{known['first']['artifact_id']}?user_id=u1").status == 200
    )  # its text stays
    explorer.page.fill("#question", "Where does Alice work at Acme?")
    explorer.page.press("#question", "Enter")
    explorer.page.wait_for_selector("#answer")
    assert f"[edge {works}]" not in prompt_of(fake_anthropic.messages[-1])
    assert "works_at" not in explorer.page.inner_text("#evidence-edges")


def test_forgetting_an_entity_and_a_source_text_by_keyboard_removes_them(explorer, api, models):
    known = alice_and_friends(api)
    explorer.open()
    explorer.wait_for_graph()
    bob = next(e["id"] for e in known["first"]["entities"] if e["name"] == "Bob")

    explorer.page.focus(f"#entity-list [data-entity-id='{bob}']")
    explorer.page.keyboard.press("Enter")
    explorer.page.wait_for_selector("#forget-entity")
    explorer.page.focus("#forget-entity")
    explorer.page.keyboard.press("Enter")
    explorer.page.wait_for_selector("#confirm[open]")
    explorer.page.focus("#confirm-forget")
    explorer.page.keyboard.press("Enter")
    explorer.page.wait_for_selector("#notice:has-text('Forgotten')")
    assert "Bob" not in explorer.entity_names()

    berlin = known["edges"]["Alice lives_in Berlin"]
    explorer.page.click(f"#edge-list [data-edge-id='{berlin}']")
    explorer.page.wait_for_selector("#forget-artifact")
    explorer.forget_confirmed("#forget-artifact")
    assert berlin not in explorer.edge_ids()
    assert "Berlin" not in explorer.entity_names()
    assert api.get(f"/v1/gb/artifacts/{known['second']['artifact_id']}?user_id=u1").status == 404


def test_an_empty_dataset_says_it_is_empty(explorer, api, models):
    remember(api, "The committee met again on a grey morning.", dataset="quiet")  # no fact in it

    explorer.open(dataset="quiet")

    explorer.page.wait_for_selector("#empty:has-text('is empty')")
    assert "Dataset “quiet” of user “u1” is empty" in explorer.page.inner_text("#empty")
    assert explorer.page.is_hidden("#banner")


def test_the_dataset_list_says_how_many_texts_are_still_queued_or_failed(explorer, api, models, sqs_jobs):
    from job_helpers import pump, pump_refused

    # One text a job (no window taking the texts behind along): a round leaves two queued.
    reconfigure(limits=bootstrap.bundle().limits.model_copy(update={"bulk_window_texts": 1}))
    remember(api, "Alice works at Acme.")
    texts = [{"text": f"Alice lives in {city}."} for city in ("Rome", "Oslo", "Lima")]
    assert (
        api.post("/v1/gb/remember/batch", {"user_id": "u1", "dataset": "main", "texts": texts}).status == 202
    )
    pump(sqs_jobs, rounds=1)

    explorer.open()

    option = explorer.page.wait_for_selector("#dataset option:has-text('queued')", state="attached")
    assert option.text_content() == "main (3 entities, 2 facts, 2 queued)"
    pump(sqs_jobs, rounds=1)
    pump_refused(sqs_jobs)
    explorer.open()
    option = explorer.page.wait_for_selector("#dataset option:has-text('failed')", state="attached")
    assert option.text_content() == "main (4 entities, 2 facts, 1 failed)"  # Oslo superseded Rome


def test_a_user_without_datasets_is_told_so(explorer, api):
    explorer.open(user="nobody")

    explorer.page.wait_for_selector("#empty:has-text('no datasets')")
    assert "User “nobody” has no datasets yet" in explorer.page.inner_text("#empty")


def test_a_missing_dataset_is_a_clear_404(explorer, api, models):
    alice_and_friends(api)
    explorer.expected_statuses.add(404)

    explorer.open(dataset="nope")

    explorer.page.wait_for_selector("#banner:not([hidden])")
    banner = explorer.page.inner_text("#banner-text")
    assert banner.startswith("Reading dataset “nope” of user “u1” failed. Not found (HTTP 404): ")
    assert "nope" in banner.split("HTTP 404")[1]


def test_an_unreachable_api_is_a_clear_502(browser, explorer, api):
    server, url = _serve("http://127.0.0.1:9")  # the discard port: nothing answers there
    explorer.url = url
    explorer.expected_statuses.add(502)
    try:
        explorer.open()
        explorer.page.wait_for_selector("#banner:not([hidden])")
    finally:
        server.shutdown()
        server.server_close()
    banner = explorer.page.inner_text("#banner-text")
    assert "(HTTP 502): the API at http://127.0.0.1:9 did not answer" in banner
    assert banner.startswith("Reading the datasets of user “u1” failed. The API could not be reached")


def test_the_screenshot_of_the_explorer(explorer, api, models):
    """The picture in the README: a small graph with a superseded fact, an entity's timeline."""
    remember(
        api, "Alice works at Acme. Alice lives in Paris. Alice knows Bob. Bob works at Acme.", session_id="a"
    )
    remember(
        api,
        "Carol knows Alice. Carol works at Globex. Carol lives in London. Dan knows Carol.",
        session_id="a",
    )
    remember(
        api,
        "Dan works at Initech. Dan lives in Berlin. Erin knows Dan. Erin works at Globex.",
        session_id="b",
    )
    remember(api, "Alice moved to Berlin in 2024. Bob lives in Paris. Frank knows Erin.", session_id="b")
    explorer.open()
    explorer.wait_for_graph()
    explorer.page.check("#superseded")
    explorer.page.click("#entity-list button:has-text('Alice')")
    explorer.page.wait_for_selector("#timeline")

    path = screenshot_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    explorer.page.screenshot(path=str(path))

    from PIL import Image

    with Image.open(path) as image:
        assert image.size == (1280, 800)
        assert len(image.convert("RGB").getcolors(1_000_000)) > 200  # a drawn page, not a blank one


def test_a_retrieval_only_question_highlights_what_was_retrieved_without_an_llm_call(explorer, api, models):
    fake_anthropic, _ = models
    known = alice_and_friends(api)
    explorer.open()
    explorer.wait_for_graph()
    explorer.page.wait_for_selector("#retrieval-only-label:not([hidden])")  # the API's document offers it
    calls = len(fake_anthropic.messages)

    explorer.page.check("#retrieval-only")
    explorer.page.fill("#question", "Where does Alice work?")
    explorer.page.click("#ask")

    explorer.page.wait_for_selector("#context")
    assert len(fake_anthropic.messages) == calls  # no LLM call
    retrieved = set(
        explorer.page.eval_on_selector_all(
            "#edge-list button[data-evidence=true]", "els => els.map(e => Number(e.dataset.edgeId))"
        )
    )
    assert known["edges"]["Alice works_at Acme"] in retrieved
    assert known["edges"]["Alice lives_in Paris"] not in retrieved
    assert f"[edge {known['edges']['Alice works_at Acme']}]" in explorer.page.text_content("#context pre")
    assert "No answer asked for" in explorer.page.inner_text("#answer")


def test_the_type_filter_offers_the_ontology_s_types_and_shows_only_the_chosen_one(explorer, api, models):
    register(api, dataset="main")  # people: Organization, Person, Place; worksFor, livesIn
    remember(api, "Alice works at Acme. Alice lives in Paris. Bob knows Alice. Carol knows Bob.")

    explorer.open()
    explorer.wait_for_graph()

    options = explorer.page.eval_on_selector_all("#type-filter option", "els => els.map(e => e.textContent)")
    assert options == ["all types (ontology “people”)", "organization (1)", "person (3)", "place (1)"]
    # the legend follows the ontology's order, not the graph's counts
    assert explorer.page.inner_text("#legend").splitlines()[0] == "organization (1)"
    assert explorer.entity_names() == ["Acme", "Alice", "Bob", "Carol", "Paris"]
    explorer.page.select_option("#type-filter", "person")
    assert explorer.entity_names() == ["Alice", "Bob", "Carol"]
    assert explorer.edge_ids() == set()  # knows is outside the ontology: no fact between people
    explorer.page.select_option("#type-filter", "organization")
    assert explorer.entity_names() == ["Acme"]
    explorer.page.select_option("#type-filter", "")
    assert explorer.entity_names() == ["Acme", "Alice", "Bob", "Carol", "Paris"]
    assert explorer.page.inner_text("#edge-list").splitlines() == [
        "Alice lives_in Paris",
        "Alice works_for Acme",
    ]


@pytest.mark.parametrize(("entities", "facts"), [(38, 133), (200, 600)])
def test_no_node_overlaps_another_and_no_label_covers_a_node_or_another_label(synthetic, entities, facts):
    explorer = synthetic(graph=synthetic_graph(facts, entities))

    explorer.open(user="anyone", dataset="graph")
    explorer.wait_for_graph()

    drawn = explorer.geometry()
    assert len(drawn["circles"]) == entities
    assert len(drawn["labels"]) >= 20  # names and relations are drawn, only clear of the rest
    assert overlaps(drawn) == {"circles": [], "label on circle": [], "labels": []}
    explorer.page.check("#superseded")  # more facts: bigger hubs, still in the room kept for them
    assert overlaps(explorer.geometry()) == {"circles": [], "label on circle": [], "labels": []}
    explorer.page.click("#zoom-in")
    explorer.page.click("#zoom-in")
    zoomed = explorer.geometry()
    assert overlaps(zoomed) == {"circles": [], "label on circle": [], "labels": []}
    width = explorer.page.locator("#graph").bounding_box()["width"]
    assert all(box["x"] >= 0 and box["x"] + box["w"] <= width for box in zoomed["labels"])  # whole


def test_the_same_graph_gets_the_same_picture(synthetic):
    explorer = synthetic(graph=synthetic_graph(600, 200))

    explorer.open(user="anyone", dataset="graph")
    explorer.wait_for_graph()
    first = explorer.geometry()
    explorer.open(user="anyone", dataset="graph")
    explorer.wait_for_graph()

    assert explorer.geometry() == first


def test_a_type_keeps_its_colour_whatever_else_the_dataset_holds(synthetic):
    # person is the rarer type of one dataset and the commoner of the other, among other types
    explorer = synthetic(
        places=synthetic_graph(40, 30, types=["place", "place", "place", "person"]),
        projects=synthetic_graph(40, 30, types=["person", "person", "topic", "event", "project"]),
    )

    explorer.open(user="anyone", dataset="places")
    explorer.wait_for_graph()
    in_places = explorer.swatch_colours()
    explorer.page.select_option("#dataset", "projects")
    explorer.page.wait_for_selector("#legend li:has-text('topic')")
    explorer.wait_for_graph()
    in_projects = explorer.swatch_colours()

    assert list(in_places) == ["place", "person"]
    assert next(iter(in_projects)) == "person"
    assert in_places["person"] == in_projects["person"]
    assert len(set(in_projects.values())) == 4  # the common types get colours of their own
    assert in_places["place"] != in_places["person"]


def test_the_neighbourhood_of_an_entity_shows_it_and_its_neighbours_then_the_whole_graph_again(
    explorer, api, models
):
    known = alice_and_friends(api)
    acme = next(e["id"] for e in known["first"]["entities"] if e["name"] == "Acme")
    explorer.open()
    explorer.wait_for_graph()

    explorer.page.click("#entity-list button:has-text('Bob')")
    explorer.page.click("#show-neighbourhood")

    assert explorer.entity_names() == ["Alice", "Bob"]  # 1 hop: Bob knows Alice
    assert explorer.page.inner_text("#focus-text") == "Neighbourhood of “Bob”"
    assert len(explorer.geometry()["circles"]) == 2
    explorer.page.select_option("#hops", "2")  # and what Alice is linked to (Paris is superseded)
    assert explorer.entity_names() == ["Acme", "Alice", "Berlin", "Bob"]
    assert explorer.page.inner_text("#edge-list").splitlines() == [
        "Alice lives_in Berlin",
        "Alice works_at Acme",
        "Bob knows Alice",
    ]
    explorer.page.click("#whole-graph")
    assert explorer.entity_names() == ["Acme", "Alice", "Berlin", "Bob", "Paris"]
    assert explorer.page.is_hidden("#focus-bar")

    point = explorer.page.evaluate(f"gbExplorer.screenPoint('entity', {acme})")
    explorer.page.mouse.dblclick(point["x"], point["y"])  # a double-click on a node opens its own, 1 hop

    assert explorer.entity_names() == ["Acme", "Alice"]
    assert explorer.page.inner_text("#focus-text") == "Neighbourhood of “Acme”"


def test_the_url_opens_on_the_graph_of_the_user_it_names(explorer, api, models):
    remember(api, "Alice works at Acme.", dataset="work")
    remember(api, "Bob lives in Paris. Bob knows Carol.", dataset="home")
    first = api.get("/v1/gb/datasets?user_id=u1").json["datasets"][0]["name"]
    names = {"home": ["Bob", "Carol", "Paris"], "work": ["Acme", "Alice"]}

    explorer.page.goto(explorer.url + "/?user=u1")  # no Load to press, no dataset named
    explorer.wait_for_graph()

    assert explorer.page.input_value("#user") == "u1"
    assert explorer.page.input_value("#dataset") == first
    assert explorer.entity_names() == names[first]
    assert len(explorer.geometry()["circles"]) == len(names[first])  # drawn, not only listed
    other = "work" if first == "home" else "home"
    explorer.page.goto(explorer.url + f"/?user=u1&dataset={other}")
    explorer.wait_for_graph()
    assert explorer.page.input_value("#dataset") == other
    assert explorer.entity_names() == names[other]
