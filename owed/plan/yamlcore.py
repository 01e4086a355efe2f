"""The YAML 1.2 core schema on libyaml (PyYAML's C loader when present): what owed.plan.load reads YAML plans
with. Imported only when a YAML plan is parsed, so the read paths never import PyYAML.

Only `true`/`false` are booleans, `010` is not octal, dates stay strings, and mappings are `DupMapping`s that
remember repeated keys (reported as problems by owed.plan.load).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from owed.plan.walk import DupMapping

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Loader(_Base):  # type: ignore[misc, valid-type]
    pass


Loader.yaml_implicit_resolvers = {}
for _tag, _rx, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
):
    Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_rx), list(_first))


def _construct_int(loader: Any, node: Any) -> int:
    text = loader.construct_scalar(node)
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body.startswith("0o"):
        return sign * int(body[2:], 8)
    if body.startswith("0x"):
        return sign * int(body[2:], 16)
    return sign * int(body, 10)


def _construct_map(loader: Any, node: Any):
    data = DupMapping()
    yield data
    if not isinstance(node, yaml.MappingNode):
        raise yaml.constructor.ConstructorError(None, None, "expected a mapping", node.start_mark)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=False)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(None, None, "found an unhashable key", key_node.start_mark)
        value = loader.construct_object(value_node, deep=False)
        if key in data:
            data.dups.append(key)
        data[key] = value


Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
Loader.add_constructor("tag:yaml.org,2002:map", _construct_map)
