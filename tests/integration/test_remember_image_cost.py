"""What an image costs: one vision call and the text pipeline's embeddings and resolve calls, the
text's SQL round trips and a few of the image's own; a repeat costs no model call and one short
read transaction."""

from __future__ import annotations

import pytest
from image_files import image_file
from remember_helpers import stages_called, use_rule_based_model
from sql_counting import counting_round_trips

from gligabao import bootstrap
from gligabao.memory.images import ImageToRemember, remember_image
from gligabao.memory.remember import TextToRemember, remember_text

# The image's own round trips: its first look for the image (BEGIN, SELECT, COMMIT) and, in the
# store, the look again under the dataset's lock (its gb_image_artifacts row travels with the COMMIT).
IMAGE_EXTRA_ROUND_TRIPS = 4


@pytest.fixture
def models(fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    return fake_anthropic, fake_openai


def measured(models, remember):
    fake_anthropic, fake_openai = models
    fake_anthropic.requests.clear()
    fake_openai.requests.clear()
    with counting_round_trips() as round_trips:
        remembered = remember()
    return remembered, round_trips.count, stages_called(fake_anthropic), len(fake_openai.embedding_requests)


def test_an_image_costs_one_vision_call_and_the_texts_round_trips_plus_its_own(db, models):
    deps = bootstrap.bundle()
    remember_text(deps, TextToRemember(user_id="u1", dataset="main", text="Alice lives in Paris."))

    text_figures = measured(
        models,
        lambda: remember_text(
            deps, TextToRemember(user_id="u1", dataset="main", text="Alice lives in Berlin.")
        ),
    )
    image = ImageToRemember(
        user_id="u1",
        dataset="main",
        media_type="image/png",
        data=image_file(),
        caption="Alice lives in Rome.",
    )
    remembered, image_trips, image_stages, embeddings = measured(models, lambda: remember_image(deps, image))

    text, text_trips, text_stages, _ = text_figures
    assert text_stages == ["extract", "resolve"] and image_stages == ["image", "resolve"]
    assert len(text.superseded) == 1
    assert embeddings == 1 and len(remembered.superseded) == 1
    assert image_trips == text_trips + IMAGE_EXTRA_ROUND_TRIPS

    repeat, repeat_trips, repeat_stages, repeat_embeddings = measured(
        models, lambda: remember_image(deps, image)
    )

    assert repeat.repeated and (repeat_stages, repeat_embeddings) == ([], 0)
    # The dataset's ontology (read before the vision call), then BEGIN, the image, its entities,
    # its facts, COMMIT.
    assert repeat_trips == 6
