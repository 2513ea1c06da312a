"""The element-by-element JSON walk that the big-screen views are built with."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairscreen.screen_store.json_items import Element, Field, walk

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
documents = st.fixed_dictionaries(
    {"survivors": st.lists(values, max_size=6)}, optional={"other": values, "x": values}
)


def rebuilt(text: str) -> dict:
    fields, elements = {}, []
    for part in walk(text, "survivors"):
        if isinstance(part, Field):
            fields[part.name] = part.value
        else:
            assert isinstance(part, Element)
            assert json.loads(text[part.start : part.end]) == part.value
            elements.append(part.value)
    return {**fields, "survivors": elements}


@given(documents, st.sampled_from([None, 2]), st.booleans())
def test_the_walk_gives_back_the_document_and_each_elements_exact_text(doc, indent, compact):
    separators = (",", ":") if compact else None
    text = json.dumps(doc, indent=indent, separators=separators)
    assert rebuilt(text) == json.loads(text)


def test_a_document_without_the_array_is_all_fields():
    text = ' { "a" : [1, 2] , "b": {"survivors": [3]} } '
    assert [p.name for p in walk(text, "survivors") if isinstance(p, Field)] == ["a", "b"]
    assert list(walk("{}", "survivors")) == []


@pytest.mark.parametrize("broken", ['["survivors"]', '{"survivors" [1]}', '{"a": 1 "b": 2}'])
def test_a_broken_document_is_a_value_error(broken):
    with pytest.raises(ValueError):
        list(walk(broken, "survivors"))
