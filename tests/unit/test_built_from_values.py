"""model.built_from_values: the decoder's way of building the context's records without the frozen
dataclasses' __init__ must make exactly what __init__ makes."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass, field
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gligabao.model import StoredEdge, StoredEntity, built_from_values, field_defaults

WHEN = datetime(2026, 12, 7, 9, 30, tzinfo=UTC)


@given(
    st.integers(min_value=1, max_value=2**62),
    st.text(max_size=30),
    st.text(max_size=30),
    st.none() | st.datetimes(timezones=st.just(UTC)),
    st.none() | st.text(max_size=10),
)
def test_an_edge_built_from_values_is_the_edge_init_makes(edge_id, relation, description, invalid_at, model):
    made = StoredEdge(
        edge_id, 2, 3, relation, description, None, WHEN, invalid_at, WHEN, source="Alice", model_id=model
    )
    built = built_from_values(
        StoredEdge,
        id=edge_id,
        source_id=2,
        target_id=3,
        relation=relation,
        description=description,
        artifact_id=None,
        valid_at=WHEN,
        invalid_at=invalid_at,
        created_at=WHEN,
        source="Alice",
        model_id=model,
    )
    assert built == made and hash(built) == hash(made) and repr(built) == repr(made)
    assert built.target == "" and built.expired_at is None and built.created is False  # the defaults


def test_an_entity_built_from_values_stays_frozen():
    entity = built_from_values(StoredEntity, id=1, name="Alice", type="person", description="")
    assert entity == StoredEntity(1, "Alice", "person", "")
    with pytest.raises(FrozenInstanceError):
        entity.name = "Bob"  # type: ignore[misc]


def test_a_class_with_a_default_factory_is_refused():
    @dataclass(frozen=True)
    class Holder:
        items: list[int] = field(default_factory=list)

    with pytest.raises(ValueError, match="default factory"):
        field_defaults(Holder)
